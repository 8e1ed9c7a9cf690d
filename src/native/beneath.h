// SPDX-License-Identifier: MIT
// A file's metadata looked up under a confinement, so that confined readers can stat safely.
#pragma once

#include <napi.h>

namespace smartread {

// statBeneath(path: string | Buffer, dirfd?: number, resolve?: number)
//   -> Float64Array [mode, size, mtimeMs, ino, dev] | {errno, syscall: 'stat'}
// openat2(O_PATH) with the confinement's RESOLVE_* flags, then fstat: the path is resolved by
// the same rules as a confined read, and nothing is opened for reading (a FIFO never blocks).
Napi::Value StatBeneath(const Napi::CallbackInfo& info);

}  // namespace smartread
