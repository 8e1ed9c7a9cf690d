// Whether large read destinations are advised MADV_HUGEPAGE on this machine.
//
// Huge pages fault a destination in 2 MiB at a time instead of 4 KiB (a fresh 128 MiB Buffer
// fills about twice as fast). But on a VM whose balloon reports free pages to the host
// (virtio-balloon's VIRTIO_BALLOON_F_REPORTING), every free 2 MiB block is handed back to the
// host within seconds, and the first touch of such a block costs a host fault per 4 KiB page.
// Huge pages are made of exactly those blocks: measured on such a VM, the first 128 MiB reads
// after a pause of a few seconds took 127-307 ms with huge pages, against 25 ms back to back,
// while small pages (mostly from free lists that are not reported) took 37-41 ms either way. So
// smartread advises them only where no free page reporting is seen.
import * as fs from 'node:fs';
import { originalReadFileSync } from '../common/fs_originals';
import * as path from 'node:path';

/** Whether large destinations are advised huge pages here (engineInfo().hugePages), and why. */
export interface HugePageAdvice {
  /** Whether destinations of 32 MiB and more are advised MADV_HUGEPAGE. */
  advised: boolean;
  /** Why, in words. */
  reason: string;
}

const VIRTIO_ID_BALLOON = '0x0005';
// The feature bit a virtio-balloon device negotiates for free page reporting.
const VIRTIO_BALLOON_F_REPORTING = 5;

function readText(file: string): string | null {
  try {
    return originalReadFileSync(file, 'latin1').trim();
  } catch {
    return null;
  }
}

/**
 * The name of a virtio device (under sysfs/bus/virtio/devices) that is a balloon reporting free
 * pages to the host, or null when there is none. `features` lists the negotiated feature bits as
 * '0'/'1' characters, bit 0 first.
 */
export function freePageReportingDevice(sysfs = '/sys'): string | null {
  const devices = path.join(sysfs, 'bus', 'virtio', 'devices');
  let names: string[];
  try {
    names = fs.readdirSync(devices).sort();
  } catch {
    return null;
  }
  for (const name of names) {
    if (readText(path.join(devices, name, 'device')) !== VIRTIO_ID_BALLOON) continue;
    if (readText(path.join(devices, name, 'features'))?.[VIRTIO_BALLOON_F_REPORTING] === '1') return name;
  }
  return null;
}

/**
 * What smartread does with large destinations here. SMARTREAD_HUGE_PAGES=1 advises huge pages
 * whatever the machine (a process that reads large files back to back gains from them even where
 * free pages are reported); SMARTREAD_HUGE_PAGES=0 never does.
 */
export function hugePageAdvice(env: NodeJS.ProcessEnv = process.env, sysfs = '/sys'): HugePageAdvice {
  const forced = env.SMARTREAD_HUGE_PAGES;
  if (forced === '1') return { advised: true, reason: 'SMARTREAD_HUGE_PAGES=1' };
  if (forced === '0') return { advised: false, reason: 'SMARTREAD_HUGE_PAGES=0' };
  const thp = readText(path.join(sysfs, 'kernel', 'mm', 'transparent_hugepage', 'enabled'));
  const mode = thp === null ? null : /\[(\w+)\]/.exec(thp)?.[1] ?? null;
  if (mode === null) return { advised: false, reason: 'this kernel has no transparent huge pages' };
  if (mode === 'never') return { advised: false, reason: "transparent huge pages are off ('never')" };
  const device = freePageReportingDevice(sysfs);
  if (device !== null) {
    return {
      advised: false,
      reason: `free page reporting (${device}, virtio-balloon) hands free 2 MiB blocks back to the host, ` +
        'and a huge page made of one costs a host fault per 4 KiB page when first touched',
    };
  }
  return { advised: true, reason: `transparent huge pages: '${mode}'` };
}
