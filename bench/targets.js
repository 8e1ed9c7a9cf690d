// The targets: directories the trials write their files into, each on some device and
// filesystem. A target is described by the mount that holds its real path.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** os.tmpdir() (the disk here), and /dev/shm (memory) where it exists. */
function defaultTargetDirs() {
  const dirs = [os.tmpdir()];
  if (fs.existsSync('/dev/shm')) dirs.push('/dev/shm');
  return dirs;
}

// /proc/self/mounts writes space, tab, newline and backslash in paths as octal escapes.
function unescapeMountField(field) {
  return field.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
}

function readMounts() {
  try {
    return fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').filter(Boolean).map((line) => {
      const [source, mountPoint, fsType] = line.split(' ').map(unescapeMountField);
      return { source, mountPoint, fsType };
    });
  } catch {
    return [];
  }
}

// dev_t's encoding (glibc's major()/minor()): 12 + 20 bits of major, 8 + 12 + 12 of minor.
function majorMinor(dev) {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn & 0xffffffffn);
  return [Number(major), Number(minor)];
}

const readSysfs = (file) => {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
};

/**
 * The block device that holds `realpath`, from sysfs: { kind, name, majorMinor, rotational,
 * backingFile? } (backingFile: a loop device's), or { kind: 'no block device' } for tmpfs,
 * overlay and other filesystems without one. A partition is described by its disk's queue.
 */
function describeDevice(realpath) {
  const [major, minor] = majorMinor(fs.statSync(realpath, { bigint: true }).dev);
  const sysDir = `/sys/dev/block/${major}:${minor}`;
  let dir;
  try {
    dir = fs.realpathSync(sysDir);
  } catch {
    return { kind: 'no block device', name: null, majorMinor: `${major}:${minor}`, rotational: null };
  }
  const name = path.basename(dir);
  const disk = fs.existsSync(path.join(dir, 'partition')) ? path.dirname(dir) : dir;
  const rotational = readSysfs(path.join(disk, 'queue', 'rotational'));
  const diskName = path.basename(disk);
  const kind = diskName.startsWith('zram') ? 'RAM block device (zram)'
    : diskName.startsWith('loop') ? 'loop device'
      : diskName.startsWith('nvme') ? 'NVMe disk'
        : diskName.startsWith('vd') ? 'virtio disk'
          : 'block device';
  const device = { kind, name, majorMinor: `${major}:${minor}`, rotational: rotational === null ? null : rotational === '1' };
  const backingFile = readSysfs(path.join(disk, 'loop', 'backing_file'));
  if (backingFile) {
    device.backingFile = backingFile;
    device.directIo = readSysfs(path.join(disk, 'loop', 'dio')) === '1';
  }
  return device;
}

function isUnder(file, dir) {
  return dir === '/' || file === dir || file.startsWith(`${dir}/`);
}

/**
 * { dir, realpath, fsType, mountPoint, source, device, label, emulated, readBps, readIops } for a directory: the mount with the longest
 * mount point that contains its real path; of mounts stacked on the same point, the last
 * (the visible one). Throws when the directory does not exist.
 */
function describeTarget(dir) {
  const realpath = fs.realpathSync(dir);
  if (!fs.statSync(realpath).isDirectory()) throw new Error(`not a directory: ${dir}`);
  let best = null;
  for (const mount of readMounts()) {
    if (isUnder(realpath, mount.mountPoint) && (!best || mount.mountPoint.length >= best.mountPoint.length)) {
      best = mount;
    }
  }
  return {
    dir,
    realpath,
    fsType: best ? best.fsType : 'unknown',
    mountPoint: best ? best.mountPoint : null,
    source: best ? best.source : null,
    device: describeDevice(realpath),
    // Set for the targets of --devices (deviceTargets).
    label: null,
    emulated: false,
    readBps: null,
    readIops: null,
  };
}

/**
 * The targets that scripts/devices/with-devices.sh set up, from the list it wrote (`file`):
 * [{ dir, label, emulated, readBps, readIops }], limits null when reads are not throttled.
 */
function deviceTargets(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [dir, label, emulated, readBps, readIops] = line.split('\t');
    return {
      dir,
      label,
      emulated: emulated === '1',
      readBps: Number(readBps) || null,
      readIops: Number(readIops) || null,
    };
  });
}

module.exports = { defaultTargetDirs, describeTarget, deviceTargets, readMounts };
