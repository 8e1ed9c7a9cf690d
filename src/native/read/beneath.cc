// SPDX-License-Identifier: MIT
// Lookups and opens under a confinement, for what confined readers do besides whole-file reads.
#include "beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "../common/args.h"
#include "../common/errors.h"
#include "../common/file_io.h"

namespace smartread {

namespace {

// [mode, size, mtimeMs, ino, dev, ctimeMs], the layout statBeneath and statAt share.
Napi::Value StatToJs(Napi::Env env, const struct stat& st) {
  Napi::Float64Array out = Napi::Float64Array::New(env, 6);
  out[0] = static_cast<double>(st.st_mode);
  out[1] = static_cast<double>(st.st_size);
  out[2] = static_cast<double>(st.st_mtim.tv_sec) * 1e3 + static_cast<double>(st.st_mtim.tv_nsec) / 1e6;
  out[3] = static_cast<double>(st.st_ino);
  out[4] = static_cast<double>(st.st_dev);
  out[5] = static_cast<double>(st.st_ctim.tv_sec) * 1e3 + static_cast<double>(st.st_ctim.tv_nsec) / 1e6;
  return out;
}

}  // namespace

Napi::Value StatBeneath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  // O_PATH: resolution and permission to search only; a FIFO or device is not opened.
  const int fd = OpenForRead(path.c_str(), O_PATH, ConfinementFromJs(info, 1));
  if (fd < 0) return FailureToJs(env, Failure::Errno(errno, Syscall::kStat));
  struct stat st;
  const int rc = fstat(fd, &st);
  const int err = errno;
  close(fd);
  if (rc < 0) return FailureToJs(env, Failure::Errno(err, Syscall::kStat));
  return StatToJs(env, st);
}

Napi::Value StatAt(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  const int dirfd = info[1].As<Napi::Number>().Int32Value();
  struct stat st;
  if (fstatat(dirfd, path.c_str(), &st, 0) < 0) return FailureToJs(env, Failure::Errno(errno, Syscall::kStat));
  return StatToJs(env, st);
}

Napi::Value OpenBeneath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const int fd = OpenForRead(path.c_str(), flags, ConfinementFromJs(info, 2));
  if (fd < 0) return FailureToJs(env, Failure::Errno(errno, Syscall::kOpen));
  return Napi::Number::New(env, fd);
}

}  // namespace smartread
