// SPDX-License-Identifier: MIT
// Lookups and opens under a confinement, for what confined readers do besides whole-file reads.
#pragma once

#include <napi.h>

namespace smartread {

// statBeneath(path: string | Buffer, dirfd?: number, resolve?: number)
//   -> Float64Array [mode, size, mtimeMs, ino, dev, ctimeMs] | {errno, syscall: 'stat'}
// openat2(O_PATH) with the confinement's RESOLVE_* flags, then fstat: the path is resolved by
// the same rules as a confined read, and nothing is opened for reading (a FIFO never blocks).
Napi::Value StatBeneath(const Napi::CallbackInfo& info);

// statAt(path: string | Buffer, dirfd: number)
//   -> Float64Array (statBeneath's layout) | {errno, syscall: 'stat'}
// One fstatat(2) relative to dirfd, without confinement: for checking, cheaply, that a path a
// confined lookup resolved still names the same file (same inode, same ctime). Whatever it
// finds is only compared, never opened or read.
Napi::Value StatAt(const Napi::CallbackInfo& info);

// openBeneath(path: string | Buffer, flags: number, dirfd?: number, resolve?: number)
//   -> fd | {errno, syscall: 'open'}
// The descriptor a confined read would open (O_CLOEXEC), for positional reads the caller makes
// and closes.
Napi::Value OpenBeneath(const Napi::CallbackInfo& info);

}  // namespace smartread
