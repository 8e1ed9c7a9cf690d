// SPDX-License-Identifier: MIT
// The thread-pool engine: whole-file reads on libuv's pool, for where io_uring is unavailable.
#pragma once

#include <napi.h>

#include "instance.h"

namespace smartread {

// threadpoolRead(target: string | Buffer | fd, flags: number, statUserFd: boolean)
//   -> Promise<Buffer | {errno, syscall} | {errno: 0, reason, size?}>
// The same contract as readFileSync, done by a Napi::AsyncWorker: open, fstat, read and close
// run on a pool thread into native memory; the Buffer is made on the JS thread when it is done.
Napi::Value ThreadpoolRead(const Napi::CallbackInfo& info, Instance& instance);

}  // namespace smartread
