// SPDX-License-Identifier: MIT
// Readahead for files about to be read, started on one pool thread for a whole list.
#pragma once

#include <napi.h>

namespace smartread {

// prefetch(paths: Array<string | Buffer>)
//   -> Promise<{ started: number, failures: Array<{ index, errno, syscall }> }>
// On one thread of libuv's pool: each path is opened (nonblocking, so that a FIFO never waits),
// and a regular file gets posix_fadvise(WILLNEED), which queues its reads and returns; other
// kinds are skipped. Every descriptor is closed before the promise settles.
Napi::Value Prefetch(const Napi::CallbackInfo& info);

}  // namespace smartread
