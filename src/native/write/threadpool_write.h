// SPDX-License-Identifier: MIT
// The thread-pool engine for writes: runs of whole-file writes and of mkdir -p on libuv's pool,
// for where io_uring is unavailable (and for confined writes).
#pragma once

#include <napi.h>

#include <memory>

#include "known_dirs.h"

namespace smartread {

// threadpoolWriteFiles(targets: Array<string | Buffer | fd>, datas: Array<Uint8Array>,
//                      modes: Uint32Array, flags, flush, atomic, rootFd?, resolve?)
//   -> Promise<undefined | Array<undefined | {errno, syscall}>>
// One job writes every file of the run in turn (WriteWholeFile), on one pool thread: the caller
// runs several at once. Undefined when every write succeeded. The datas are held until the job
// is done.
Napi::Value ThreadpoolWriteFiles(const Napi::CallbackInfo& info);

// threadpoolMkdirMany(paths: Array<string | Buffer>, mode, rootFd?, resolve?)
//   -> Promise<Array<first directory made's byte length | -1 | {errno, syscall: 'mkdir', at}>>
// MkdirAll for each path in turn on one pool thread, sharing what the environment knows, with
// the errors of node's asynchronous walk (its callers are fs.mkdir's counterparts); `at` is the
// byte length of the level it failed at, which that walk's errors name.
Napi::Value ThreadpoolMkdirMany(const Napi::CallbackInfo& info, const std::shared_ptr<KnownDirs>& known);

}  // namespace smartread
