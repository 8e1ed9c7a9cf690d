// SPDX-License-Identifier: MIT
// The cache-hit fast path: a whole-file read that succeeds only if it cannot block.
#include "cached_read.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "args.h"
#include "dest_buffer.h"
#include "errors.h"
#include "file_io.h"

namespace smartread {

namespace {

// Errors that mean "not through this path", not "this file cannot be read": the kernel would
// have to block (EAGAIN), or it lacks openat2 (ENOSYS, 5.6), RESOLVE_CACHED (EINVAL, 5.12),
// RWF_NOWAIT for this file (EOPNOTSUPP), or a seccomp filter refuses the call (EPERM is
// ambiguous, so it is left to the other engines to report).
bool IsMiss(int err) {
  return err == EAGAIN || err == ENOSYS || err == EINVAL || err == EOPNOTSUPP || err == EPERM;
}

// Whether the open file is on a filesystem the policy names as memory-backed.
bool OnMemoryFilesystem(int fd, const Instance& instance) {
  if (instance.memory_filesystems.empty()) return false;
  struct statfs fs;
  if (fstatfs(fd, &fs) < 0) return false;
  const auto& types = instance.memory_filesystems;
  return std::find(types.begin(), types.end(), static_cast<int64_t>(fs.f_type)) != types.end();
}

}  // namespace

Napi::Value CachedRead(const Napi::CallbackInfo& info, Instance& instance) {
  Napi::Env env = info.Env();
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const int64_t pool_offset = info[2].As<Napi::Number>().Int64Value();
  PathArg path;
  Failure failure;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_CACHED;
  const int fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd < 0) {
    if (IsMiss(errno)) return env.Null();
    return FailureToJs(env, Failure::Errno(errno, Syscall::kOpen));
  }
  napi_value result = nullptr;
  struct stat st;
  if (fstat(fd, &st) < 0) {
    failure = Failure::Errno(errno, Syscall::kFstat);
  } else if (!S_ISREG(st.st_mode) || st.st_size <= 0 || static_cast<uint64_t>(st.st_size) > instance.fast_path_max) {
    // Files without a size, and large ones, are for the engines that do not hold the loop.
  } else {
    const size_t size = static_cast<size_t>(st.st_size);
    const bool pooled = pool_offset >= 0 && size <= Instance::kPooledMax &&
                        static_cast<uint64_t>(pool_offset) + size <= instance.pool_length;
    DestBuffer dest;
    if (pooled) {
      dest.data = instance.pool_data + pool_offset;
      dest.length = size;
    } else if (!NewDestBuffer(env, size, &dest)) {
      close(fd);
      return Napi::Value();
    }
    ssize_t n = ReadFully(fd, dest.data, size, 0, RWF_NOWAIT);
    // shmem refuses RWF_NOWAIT (EOPNOTSUPP, Linux 6.18 still), although its pages are never
    // waited for: without this every tmpfs read would miss. Asked only after the refusal, so
    // other filesystems pay no fstatfs.
    if (n == -EOPNOTSUPP && OnMemoryFilesystem(fd, instance)) n = ReadFully(fd, dest.data, size, 0, 0);
    if (n < 0) {
      if (!IsMiss(static_cast<int>(-n))) failure = Failure::Errno(static_cast<int>(-n), Syscall::kRead);
    } else if (pooled) {
      napi_create_uint32(env, static_cast<uint32_t>(n), &result);
    } else if (static_cast<size_t>(n) == size) {
      result = dest.value;
    } else if (!CopyToBuffer(env, dest.data, static_cast<size_t>(n), &result)) {
      close(fd);
      return Napi::Value();
    }
  }
  close(fd);
  if (failure.failed()) return FailureToJs(env, failure);
  if (result == nullptr) return env.Null();
  return Napi::Value(env, result);
}

}  // namespace smartread
