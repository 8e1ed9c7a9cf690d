// SPDX-License-Identifier: MIT
// Positional reads into the caller's memory: on the calling thread, or on libuv's pool.
#pragma once

#include <napi.h>

namespace smartread {

// readIntoSync(target: string | Buffer | fd, view: ArrayBufferView, offset: number,
//              length: number, position: number)
//   -> bytes read | {errno, syscall} | {errno: 0, reason: 'null-bytes'}
// Arguments are validated in TS (offset + length within the view). An fd gets one read(2) at
// its position when position is -1, else one pread(2), as fs.readSync. A path is opened
// (O_RDONLY | O_CLOEXEC), read with pread from `position` until `length` bytes or EOF, closed.
Napi::Value ReadIntoSync(const Napi::CallbackInfo& info);

// readIntoAsync(same arguments) -> Promise<bytes read | failure>
// The same read on a thread of libuv's pool; the view is held until the read is done.
Napi::Value ReadIntoAsync(const Napi::CallbackInfo& info);

// adviseRandom(fd) -> undefined | {errno, syscall}
// posix_fadvise(POSIX_FADV_RANDOM) on the open file: no readahead for its reads, which would
// otherwise turn each cold 4 KiB read into a read of up to 128 KiB.
Napi::Value AdviseRandom(const Napi::CallbackInfo& info);

}  // namespace smartread
