// What device and filesystem a file lives on: statfs's f_type names the filesystem, and st_dev
// is followed through /sys/dev/block (partitions to their disk, loop devices to their backing
// file, dm and md devices to the devices under them) to say what kind of storage holds it.
// Linux only: elsewhere f_type numbers other filesystems, and there is no /proc or /sys.
import * as fs from 'node:fs';
import { originalReadFileSync } from '../common/fs_originals';
import * as path from 'node:path';
import { isLinux } from '../common/platform';

/** The storage under a filesystem. 'none': the filesystem has no block device (tmpfs, proc, nfs...). */
export type DeviceKind = 'nvme' | 'ssd' | 'hdd' | 'ram' | 'zram' | 'loop' | 'virtual' | 'none' | 'unknown';

/** A block device as /sys/block describes it. */
export interface BlockDevice {
  /** MAJ:MIN of the whole disk (a partition is followed to its disk). */
  dev: string;
  /** Its name in /sys/block: 'vda', 'nvme0n1', 'loop3', 'dm-0'. */
  block: string;
  /** What kind of storage it is. */
  kind: DeviceKind;
  /** queue/rotational as the kernel reports it (virtio disks often claim to rotate). */
  rotational?: boolean;
  /** The partition the data is on, e.g. 'vda1', when it is on one. */
  partition?: string;
  /** A loop device's backing file. */
  backingFile?: string;
  /** The device and filesystem the loop device's backing file is on. */
  backing?: DeviceInfo;
  /** For dm and md devices: the devices under them (slaves/). */
  parents?: BlockDevice[];
}

/** Where a file lives: its filesystem, st_dev, and the block device under it if there is one. */
export interface DeviceInfo extends Partial<Omit<BlockDevice, 'dev' | 'kind'>> {
  /** From statfs f_type: 'ext4', 'xfs', 'btrfs', 'tmpfs', 'nfs', 'fuse', 'overlay', ... or 'unknown'. */
  filesystem: string;
  /** The storage under the filesystem: 'none' where it has no block device. */
  kind: DeviceKind;
  /** The file's st_dev as MAJ:MIN (off Linux: st_dev as a decimal number). */
  dev: string;
}

// statfs f_type values (linux/magic.h). ext2, ext3 and ext4 share one.
const filesystemMagic = new Map<number, string>([
  [0xef53, 'ext4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0xf2f52010, 'f2fs'],
  [0x2fc12fc1, 'zfs'],
  [0xca451a4e, 'bcachefs'],
  [0xe0f5e1e2, 'erofs'],
  [0x73717368, 'squashfs'],
  [0x28cd3d45, 'cramfs'],
  [0x9660, 'iso9660'],
  [0x4d44, 'vfat'],
  [0x2011bab0, 'exfat'],
  [0x3434, 'nilfs2'],
  [0x52654973, 'reiserfs'],
  [0x01021994, 'tmpfs'],
  [0x858458f6, 'ramfs'],
  [0x958458f6, 'hugetlbfs'],
  [0x6969, 'nfs'],
  [0xff534d42, 'cifs'],
  [0xfe534d42, 'smb2'],
  [0x00c36400, 'ceph'],
  [0x01021997, '9p'],
  [0x65735546, 'fuse'],
  [0x794c7630, 'overlay'],
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0xcafe4a11, 'bpf'],
  [0x50495045, 'pipefs'],
  [0x534f434b, 'sockfs'],
  [0x09041934, 'anon_inodefs'],
  [0x6e736673, 'nsfs'],
]);

/** The filesystem's name from statfs f_type; 'unknown' for a value not in the table. */
export function filesystemName(fType: number): string {
  // f_type is a signed long: magic numbers with the top bit set come back negative.
  return filesystemMagic.get(fType >>> 0) ?? 'unknown';
}

/** MAJ:MIN of a dev_t, with glibc's encoding (major(3), minor(3)). */
export function majorMinor(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & 0xfffff000n);
  const minor = (dev & 0xffn) | ((dev >> 12n) & 0xffffff00n);
  return `${major}:${minor}`;
}

function readText(file: string): string | undefined {
  try {
    return originalReadFileSync(file, 'latin1').trim();
  } catch {
    return undefined;
  }
}

function realDir(link: string): string | undefined {
  try {
    return fs.realpathSync(link);
  } catch {
    return undefined;
  }
}

// The kind a stack of devices (dm, md) adds up to: theirs when they agree; else a spinning disk
// among them sets the pace; else solid state.
function stackedKind(parents: BlockDevice[]): DeviceKind {
  if (parents.length === 0) return 'unknown';
  if (parents.every((p) => p.kind === parents[0].kind)) return parents[0].kind;
  return parents.some((p) => p.kind === 'hdd') ? 'hdd' : 'ssd';
}

/**
 * The block device whose sysfs directory is `dir` (a disk or a partition, as /sys/dev/block
 * links to it). `resolveFile` describes a loop device's backing file; `seen` stops cycles.
 */
