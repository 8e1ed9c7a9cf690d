// smartWriteFile and smartWriteFileSync: fs.writeFile's and fs.writeFileSync's contract, on the
// engine the strategy names, with atomic replacement and parent directories on request.
import * as fs from 'node:fs';
import { devNull } from 'node:os';
import { abortError, errnoOf, failureToError, invalidArgValue, outOfRange } from '../common/errors';
import { dataBytes, flagsAndMode, isCurrentDir, parentOf, writeCommon, writeOptions, writeTarget, type WriteData, type WriteFileOptions } from './write_args';
import { runWrites } from './write_many';
import { forgetDirs, knownDirs, syncWrites } from './write_engines';
import type { PathOrFd } from '../common/args';
import type { RawFailure } from '../common/raw';

// Node 26's fs.promises.writeFile writes data of up to one chunk (512 KiB), without flush, in
// one round trip, and that path names an invalid numeric flag 'options.flag' where open() says
// 'flags'. Whether this node does is asked of it once, on the first such error: the flag is
// refused before anything is opened.
const kOneRoundTripMax = 512 * 1024;
const ENOENT = errnoOf('ENOENT');
const ENOTDIR = errnoOf('ENOTDIR');
let optionsFlagNamed: Promise<boolean> | undefined;

function nodeNamesOptionsFlag(): Promise<boolean> {
  return optionsFlagNamed ??= fs.promises.writeFile(devNull, '', { flag: 0.5 as unknown as string })
    .then(() => false, (err: Error) => err.message.includes('"options.flag"'));
}

async function asNodeNamesFlag(err: unknown, flag: unknown, flush: boolean, bytes: Uint8Array): Promise<unknown> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'ERR_OUT_OF_RANGE' || typeof flag !== 'number' || flush || bytes.length > kOneRoundTripMax) return err;
  if (!await nodeNamesOptionsFlag()) return err;
  const range = Number.isInteger(flag) ? '>= -2147483648 && <= 2147483647' : 'an integer';
  return outOfRange('options.flag', range, flag, smartWriteFile);
}

const isUtf8 = (encoding: string) => encoding === 'utf8' || encoding === 'utf-8';

function fdRefusesAtomic(caller: Function) {
  return invalidArgValue('options.atomic', true, 'cannot be used with a file descriptor (it replaces a file by its name)', caller);
}

/**
 * The counterpart of fs.promises.writeFile (and of fs.writeFile, as it also takes an fd):
 * the same arguments, results and errors, for string and byte data. Iterables and streams are
 * not taken (fs.writeFile's rules). With `atomic`, readers see the old file or the whole new
 * one, never a part; with `mkdirs`, the parent directories are made first.
 *
 * @param path - The file (string, Buffer or file: URL), or an open fd.
 * @param data - A string (in the encoding), a Buffer, a TypedArray or a DataView.
 * @param options - The encoding, or {@link WriteFileOptions}.
 * @returns Nothing, once the file is written (and, with `flush`, on the disk).
 */
export async function smartWriteFile(path: PathOrFd, data: WriteData, options?: WriteFileOptions | BufferEncoding | null): Promise<void> {
  const validated = writeOptions(options, smartWriteFile);
  const bytes = dataBytes(data, validated.encoding, 'data', smartWriteFile);
  // As fs.promises.writeFile: an aborted signal wins over an invalid path or flag.
  if (validated.signal?.aborted) throw abortError(validated.signal, smartWriteFile);
  const target = writeTarget(path, smartWriteFile);
  let flagsMode: { flags: number; mode: number };
  try {
    flagsMode = flagsAndMode(validated.flag, validated.raw, smartWriteFile);
  } catch (err) {
    throw await asNodeNamesFlag(err, validated.flag, validated.flush, bytes);
  }
  const common = writeCommon(validated, flagsMode.flags, flagsMode.mode, smartWriteFile);
  try {
    if (typeof target === 'number' && common.atomic !== 0) throw fdRefusesAtomic(smartWriteFile);
    // A root resolves paths only: an fd is already open.
    const [error] = await runWrites(typeof target === 'number' ? { ...common, root: undefined } : common,
      [{ target, bytes, mode: common.mode, path }], 1, false, smartWriteFile);
    if (error) throw error;
  } finally {
    if (common.ownsRoot) common.root!.release();
  }
}

/**
 * The counterpart of fs.writeFileSync, on the calling thread, with `atomic` and `mkdirs` as
 * smartWriteFile's.
 *
 * @param path - The file (string, Buffer or file: URL), or an open fd.
 * @param data - A string (in the encoding), a Buffer, a TypedArray or a DataView.
 * @param options - The encoding, or {@link WriteFileOptions} without the asynchronous ones.
 */
export function smartWriteFileSync(path: PathOrFd, data: WriteData, options?: Omit<WriteFileOptions, 'signal' | 'strategy'> | BufferEncoding | null): void {
  const validated = writeOptions(options, smartWriteFileSync);
  const bytes = dataBytes(data, validated.encoding, 'data', smartWriteFileSync);
  const target = writeTarget(path, smartWriteFileSync);
  const { flags, mode } = flagsAndMode(validated.flag, validated.raw, smartWriteFileSync);
  // The calling thread is the engine: a strategy has nothing to choose.
  const common = writeCommon({ ...validated, raw: { ...validated.raw, strategy: 'sync' } }, flags, mode, smartWriteFileSync);
  const root = typeof target === 'number' ? undefined : common.root;
  const endUse = root?.use();
  try {
    if (typeof target === 'number' && common.atomic !== 0) throw fdRefusesAtomic(smartWriteFileSync);
    const dir = common.mkdirs && typeof target !== 'number' && !isCurrentDir(parentOf(target)) ? parentOf(target) : null;
    const makeParent = () => {
      const made = syncWrites.mkdirAllSync(dir!, common.dirMode, false, root?.confine);
      if (made !== undefined && typeof made !== 'string') {
        const err = failureToError(made, dir!, dir!, smartWriteFileSync, true);
        throw root ? root.explainError(err, dir) : err;
      }
    };
    // A parent the environment knows is taken as there, as writeMany takes it; a write that
    // finds it gone (ENOENT) or no longer a directory (ENOTDIR) makes it and writes again.
    const trusted = dir !== null && !root && knownDirs([dir])[0] === 1;
    if (dir !== null && !trusted) makeParent();
    const write = () => syncWrites.writeFileSync(target, bytes, flags, common.mode, common.flush, common.atomic, root?.confine);
    let failure: RawFailure | undefined = write();
    if (failure && trusted && failure.syscall === 'open' && (failure.errno === ENOENT || failure.errno === ENOTDIR)) {
      forgetDirs([dir!]);
      makeParent();
      failure = write();
    }
    if (failure) {
      const err = failureToError(failure, path, target, smartWriteFileSync, failure.syscall === 'rename');
      // fs.writeFileSync writes anything but a utf8 string with fs.writeSync, whose errors node
      // builds in JS, with their keys in another order: errno, syscall, code.
      if (failure.syscall === 'write' && !(typeof data === 'string' && isUtf8(common.encoding))) {
        const { code } = err as NodeJS.ErrnoException;
        delete (err as { code?: string }).code;
        (err as NodeJS.ErrnoException).code = code;
      }
      throw root ? root.explainError(err, path) : err;
    }
  } finally {
    endUse?.();
    if (common.ownsRoot) common.root!.release();
  }
}
