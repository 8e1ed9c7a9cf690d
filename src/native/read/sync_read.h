// SPDX-License-Identifier: MIT
// Whole-file reads on the calling thread: open, fstat, read to the end, close, in one call.
#pragma once

#include <napi.h>

#include "../common/args.h"
#include "../common/errors.h"
#include "instance.h"

namespace smartread {

// Where a small result may go: the instance's pool at `offset`, or nowhere (offset < 0).
struct PoolSlot {
  int64_t offset = -1;
};

// Reads fd from its current position: up to its size for a regular file with a size, else to
// EOF. With stat_first false it does not fstat (node:fs's utf8 reader does not either); own_fd
// says the fd was opened for this read, so its position need not be honoured.
// On success sets *out to a Buffer, or to the byte count when the file was small enough to be
// read into the pool slot; a kJsException failure means an exception is pending.
// `regular_size`, where given, is set to the size of a regular file with one (else left), and
// `regular_dev` to its device.
Failure ReadWholeFd(napi_env env, Instance& instance, int fd, bool own_fd, bool stat_first,
                    PoolSlot pool, napi_value* out, uint64_t* regular_size = nullptr,
                    dev_t* regular_dev = nullptr);

// readFileSync(target: string | Buffer | fd, flags: number, statUserFd: boolean,
//              poolOffset: number)
//   -> Buffer | bytes read into the pool at poolOffset | {errno, syscall} | {errno: 0, reason}
// A regular file of at most Instance::kPooledMax bytes that fits in the pool after poolOffset
// (-1: do not pool) is read there; the caller returns a view of the pool.
// A user fd is read from its position and left open; a path is opened with O_CLOEXEC and
// closed before returning. A path read before as a small regular file is read without fstat
// (ReadAsBefore, file_io.h).
Napi::Value ReadFileSync(const Napi::CallbackInfo& info, Instance& instance);

}  // namespace smartread