function blockAt(dir: string, resolveFile: (file: string) => DeviceInfo | undefined, seen: Set<string>): BlockDevice | undefined {
  let disk = dir;
  let partition: string | undefined;
  // A partition's directory sits inside its disk's, and has a `partition` file (its number).
  if (fs.existsSync(path.join(dir, 'partition'))) {
    partition = path.basename(dir);
    disk = path.dirname(dir);
  }
  if (seen.has(disk)) return undefined;
  seen.add(disk);
  const block = path.basename(disk);
  const dev = readText(path.join(disk, 'dev')) ?? 'unknown';
  const rotationalText = readText(path.join(disk, 'queue', 'rotational'));
  const rotational = rotationalText === undefined ? undefined : rotationalText === '1';
  const out: BlockDevice = { dev, block, kind: 'unknown' };
  if (rotational !== undefined) out.rotational = rotational;
  if (partition !== undefined) out.partition = partition;

  let slaves: string[] = [];
  try {
    slaves = fs.readdirSync(path.join(disk, 'slaves'));
  } catch {
    // No slaves/ directory: not a stacked device.
  }
  const driver = realDir(path.join(disk, 'device', 'driver'));
  if (block.startsWith('nvme')) {
    out.kind = 'nvme';
  } else if (block.startsWith('zram')) {
    out.kind = 'zram';
  } else if (/^ram\d/.test(block) || (driver !== undefined && path.basename(driver) === 'brd')) {
    out.kind = 'ram';
  } else if (block.startsWith('loop')) {
    out.kind = 'loop';
    const backing = readText(path.join(disk, 'loop', 'backing_file'));
    if (backing !== undefined) {
      out.backingFile = backing;
      const info = resolveFile(backing);
      if (info !== undefined) out.backing = info;
    }
  } else if (slaves.length > 0) {
    const parents: BlockDevice[] = [];
    for (const name of slaves) {
      const parentDir = realDir(path.join(disk, 'slaves', name));
      const parent = parentDir === undefined ? undefined : blockAt(parentDir, resolveFile, seen);
      if (parent !== undefined) parents.push(parent);
    }
    out.parents = parents;
    out.kind = stackedKind(parents);
  } else if (/^x?vd[a-z]/.test(block) || disk.includes('/virtio') ||
             (driver !== undefined && path.basename(driver) === 'virtio_blk')) {
    // A virtual machine's disk: what is behind it (and its rotational flag) is the host's.
    out.kind = 'virtual';
  } else if (rotational !== undefined) {
    out.kind = rotational ? 'hdd' : 'ssd';
  }
  return out;
}

/** The block device numbered `majMin` as `sysfs` describes it, or undefined when it has no entry. */
export function describeBlockDevice(majMin: string, sysfs = '/sys', resolveFile: (file: string) => DeviceInfo | undefined = deviceOfFile): BlockDevice | undefined {
  const dir = realDir(path.join(sysfs, 'dev', 'block', majMin));
  return dir === undefined ? undefined : blockAt(dir, resolveFile, new Set());
}

// Octal escapes of /proc/self/mountinfo (a space is \040).
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

// The mount source of the filesystem numbered `majMin` when it is a block device: btrfs gives
// its files an anonymous st_dev (0:N) that /sys/dev/block does not know, but mountinfo names
// the device it was mounted from.
function mountSourceDevice(majMin: string): string | undefined {
  const table = readText('/proc/self/mountinfo');
  if (table === undefined) return undefined;
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    if (fields[2] !== majMin) continue;
    const dash = fields.indexOf('-');
    const source = dash > 0 ? fields[dash + 2] : undefined;
    if (source === undefined || !source.startsWith('/dev/')) return undefined;
    try {
      const st = fs.statSync(unescapeMountField(source), { bigint: true });
      return st.isBlockDevice() ? majorMinor(st.rdev) : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

// Device facts never change while a filesystem stays mounted: one look per st_dev.
const byDev = new Map<string, DeviceInfo>();

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object') deepFreeze(child as object);
  }
  return Object.freeze(value);
}

/**
 * The device of a file whose st_dev is `dev`; `file` is its path or descriptor (statfs'd through
 * /proc/self/fd/N). Throws what fs.statfsSync throws. Off Linux: filesystem and kind 'unknown'.
 */
export function deviceOf(dev: bigint, file: string | Buffer | number): DeviceInfo {
  const majMin = isLinux ? majorMinor(dev) : String(dev);
  const cached = byDev.get(majMin);
  if (cached !== undefined) return cached;
  const info: DeviceInfo = { filesystem: 'unknown', kind: 'unknown', dev: majMin };
  if (isLinux) {
    info.filesystem = filesystemName(fs.statfsSync(typeof file === 'number' ? `/proc/self/fd/${file}` : file).type);
    info.kind = 'none';
    const blockDev = majMin.startsWith('0:') ? mountSourceDevice(majMin) : majMin;
    if (blockDev !== undefined) {
      const block = describeBlockDevice(blockDev);
      // A device number that is not anonymous but that sysfs does not know (sysfs not mounted).
      if (block === undefined) info.kind = 'unknown';
      else Object.assign(info, block, { dev: majMin });
    }
  }
  byDev.set(majMin, deepFreeze(info));
  return info;
}

// A loop device's backing file, described in turn; undefined when it is gone.
function deviceOfFile(file: string): DeviceInfo | undefined {
  try {
    return deviceOf(fs.statSync(file, { bigint: true }).dev, file);
  } catch {
    return undefined;
  }
}
