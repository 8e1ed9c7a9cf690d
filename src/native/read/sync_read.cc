// SPDX-License-Identifier: MIT
// The synchronous engine: one call from JS does open/fstat/read/close on the calling thread.
#include "sync_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "../common/dest_buffer.h"
#include "../common/file_io.h"

namespace smartread {

namespace {

// The size is known from fstat: read straight into the result. A file that shrank meanwhile
// gives only the bytes it held; one that grew gives its first `size` bytes, as node:fs does.
// `own_fd` means the position is ours to ignore, so a large file may be read in parallel.
Failure ReadKnownSize(napi_env env, Instance& instance, int fd, size_t size, bool own_fd,
                      napi_value* out) {
  DestBuffer dest;
  if (!NewDestBuffer(env, instance.blocks.get(), size, &dest)) return Failure::JsException();
  ssize_t n = FillFromFile(fd, dest.data, size, own_fd);
  if (n < 0) return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
  if (static_cast<size_t>(n) == size) {
    *out = dest.value;
    return {};
  }
  if (!CopyToBuffer(env, dest.data, static_cast<size_t>(n), out)) return Failure::JsException();
  return {};
}

// No usable size (procfs, sysfs, pipes, devices, a user fd in utf8 mode): read to EOF into the
// environment's scratch chunk first, then into a doubling heap block, never past max_length.
Failure ReadToEof(napi_env env, Instance& instance, int fd, napi_value* out) {
  uint8_t* scratch = instance.Scratch();
  ssize_t first = ReadFully(fd, scratch, Instance::kScratchSize);
  if (first < 0) return Failure::Errno(static_cast<int>(-first), Syscall::kRead);
  if (static_cast<size_t>(first) < Instance::kScratchSize) {
    if (!CopyToBuffer(env, scratch, static_cast<size_t>(first), out)) return Failure::JsException();
    return {};
  }
  size_t capacity = Instance::kScratchSize * 4;
  size_t length = Instance::kScratchSize;
  uint8_t* block = static_cast<uint8_t*>(malloc(capacity));
  if (block == nullptr) return Failure::Errno(ENOMEM, Syscall::kRead);
  memcpy(block, scratch, length);
  Failure failure = ReadRestToEof(fd, instance.max_length, &block, &length, &capacity);
  if (failure.failed()) {
    free(block);
    return failure;
  }
  const bool copied = CopyToBuffer(env, block, length, out);
  free(block);
  if (!copied) return Failure::JsException();
  return {};
}

// ReadAsBefore (file_io.h) into the result: a slot of the pool, or a new Buffer. False when the
// name no longer holds the file it did, with nothing read that counts.
bool ReadResultAsBefore(napi_env env, Instance& instance, int fd, uint64_t size, PoolSlot pool,
                        napi_value* out) {
  DestBuffer dest;
  const bool pooled = pool.offset >= 0 && size <= Instance::kPooledMax &&
                      static_cast<uint64_t>(pool.offset) + size <= instance.pool_length;
  if (pooled) {
    dest.data = instance.pool_data + pool.offset;
  } else if (!NewDestBuffer(env, instance.blocks.get(), static_cast<size_t>(size), &dest)) {
    napi_value ignored;
    napi_get_and_clear_last_exception(env, &ignored);
    return false;
  }
  if (!pooled && !dest.in_place) FaultInIfFresh(dest.data, static_cast<size_t>(size));
  if (!ReadAsBefore(fd, dest.data, static_cast<size_t>(size), 0)) return false;
  if (pooled) return napi_create_uint32(env, static_cast<uint32_t>(size), out) == napi_ok;
  *out = dest.value;
  return true;
}

}  // namespace

Failure ReadWholeFd(napi_env env, Instance& instance, int fd, bool own_fd, bool stat_first,
                    PoolSlot pool, napi_value* out, uint64_t* regular_size, dev_t* regular_dev) {
  if (stat_first) {
    struct stat st;
    if (fstat(fd, &st) < 0) return Failure::Errno(errno, Syscall::kFstat);
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      const uint64_t size = static_cast<uint64_t>(st.st_size);
      if (regular_size != nullptr) *regular_size = size;
      if (regular_dev != nullptr) *regular_dev = st.st_dev;
      if (pool.offset >= 0 && size <= Instance::kPooledMax &&
          static_cast<uint64_t>(pool.offset) + size <= instance.pool_length) {
        ssize_t n = ReadFully(fd, instance.pool_data + pool.offset, static_cast<size_t>(size));
        if (n < 0) return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
        napi_create_uint32(env, static_cast<uint32_t>(n), out);
        return {};
      }
      if (size > instance.max_length) return Failure::TooLarge(size);
      return ReadKnownSize(env, instance, fd, static_cast<size_t>(size), own_fd, out);
    }
  }
  return ReadToEof(env, instance, fd, out);
}

Napi::Value ReadFileSync(const Napi::CallbackInfo& info, Instance& instance) {
  napi_env env = info.Env();
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const bool stat_user_fd = info[2].As<Napi::Boolean>().Value();
  const PoolSlot pool{info[3].As<Napi::Number>().Int64Value()};
  napi_value result = nullptr;
  Failure failure;
  if (info[0].IsNumber()) {
    failure = ReadWholeFd(env, instance, info[0].As<Napi::Number>().Int32Value(), false,
                          stat_user_fd, pool, &result);
  } else {
    PathArg path;
    if (!path.From(env, info[0], &failure)) return FailureToJs(info.Env(), failure);
    const Confinement confinement = ConfinementFromJs(info, 4);
    const int fd = OpenForRead(path.c_str(), flags, confinement);
    if (fd < 0) return FailureToJs(info.Env(), Failure::Errno(errno, Syscall::kOpen));
    // Names of a confined read are relative to a root, and flags other than a plain read may
    // have changed the file (O_TRUNC) or forbid reading it: those are never read as before.
    const bool plain = !confinement.confined() && flags == O_RDONLY;
    FastPathHints& hints = instance.fast_path;
    uint64_t known = 0;
    if (plain && hints.KnownSize(path.c_str(), &known) && known <= kReadAsBeforeMax &&
        ReadResultAsBefore(env, instance, fd, known, pool, &result)) {
      close(fd);
      return Napi::Value(env, result);
    }
    uint64_t regular_size = 0;
    dev_t regular_dev = 0;
    failure = ReadWholeFd(env, instance, fd, true, true, pool, &result, &regular_size, &regular_dev);
    if (plain && !failure.failed()) {
      if (regular_size > 0) hints.NoteSize(path.c_str(), regular_size, regular_dev);
      else if (known > 0) hints.Forget(path.c_str());
    }
    // Linux releases the descriptor even when close(2) reports EINTR: never retry it.
    if (close(fd) < 0 && !failure.failed() && errno != EINTR) {
      failure = Failure::Errno(errno, Syscall::kClose);
    }
  }
  if (failure.failed()) return FailureToJs(info.Env(), failure);
  return Napi::Value(env, result);
}

}  // namespace smartread
