// SPDX-License-Identifier: MIT
// Whole-file writes on the calling thread: open, write all, fsync if asked, close; or a
// temporary file beside the target, renamed over it.
#pragma once

#include <napi.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../common/args.h"
#include "../common/errors.h"
#include "../common/file_io.h"

namespace smartread {

// How a write replaces its target: in place (open with the caller's flags), or atomically (a
// temporary file renamed over the target, replacing it or, as the flag 'wx' asks, only where
// nothing has that name yet).
enum class Atomic : uint8_t { kNone = 0, kReplace = 1, kNoReplace = 2 };

struct WriteRequest {
  ReadTarget target;  // a path, or a user's fd (written at its position, left open)
  const uint8_t* data = nullptr;
  size_t length = 0;
  int flags = 0;
  mode_t mode = 0666;
  bool flush = false;
  Atomic atomic = Atomic::kNone;
  Confinement confinement;
  // A byte the JS thread sets (to non-zero) to stop the write where it still can: before it
  // opens anything, and before an atomic write's rename, which then unlinks its temporary file
  // and fails with ECANCELED. Null where nobody can stop it (the calling thread's writes).
  const uint8_t* stop = nullptr;
};

// The name of the temporary file an atomic write of `path` goes through: in the same directory,
// `.NAME.smartread-XXXXXXXXXXXX.tmp` (NAME cut short where the whole would pass NAME_MAX), so
// that one left behind by a killed process is recognisable. Empty when the path names no file
// that could be replaced (it ends in '/', '.' or '..').
std::string TemporaryName(const std::string& path);

// The syscall that node:fs would name for a failed rename of an atomic write: 'open' for a
// target that exists where 'wx' wants none (EEXIST) and for a directory there (EISDIR), as a
// write in place fails; 'rename' otherwise.
Syscall RenameFailureSyscall(int err);

// Writes the request on the calling thread. A failure names the syscall that node:fs would
// report: 'open' (also for an atomic write's temporary file, see RenameFailureSyscall), 'write',
// 'fsync', 'close', 'rename'. An atomic write that fails removes its
// temporary file; so does one whose rename fails. One stopped (request.stop) fails with
// ECANCELED, named 'write'.
Failure WriteWholeFile(const WriteRequest& request);

// A write's target from JS (a string, a Buffer's bytes, or an fd), in raw N-API: these are read
// from arrays while a worker may be terminating, when a failed call must only fail the batch
// (node-addon-api would turn it into a fatal error). False when it cannot be read.
bool WriteTargetFromJs(napi_env env, napi_value value, ReadTarget* target);

// A boolean argument, in raw N-API (as above; coercion would need to call into JS): false for
// anything but true.
bool BoolArg(napi_env env, napi_value value);

// The length of a JS array and its elements, in raw N-API (as above).
bool ArrayLength(napi_env env, napi_value array, uint32_t* length);
bool ArrayElement(napi_env env, napi_value array, uint32_t index, napi_value* element);

// The request from JS arguments info[index..]: target (string | Buffer | fd), data (a
// Uint8Array), flags, mode, flush, atomic (0, 1, 2), rootFd?, resolve?. False with a pending
// exception when the target or the data cannot be read.
bool WriteRequestFromJs(const Napi::CallbackInfo& info, size_t index, WriteRequest* request);

// writeFileSync(target, data, flags, mode, flush, atomic, rootFd?, resolve?)
//   -> undefined | {errno, syscall} | {errno: 0, reason: 'null-bytes'}
Napi::Value WriteFileSync(const Napi::CallbackInfo& info);

}  // namespace smartread
