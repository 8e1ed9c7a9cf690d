// SPDX-License-Identifier: MIT
// Opening for a read, and read loops over a file descriptor, shared by the engines.
#include "file_io.h"

#include "dest_buffer.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace smartread {

namespace {

// Linux transfers at most this much in one read(2).
constexpr size_t kMaxIo = 0x7ffff000;

}  // namespace

Confinement ConfinementFromJs(const Napi::CallbackInfo& info, size_t index) {
  Confinement c;
  if (info.Length() > index && info[index].IsNumber()) c.dirfd = info[index].As<Napi::Number>().Int32Value();
  if (info.Length() > index + 1 && info[index + 1].IsNumber()) {
    c.resolve = static_cast<uint64_t>(info[index + 1].As<Napi::Number>().Int64Value());
  }
  return c;
}

int OpenForRead(const char* path, int flags, const Confinement& confinement) {
  if (!confinement.confined()) return open(path, flags | O_CLOEXEC, 0666);
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  // openat2 takes a mode only where a file may be created.
  if (OpenMayCreate(flags)) how.mode = 0666;
  how.resolve = confinement.resolve;
  const int dirfd = confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD;
  return OpenAt2(dirfd, path, &how);
}

bool ReadAsBefore(int fd, uint8_t* data, size_t size, int rwf_flags, int* error) {
  uint8_t past;
  iovec iov[2] = {{data, size}, {&past, 1}};
  ssize_t n;
  do {
    n = preadv2(fd, iov, 2, 0, rwf_flags);
  } while (n < 0 && errno == EINTR);
  if (error != nullptr) *error = n < 0 ? errno : 0;
  return n == static_cast<ssize_t>(size);
}

int OpenAt2(int dirfd, const char* path, const open_how* how) {
  const bool retries = RetriesOnEagain(how->resolve);
  for (int attempt = 0;; attempt++) {
    const int fd = static_cast<int>(syscall(SYS_openat2, dirfd, path, how, sizeof *how));
    if (fd >= 0 || errno != EAGAIN || !retries || attempt + 1 >= kScopedOpenAttempts) return fd;
  }
}

namespace {

// preadv2 until `length` bytes or EOF; `*done` counts what was read before an error, returned
// as errno (0: none).
int ReadLoop(int fd, uint8_t* data, size_t length, int64_t offset, int rwf_flags, size_t* done) {
  *done = 0;
  while (*done < length) {
    iovec iov{data + *done, std::min(length - *done, kMaxIo)};
    const off_t at = offset < 0 ? -1 : static_cast<off_t>(offset + static_cast<int64_t>(*done));
    const ssize_t n = preadv2(fd, &iov, 1, at, rwf_flags);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    *done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

ssize_t ReadFully(int fd, uint8_t* data, size_t length, int64_t offset, int rwf_flags) {
  size_t done = 0;
  const int error = ReadLoop(fd, data, length, offset, rwf_flags, &done);
  return error != 0 ? -error : static_cast<ssize_t>(done);
}

NoWaitRead ReadWithoutWaiting(int fd, uint8_t* data, size_t length, uint64_t offset, bool* in_memory) {
  NoWaitRead read;
  if (!*in_memory) {
    read.error = ReadLoop(fd, data, length, static_cast<int64_t>(offset), RWF_NOWAIT, &read.done);
    // tmpfs and ramfs still refuse RWF_NOWAIT on 6.18 (EOPNOTSUPP), on the first preadv2.
    if (read.error != EOPNOTSUPP || !InMemoryFilesystem(fd)) return read;
    *in_memory = true;
  }
  size_t more = 0;
  read.error = ReadLoop(fd, data + read.done, length - read.done,
                        static_cast<int64_t>(offset + read.done), 0, &more);
  read.done += more;
  return read;
}

bool InMemoryFilesystem(int fd) {
  struct statfs sf;
  if (fstatfs(fd, &sf) < 0) return false;
  return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

namespace {

// A large file opened by us is filled by this thread and one helper taking chunks in turn:
// with two cores, page faults and copies of the destination run twice as fast. From 4 MiB, where
// the fill (~330 us into memory in place, ~860 us into fresh memory, measured here) is several
// times what starting the helper costs (~50-100 us in these VMs). Chunks are whole huge pages
// where the destination may get them (32 MiB and more, see dest_buffer.cc), so that the two
// threads never fault in the same one.
constexpr size_t kParallelThreshold = size_t{4} << 20;
constexpr size_t kHugeDestination = size_t{32} << 20;

class ParallelFill {
 public:
  ParallelFill(int fd, uint8_t* data, size_t length)
      : fd_(fd), data_(data), length_(length),
        chunk_(length >= kHugeDestination ? size_t{8} << 20 : size_t{1} << 20), valid_end_(length) {}

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
      const size_t offset = next_.fetch_add(chunk_);
      if (offset >= length_ || error_.load(std::memory_order_relaxed) != 0) return;
      const size_t want = std::min(chunk_, length_ - offset);
      FaultInIfFresh(data_ + offset, want);
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
  const size_t chunk_;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> valid_end_;
  std::atomic<int> error_{0};
};

}  // namespace

ssize_t FillFromFile(int fd, uint8_t* data, size_t length, bool own_fd) {
  if (own_fd && length >= kParallelThreshold) return ParallelFill(fd, data, length).Run();
  FaultInIfFresh(data, length);
  return ReadFully(fd, data, length);
}

Failure ReadRestToEof(int fd, uint64_t max_length, uint8_t** block, size_t* length,
                      size_t* capacity) {
  for (;;) {
    ssize_t n = ReadFully(fd, *block + *length, *capacity - *length);
    if (n < 0) return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
    *length += static_cast<size_t>(n);
    if (*length > max_length) return Failure::TooLarge(*length);
    if (*length < *capacity) return {};
    // Grow to at most one byte past the limit, which is enough to tell that it was passed.
    size_t next = std::min<size_t>(*capacity * 2, max_length + 1);
    uint8_t* grown = static_cast<uint8_t*>(realloc(*block, next));
    if (grown == nullptr) return Failure::Errno(ENOMEM, Syscall::kRead);
    *block = grown;
    *capacity = next;
  }
}

}  // namespace smartread
