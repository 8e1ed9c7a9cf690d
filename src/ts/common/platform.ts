// The platform smartread acts for, and the C library this process runs on: the loader picks a
// prebuilt addon by them, and the pure-JS engine keeps Linux's ways (/proc, /sys, statfs magic
// numbers, '/' as the only separator) to Linux.
import * as fs from 'node:fs';
import * as path from 'node:path';

const platforms: readonly NodeJS.Platform[] = ['aix', 'android', 'cygwin', 'darwin', 'freebsd', 'haiku', 'linux', 'netbsd', 'openbsd', 'sunos', 'win32'];

/**
 * Test-only: SMARTREAD_TEST_PLATFORM=darwin (or win32, or another of Node's platform names)
 * makes smartread take the branches it takes there (the loader, the install script, the JS
 * engine's paths and explain()), so that CI on Linux runs them. Node itself, node:fs and the
 * kernel stay Linux's. Not for production use (see docs/RELIABILITY.md).
 */
function testPlatform(): NodeJS.Platform | undefined {
  const value = process.env.SMARTREAD_TEST_PLATFORM as NodeJS.Platform | undefined;
  return value !== undefined && platforms.includes(value) ? value : undefined;
}

/** The platform smartread acts for: process.platform, unless a test says otherwise. */
export const platform: NodeJS.Platform = testPlatform() ?? process.platform;

/** Whether the addon can run here at all: its engines are Linux syscalls (io_uring, openat2, preadv2). */
export const isLinux = platform === 'linux';

/**
 * An open flag of node:fs's that Windows lacks (fs.constants has none of these there): 0 on
 * Windows, so that the flags smartread opens with are the ones that platform takes.
 */
export function posixOpenFlag(name: 'O_NONBLOCK' | 'O_DIRECTORY' | 'O_NOFOLLOW'): number {
  return platform === 'win32' ? 0 : fs.constants[name] ?? 0;
}

/** node:path for this platform's paths: path.win32 on Windows ('\\' and drive letters), else path.posix. */
export const platformPath: path.PlatformPath = platform === 'win32' ? path.win32 : path.posix;

// ELF: the program header table, and the entry that names the program's interpreter.
const PT_INTERP = 3;
const kHeaderBytes = 4096;

/**
 * The dynamic loader named by an ELF executable's PT_INTERP entry (/lib64/ld-linux-x86-64.so.2
 * for glibc, /lib/ld-musl-x86_64.so.1 for musl), or undefined when the file has none, is not
 * ELF, or keeps it past its first 4 KiB (linkers put the program headers and the interpreter's
 * name right after the ELF header).
 */
export function elfInterpreter(file: string): string | undefined {
  let head: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      head = Buffer.alloc(kHeaderBytes);
      head = head.subarray(0, fs.readSync(fd, head, 0, kHeaderBytes, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (head.length < 52 || head.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const is64 = head[4] === 2;
  const le = head[5] === 1;
  const u16 = (at: number) => (le ? head.readUInt16LE(at) : head.readUInt16BE(at));
  const u32 = (at: number) => (le ? head.readUInt32LE(at) : head.readUInt32BE(at));
  const word = (at: number) => (is64 ? Number(le ? head.readBigUInt64LE(at) : head.readBigUInt64BE(at)) : u32(at));
  const phoff = word(is64 ? 0x20 : 0x1c);
  const phentsize = u16(is64 ? 0x36 : 0x2a);
  const phnum = u16(is64 ? 0x38 : 0x2c);
  for (let i = 0; i < phnum; i++) {
    const entry = phoff + i * phentsize;
    if (entry + phentsize > head.length) return undefined;
    if (u32(entry) !== PT_INTERP) continue;
    const offset = word(entry + (is64 ? 0x08 : 0x04));
    const size = word(entry + (is64 ? 0x20 : 0x10));
    if (offset + size > head.length) return undefined;
    return head.toString('latin1', offset, offset + size).replace(/\0+$/, '');
  }
  return undefined;
}

let detectedLibc: 'glibc' | 'musl' | undefined;

/**
 * The C library of this process on Linux. What matters is the one node runs with (a musl node
 * can run on a glibc system, beside its own loader), so it is read from node's own ELF
 * interpreter, which costs a read of its first 4 KiB; process.report's header (glibc builds
 * of node report glibcVersionRuntime) answers where there is no interpreter to read, at ~4 ms.
 */
export function libc(): 'glibc' | 'musl' {
  if (detectedLibc === undefined) {
    const interpreter = elfInterpreter(process.execPath);
    if (interpreter !== undefined) {
      detectedLibc = /musl/.test(interpreter) ? 'musl' : 'glibc';
    } else {
      const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
      detectedLibc = header?.glibcVersionRuntime === undefined ? 'musl' : 'glibc';
    }
  }
  return detectedLibc;
}
