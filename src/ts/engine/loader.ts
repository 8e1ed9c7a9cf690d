// The loader: finds the addon (the prebuilds that fit, then build/Release, then build/Debug),
// sets it up, and says what it tried and why the pure-JS engine reads instead when none loads.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hugePageAdvice, type HugePageAdvice } from './huge_pages';
import { maxReadLength } from '../common/limits';
import { isLinux, libc, platform } from '../common/platform';
import { defaultBlockPoolFrom } from './tuning';
import type { NativeBinding } from './native';

export interface LoadReport {
  /** 'native' when the addon is in use, 'js' for the pure-JS engine over node:fs. */
  engine: 'native' | 'js';
  /** The addon file that was loaded. */
  path?: string;
  /** Whether the loaded addon was built with liburing. */
  liburing: boolean;
  /** Why the pure-JS engine is in use. */
  reason?: string;
  /** Every place looked at, with what happened there. */
  tried: string[];
  /** Whether large destinations are advised MADV_HUGEPAGE, and why. */
  hugePages: HugePageAdvice;
}

const packageRoot = path.resolve(__dirname, '..', '..');

/** A file to try, or a place with none to try and why (said in the report). */
type Candidate = { file: string } | { skipped: string };

// Why a prebuild named as prebuildify names them (`smartread[.tag...].node`; with --napi
// --tag-libc the tag is glibc or musl) cannot load here, or null if it may.
function prebuildMismatch(name: string): string | null {
  for (const tag of name.split('.').slice(1, -1)) {
    if (tag === 'glibc' || tag === 'musl') {
      if (tag !== libc()) return `built for ${tag}, this node runs on ${libc()}`;
    } else if (tag !== 'napi') {
      return `a tag this loader does not know: ${tag}`;
    }
  }
  return null;
}

/**
 * The prebuilt addons for this platform, architecture and C library, as `npm run prebuild`
 * (prebuildify --napi --tag-libc) lays them out: prebuilds/linux-x64/smartread.glibc.node,
 * prebuilds/linux-arm64/smartread.glibc.node.
 */
export function prebuildCandidates(): Candidate[] {
  const dir = path.join(packageRoot, 'prebuilds', `${platform}-${process.arch}`);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => /^smartread(\.[a-z0-9]+)*\.node$/.test(name));
  } catch {
    return [{ skipped: `${dir}: no prebuilt addon for ${platform}-${process.arch}` }];
  }
  if (names.length === 0) return [{ skipped: `${dir}: no prebuilt addon for ${platform}-${process.arch}` }];
  // What cannot fit is said first (the loader stops at the first file that loads); then the
  // rest, tagged files before untagged ones.
  const specificity = (name: string) => name.split('.').length;
  const fitting: Candidate[] = [];
  const skipped: Candidate[] = [];
  for (const name of names.sort((a, b) => specificity(b) - specificity(a) || a.localeCompare(b))) {
    const file = path.join(dir, name);
    const mismatch = prebuildMismatch(name);
    if (mismatch === null) fitting.push({ file });
    else skipped.push({ skipped: `${file}: ${mismatch}` });
  }
  return [...skipped, ...fitting];
}

function candidates(): Candidate[] {
  return [
    ...prebuildCandidates(),
    { file: path.join(packageRoot, 'build', 'Release', 'smartread.node') },
    { file: path.join(packageRoot, 'build', 'Debug', 'smartread.node') },
  ];
}

function loadFailureText(report: LoadReport): string {
  if (!isLinux) return `smartread: no native addon here: ${report.reason}.`;
  return [
    'smartread: no native addon could be loaded.',
    ...report.tried.map((line) => `  - ${line}`),
    'Build it with `npm run build:native` (needs a C++ toolchain; liburing-dev for io_uring),',
    'or unset SMARTREAD_REQUIRE_NATIVE to run on the pure-JS engine.',
  ].join('\n');
}

/** Why the addon cannot run on this platform at all, or null on Linux. */
export function platformWithoutAddon(): string | null {
  return isLinux ? null : `the native addon is for Linux only (io_uring, openat2, preadv2); on ${platform} smartread reads through node:fs`;
}

/**
 * Loads the addon: prebuilds/ first (the ones that fit), then build/Release, then build/Debug.
 * A file that is missing is skipped; one that exists but fails to load is reported and the next is tried.
 * With none, with SMARTREAD_FORCE_JS=1, or off Linux (where no file is tried), returns no binding
 * and says why; with SMARTREAD_REQUIRE_NATIVE=1 that is an error listing what was tried.
 */
export function loadNative(): { binding: NativeBinding | null; report: LoadReport } {
  const report: LoadReport = {
    engine: 'js', liburing: false, tried: [], hugePages: { advised: false, reason: 'the pure-JS engine reads into the Buffers node:fs allocates' },
  };
  if (process.env.SMARTREAD_FORCE_JS === '1') {
    report.reason = 'SMARTREAD_FORCE_JS=1';
    return { binding: null, report };
  }
  const offPlatform = platformWithoutAddon();
  // Bun's Node-API has no libuv loop (uv_poll, uv_timer, uv_available_parallelism): it aborts
  // the whole process where an addon calls one, which no catch here could stop.
  const bun = process.versions.bun;
  for (const candidate of bun === undefined && offPlatform === null ? candidates() : []) {
    if ('skipped' in candidate) {
      report.tried.push(candidate.skipped);
      continue;
    }
    const { file } = candidate;
    if (!fs.existsSync(file)) {
      report.tried.push(`${file}: not found`);
      continue;
    }
    try {
      const binding = require(file) as NativeBinding;
      const hugePages = hugePageAdvice();
      binding.setup({ maxLength: maxReadLength, hugePages: hugePages.advised, blockPoolFrom: defaultBlockPoolFrom() });
      report.tried.push(`${file}: loaded`);
      return {
        binding,
        report: { ...report, engine: 'native', path: file, liburing: binding.features.liburing, hugePages },
      };
    } catch (err) {
      report.tried.push(`${file}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  report.reason = offPlatform ?? (bun === undefined
    ? 'no native addon could be loaded'
    : `Bun ${bun}: its Node-API lacks the libuv functions the addon uses`);
  if (process.env.SMARTREAD_REQUIRE_NATIVE === '1') throw new Error(loadFailureText(report));
  return { binding: null, report };
}
