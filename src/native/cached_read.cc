// SPDX-License-Identifier: MIT
// The cache-hit fast path: a whole-file read that succeeds only if it cannot block.
#include "cached_read.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/vfs.h>
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

// tmpfs and ramfs refuse RWF_NOWAIT (EOPNOTSUPP, still on 6.18), yet their pages are memory
// and a plain read of them never waits for a device (with no swap; see the README's limits).
bool InMemoryFilesystem(int fd) {
  struct statfs sf;
  if (fstatfs(fd, &sf) < 0) return false;
  return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

// Reads without waiting: RWF_NOWAIT, or a plain read where the file lives in memory.
ssize_t ReadIfCached(FastPathHints& hints, int fd, dev_t dev, uint8_t* data, size_t size) {
  if (hints.InMemory(dev)) return ReadFully(fd, data, size, 0);
  const ssize_t n = ReadFully(fd, data, size, 0, RWF_NOWAIT);
  if (n == -EOPNOTSUPP && InMemoryFilesystem(fd)) {
    hints.SetInMemory(dev);
    return ReadFully(fd, data, size, 0);
  }
  return n;
}

// A hit copies the file on the calling thread: past the limit (Tuning::fast_path_max) the copy
// alone would hold the event loop too long.
bool FitsFastPath(const struct stat& st, uint64_t max) {
  return S_ISREG(st.st_mode) && st.st_size > 0 && static_cast<uint64_t>(st.st_size) <= max;
}

enum class Outcome { kHit, kMiss, kFailed, kJsException };

// One fast-path read of `path`. A hit leaves a Buffer in *value, or, when the result went into
// the pool at pool_offset (>= 0 to allow it), nullptr there and the byte count in *pooled.
Outcome ReadCached(napi_env env, Instance& instance, const char* path, int flags,
                   const Confinement& confinement, int64_t pool_offset, napi_value* value,
                   size_t* pooled, Failure* failure) {
  // Flags that create or truncate are never for the fast path (RESOLVE_CACHED refuses them).
  if ((flags & (O_CREAT | O_TRUNC | O_TMPFILE)) != 0) return Outcome::kMiss;
  // What the path names is looked at before it is opened, unless it named a small regular
  // file last time: opening a FIFO would wait for a writer (or, nonblocking, release one that
  // waits, whose writes then find no reader), and opening a device may act on it. An O_PATH
  // descriptor opens nothing.
  FastPathHints& hints = instance.fast_path;
  open_how how{};
  how.resolve = RESOLVE_CACHED | confinement.resolve;
  const int dirfd = confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD;
  struct stat st;
  // Confined reads always look first: their names are relative to a root whose descriptor
  // number may name another directory on the next call.
  const bool remember = !confinement.confined();
  const bool known_regular = remember && hints.KnownRegular(path);
  if (!known_regular) {
    how.flags = static_cast<uint64_t>(O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY)));
    const int probe = static_cast<int>(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
    if (probe < 0) {
      if (IsMiss(errno)) return Outcome::kMiss;
      *failure = Failure::Errno(errno, Syscall::kOpen);
      return Outcome::kFailed;
    }
    const int stat_result = fstat(probe, &st);
    close(probe);
    // Files without a size, and large ones, are for the engines that do not hold the loop.
    if (stat_result < 0 || !FitsFastPath(st, instance.tuning.fast_path_max)) return Outcome::kMiss;
  }
  // Nonblocking in case the name no longer names a regular file.
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NONBLOCK);
  const int fd = static_cast<int>(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
  if (fd < 0) {
    if (known_regular) hints.SetRegular(path, false);
    if (IsMiss(errno)) return Outcome::kMiss;
    *failure = Failure::Errno(errno, Syscall::kOpen);
    return Outcome::kFailed;
  }
  if (fstat(fd, &st) < 0 || !FitsFastPath(st, instance.tuning.fast_path_max)) {
    if (remember) hints.SetRegular(path, false);
    close(fd);
    return Outcome::kMiss;
  }
  if (remember && !known_regular) hints.SetRegular(path, true);
  Outcome outcome = Outcome::kMiss;
  const size_t size = static_cast<size_t>(st.st_size);
  const bool pool = pool_offset >= 0 && size <= Instance::kPooledMax &&
                    static_cast<uint64_t>(pool_offset) + size <= instance.pool_length;
  DestBuffer dest;
  if (pool) {
    dest.data = instance.pool_data + pool_offset;
    dest.length = size;
  } else if (!NewDestBuffer(env, size, &dest)) {
    close(fd);
    return Outcome::kJsException;
  }
  const ssize_t n = ReadIfCached(hints, fd, st.st_dev, dest.data, size);
  if (n < 0) {
    if (!IsMiss(static_cast<int>(-n))) {
      *failure = Failure::Errno(static_cast<int>(-n), Syscall::kRead);
      outcome = Outcome::kFailed;
    }
  } else if (pool) {
    *value = nullptr;
    *pooled = static_cast<size_t>(n);
    outcome = Outcome::kHit;
  } else if (static_cast<size_t>(n) == size) {
    *value = dest.value;
    outcome = Outcome::kHit;
  } else if (CopyToBuffer(env, dest.data, static_cast<size_t>(n), value)) {
    outcome = Outcome::kHit;
  } else {
    outcome = Outcome::kJsException;
  }
  close(fd);
  return outcome;
}

