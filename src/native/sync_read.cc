// SPDX-License-Identifier: MIT
// The synchronous engine: one call from JS does open/fstat/read/close on the calling thread.
#include "sync_read.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "dest_buffer.h"

namespace smartread {

namespace {

// Linux transfers at most this much in one read(2).
constexpr size_t kMaxIo = 0x7ffff000;

// read(2) until `length` bytes or EOF; returns the count, or -errno.
ssize_t ReadFully(int fd, uint8_t* data, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = read(fd, data + done, std::min(length - done, kMaxIo));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

// A large file opened by us is filled by this thread and one helper taking chunks in turn:
// with two cores, page faults and copies of the destination run twice as fast.
constexpr size_t kParallelThreshold = size_t{32} << 20;
constexpr size_t kParallelChunk = size_t{8} << 20;

class ParallelFill {
 public:
  ParallelFill(int fd, uint8_t* data, size_t length)
      : fd_(fd), data_(data), length_(length), valid_end_(length) {}

  // Returns the length of the prefix that holds the file's bytes (shorter when the file shrank
  // meanwhile), or -errno.
  ssize_t Run() {
    pthread_t helper;
    const bool helped = pthread_create(&helper, nullptr, &ParallelFill::HelperMain, this) == 0;
    Work();
    if (helped) pthread_join(helper, nullptr);
    if (error_.load() != 0) return -error_.load();
    return static_cast<ssize_t>(valid_end_.load());
  }

 private:
  static void* HelperMain(void* self) {
    static_cast<ParallelFill*>(self)->Work();
    return nullptr;
  }

  void Work() {
    for (;;) {
      const size_t offset = next_.fetch_add(kParallelChunk);
      if (offset >= length_ || error_.load(std::memory_order_relaxed) != 0) return;
      const size_t want = std::min(kParallelChunk, length_ - offset);
      size_t got = 0;
      while (got < want) {
        ssize_t n = pread(fd_, data_ + offset + got, want - got, static_cast<off_t>(offset + got));
        if (n < 0) {
          if (errno == EINTR) continue;
          error_.store(errno);
          return;
        }
        if (n == 0) break;
        got += static_cast<size_t>(n);
      }
      if (got < want) LowerValidEnd(offset + got);
    }
  }

  void LowerValidEnd(size_t end) {
    size_t current = valid_end_.load();
    while (end < current && !valid_end_.compare_exchange_weak(current, end)) {
    }
  }

  const int fd_;
  uint8_t* const data_;
  const size_t length_;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> valid_end_;
  std::atomic<int> error_{0};
};

// The size is known from fstat: read straight into the result. A file that shrank meanwhile
// gives only the bytes it held; one that grew gives its first `size` bytes, as node:fs does.
// `own_fd` means the position is ours to ignore, so a large file may be read in parallel.
Failure ReadKnownSize(napi_env env, int fd, size_t size, bool own_fd, napi_value* out) {
  DestBuffer dest;
  if (!NewDestBuffer(env, size, &dest)) return Failure::JsException();
  ssize_t n = own_fd && size >= kParallelThreshold ? ParallelFill(fd, dest.data, size).Run()
                                                   : ReadFully(fd, dest.data, size);
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
  for (;;) {
    ssize_t n = ReadFully(fd, block + length, capacity - length);
    if (n < 0) {
      free(block);
      return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
    }
    length += static_cast<size_t>(n);
    if (length > instance.max_length) {
      free(block);
      return Failure::TooLarge(length);
    }
    if (length < capacity) break;
    // Grow to at most one byte past the limit, which is enough to tell that it was passed.
    size_t next = std::min<size_t>(capacity * 2, instance.max_length + 1);
    uint8_t* grown = static_cast<uint8_t*>(realloc(block, next));
    if (grown == nullptr) {
      free(block);
      return Failure::Errno(ENOMEM, Syscall::kRead);
    }
    block = grown;
    capacity = next;
  }
  const bool copied = CopyToBuffer(env, block, length, out);
  free(block);
  if (!copied) return Failure::JsException();
  return {};
}

}  // namespace

bool PathArg::From(napi_env env, napi_value value, Failure* failure) {
  napi_valuetype type;
  napi_typeof(env, value, &type);
  size_t length = 0;
  if (type == napi_string) {
    // napi_get_value_string_utf8 truncates at a character boundary, so a result within 4 bytes
    // of the end may have been cut: then ask for the exact length and use the heap.
    napi_get_value_string_utf8(env, value, small_, sizeof small_, &length);
    if (length + 4 >= sizeof small_) {
      napi_get_value_string_utf8(env, value, nullptr, 0, &length);
      heap_.resize(length + 1);
      napi_get_value_string_utf8(env, value, heap_.data(), length + 1, &length);
      heap_.resize(length);
    }
  } else {
    bool is_buffer = false;
    napi_is_buffer(env, value, &is_buffer);
    void* data = nullptr;
    if (!is_buffer || napi_get_buffer_info(env, value, &data, &length) != napi_ok) {
      napi_throw_type_error(env, nullptr, "path must be a string or a Buffer");
      *failure = Failure::JsException();
      return false;
    }
    if (length < sizeof small_) {
      memcpy(small_, data, length);
      small_[length] = '\0';
    } else {
      heap_.assign(static_cast<const char*>(data), length);
    }
  }
  if (strlen(c_str()) != length) {
    *failure = Failure::NullBytes();
    return false;
  }
  return true;
}

Failure ReadWholeFd(napi_env env, Instance& instance, int fd, bool own_fd, bool stat_first,
                    PoolSlot pool, napi_value* out) {
  if (stat_first) {
    struct stat st;
    if (fstat(fd, &st) < 0) return Failure::Errno(errno, Syscall::kFstat);
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      const uint64_t size = static_cast<uint64_t>(st.st_size);
      if (pool.offset >= 0 && size <= Instance::kPooledMax &&
          static_cast<uint64_t>(pool.offset) + size <= instance.pool_length) {
        ssize_t n = ReadFully(fd, instance.pool_data + pool.offset, static_cast<size_t>(size));
        if (n < 0) return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
        napi_create_uint32(env, static_cast<uint32_t>(n), out);
        return {};
      }
      if (size > instance.max_length) return Failure::TooLarge(size);
      return ReadKnownSize(env, fd, static_cast<size_t>(size), own_fd, out);
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
    const int fd = open(path.c_str(), flags | O_CLOEXEC, 0666);
    if (fd < 0) return FailureToJs(info.Env(), Failure::Errno(errno, Syscall::kOpen));
    failure = ReadWholeFd(env, instance, fd, true, true, pool, &result);
    // Linux releases the descriptor even when close(2) reports EINTR: never retry it.
    if (close(fd) < 0 && !failure.failed() && errno != EINTR) {
      failure = Failure::Errno(errno, Syscall::kClose);
    }
  }
  if (failure.failed()) return FailureToJs(info.Env(), failure);
  return Napi::Value(env, result);
}

}  // namespace smartread
