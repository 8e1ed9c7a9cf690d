// SPDX-License-Identifier: MIT
// Page-cache control for benchmarks and tests: evict a file's pages, and count those resident.
#include "page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "../common/errors.h"
#include "sync_read.h"

namespace smartread {

namespace {

// Opens the path (string or Buffer) named by info[0] for reading; -1 with *failure set on error.
int OpenForControl(const Napi::CallbackInfo& info, Failure* failure) {
  PathArg path;
  if (!path.From(info.Env(), info[0], failure)) return -1;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) *failure = Failure::Errno(errno, Syscall::kOpen);
  return fd;
}

}  // namespace

Napi::Value EvictFromPageCache(const Napi::CallbackInfo& info) {
  Failure failure;
  const int fd = OpenForControl(info, &failure);
  if (fd < 0) return FailureToJs(info.Env(), failure);
  // fdatasync first, so that pages written just now are clean and can leave too.
  fdatasync(fd);
  const int err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  if (err != 0) return FailureToJs(info.Env(), Failure::Errno(err, Syscall::kFadvise));
  return info.Env().Undefined();
}

Napi::Value PageCacheResidency(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  const int fd = OpenForControl(info, &failure);
  if (fd < 0) return FailureToJs(env, failure);
  struct stat st;
  if (fstat(fd, &st) < 0) {
    failure = Failure::Errno(errno, Syscall::kFstat);
    close(fd);
    return FailureToJs(env, failure);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t cached = 0;
  if (size > 0) {
    // A mapping of the file shows its page-cache pages without faulting them in.
    void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
      failure = Failure::Errno(errno, Syscall::kMmap);
      close(fd);
      return FailureToJs(env, failure);
    }
    std::vector<unsigned char> resident((size + page - 1) / page);
    if (mincore(map, size, resident.data()) == 0) {
      for (size_t i = 0; i < resident.size(); i++) {
        if (resident[i] & 1) cached += (i + 1 == resident.size()) ? size - i * page : page;
      }
    }
    munmap(map, size);
  }
  close(fd);
  Napi::Object out = Napi::Object::New(env);
  out.Set("size", Napi::Number::New(env, static_cast<double>(size)));
  out.Set("cached", Napi::Number::New(env, static_cast<double>(cached)));
  return out;
}

}  // namespace smartread