// Where the pooled result after one of `bytes` starts: 8-byte aligned, as the JS side computes.
int64_t NextPoolOffset(int64_t offset, size_t bytes) {
  return (offset + static_cast<int64_t>(bytes) + 7) & ~int64_t{7};
}

}  // namespace

Napi::Value CachedRead(const Napi::CallbackInfo& info, Instance& instance) {
  Napi::Env env = info.Env();
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const int64_t pool_offset = info[2].As<Napi::Number>().Int64Value();
  PathArg path;
  Failure failure;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  napi_value value = nullptr;
  size_t pooled = 0;
  switch (ReadCached(env, instance, path.c_str(), flags, ConfinementFromJs(info, 3), pool_offset,
                     &value, &pooled, &failure)) {
    case Outcome::kHit:
      if (value == nullptr) napi_create_uint32(env, static_cast<uint32_t>(pooled), &value);
      return Napi::Value(env, value);
    case Outcome::kMiss:
      return env.Null();
    case Outcome::kFailed:
      return FailureToJs(env, failure);
    case Outcome::kJsException:
      break;
  }
  return Napi::Value();
}

Napi::Value CachedReadBatch(const Napi::CallbackInfo& info, Instance& instance) {
  napi_env env = info.Env();
  napi_value paths = info[0];
  const uint32_t start = info[1].As<Napi::Number>().Uint32Value();
  const uint32_t end = info[2].As<Napi::Number>().Uint32Value();
  const int flags = info[3].As<Napi::Number>().Int32Value();
  int64_t pool_offset = info[4].As<Napi::Number>().Int64Value();
  Napi::TypedArrayOf<int32_t> sizes = info[5].As<Napi::TypedArrayOf<int32_t>>();
  napi_value out = info[6];
  const Confinement confinement = ConfinementFromJs(info, 7);
  const uint32_t count = std::min<uint32_t>(end - start, static_cast<uint32_t>(sizes.ElementLength()));
  uint32_t done = 0;
  for (; done < count; done++) {
    // Stop where the pool may not hold the next result: the caller starts a new one.
    if (pool_offset < 0 || static_cast<uint64_t>(pool_offset) + Instance::kPooledMax > instance.pool_length) break;
    sizes[done] = kNotHit;
    napi_value item;
    napi_valuetype type;
    if (napi_get_element(env, paths, start + done, &item) != napi_ok ||
        napi_typeof(env, item, &type) != napi_ok || type != napi_string) {
      continue;
    }
    PathArg path;
    Failure failure;
    if (!path.From(env, item, &failure)) continue;
    napi_value value = nullptr;
    size_t pooled = 0;
    switch (ReadCached(env, instance, path.c_str(), flags, confinement, pool_offset, &value,
                       &pooled, &failure)) {
      case Outcome::kHit:
        if (value == nullptr) {
          sizes[done] = static_cast<int32_t>(pooled);
          pool_offset = NextPoolOffset(pool_offset, pooled);
        } else {
          sizes[done] = kHitInOut;
          napi_set_element(env, out, done, value);
        }
        break;
      case Outcome::kMiss:
      case Outcome::kFailed:
        break;
      case Outcome::kJsException:
        return Napi::Value();
    }
  }
  return Napi::Number::New(env, done);
}

}  // namespace smartread
