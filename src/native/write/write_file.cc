// SPDX-License-Identifier: MIT
// Whole-file writes on the calling thread: open, write all, fsync if asked, close; or a
// temporary file beside the target, renamed over it.
#include "write_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>


namespace smartread {

namespace {

// Linux transfers at most this much in one write(2).
constexpr size_t kMaxIo = 0x7ffff000;
// What a temporary name adds to the target's: '.', ".smartread-", 12 hex digits, ".tmp".
constexpr size_t kTemporaryOverhead = 1 + 11 + 12 + 4;
constexpr size_t kNameMax = 255;
// Attempts at a temporary name before giving up with EEXIST (48 random bits each).
constexpr int kTemporaryAttempts = 8;

// 48 bits for a temporary name: from a generator seeded by the kernel once per thread, so that
// names differ between threads and processes without a syscall per name.
uint64_t RandomBits() {
  thread_local uint64_t state = [] {
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != sizeof seed) {
      seed = static_cast<uint64_t>(getpid()) * 0x9e3779b97f4a7c15ULL ^ reinterpret_cast<uintptr_t>(&seed);
    }
    return seed;
  }();
  // splitmix64
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (z ^ (z >> 31)) & 0xffffffffffffULL;
}

Failure WriteAll(int fd, const uint8_t* data, size_t length) {
  size_t done = 0;
  while (done < length) {
    const ssize_t n = write(fd, data + done, std::min(length - done, kMaxIo));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Failure::Errno(errno, Syscall::kWrite);
    }
    // A regular file takes at least a byte or says why not; anything else would spin here.
    if (n == 0) return Failure::Errno(EIO, Syscall::kWrite);
    done += static_cast<size_t>(n);
  }
  return {};
}

// Whether the JS thread has asked to stop the request (written there while this thread may read:
// an atomic load, which sees the store sooner or later, and that is all a stop needs).
bool Stopped(const WriteRequest& request) {
  return request.stop != nullptr && __atomic_load_n(request.stop, __ATOMIC_RELAXED) != 0;
}

// Writes, fsyncs if asked, and closes fd (whatever happened before).
Failure FillAndClose(int fd, const WriteRequest& request) {
  Failure failure = WriteAll(fd, request.data, request.length);
  if (!failure.failed() && request.flush && fsync(fd) != 0) failure = Failure::Errno(errno, Syscall::kFsync);
  // Linux releases the descriptor even when close(2) reports EINTR: never retry it.
  if (close(fd) != 0 && !failure.failed() && errno != EINTR) failure = Failure::Errno(errno, Syscall::kClose);
  return failure;
}

// Where an atomic write's files are named from: the directory (an fd, or AT_FDCWD with names
// relative to the working directory) and the target's and temporary file's names in it.
struct Beside {
  int dirfd = AT_FDCWD;
  bool own_dirfd = false;
  std::string target;
  std::string temporary;
  std::string directory;  // for the fsync of the directory, when not confined
};

int OpenTemporary(Beside* beside, const WriteRequest& request) {
  for (int attempt = 0; attempt < kTemporaryAttempts; attempt++) {
    beside->temporary = TemporaryName(beside->target);
    // O_NOFOLLOW: a name that someone made a symbolic link in the meantime is not followed.
    const int fd = openat(beside->dirfd, beside->temporary.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, request.mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

Failure WriteAtomically(const WriteRequest& request) {
  const std::string& path = request.target.path;
  Beside beside;
  if (TemporaryName(path).empty()) return Failure::Errno(EISDIR, Syscall::kOpen);
  const size_t slash = path.find_last_of('/');
  if (request.confinement.confined()) {
    // The directory is resolved beneath the root once; both names are then single components
    // in it, which neither openat nor renameat can follow out of it. (O_PATH alone: see
    // DirSyscalls::Mkdir; openat in it says ENOTDIR where it is not a directory.)
    const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    beside.dirfd = OpenForRead(directory.c_str(), O_PATH, request.confinement);
    if (beside.dirfd < 0) return Failure::Errno(errno, Syscall::kOpen);
    beside.own_dirfd = true;
    beside.target = path.substr(slash == std::string::npos ? 0 : slash + 1);
  } else {
    beside.target = path;
    beside.directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  }
  const auto release = [&](Failure failure) {
    if (beside.own_dirfd) close(beside.dirfd);
    return failure;
  };
  const int fd = OpenTemporary(&beside, request);
  if (fd < 0) return release(Failure::Errno(errno, Syscall::kOpen));
  Failure failure = FillAndClose(fd, request);
  if (!failure.failed() && Stopped(request)) failure = Failure::Errno(ECANCELED, Syscall::kWrite);
  if (!failure.failed()) {
    const unsigned flags = request.atomic == Atomic::kNoReplace ? RENAME_NOREPLACE : 0;
    if (renameat2(beside.dirfd, beside.temporary.c_str(), beside.dirfd, beside.target.c_str(), flags) != 0) {
      failure = Failure::Errno(errno, RenameFailureSyscall(errno));
    }
  }
  if (failure.failed()) {
    unlinkat(beside.dirfd, beside.temporary.c_str(), 0);
    return release(failure);
  }
  if (request.flush) {
    // The rename is durable once the directory is.
    const int dirfd = beside.own_dirfd ? openat(beside.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                       : open(beside.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0 || fsync(dirfd) != 0) failure = Failure::Errno(errno, Syscall::kFsync);
    if (dirfd >= 0) close(dirfd);
  }
  return release(failure);
}

}  // namespace

Syscall RenameFailureSyscall(int err) { return err == EEXIST || err == EISDIR ? Syscall::kOpen : Syscall::kRename; }

std::string TemporaryName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const std::string name = path.substr(start);
  if (name.empty() || name == "." || name == "..") return {};
  char suffix[32];
  snprintf(suffix, sizeof suffix, ".smartread-%012llx.tmp", static_cast<unsigned long long>(RandomBits()));
  return path.substr(0, start) + "." + name.substr(0, kNameMax - kTemporaryOverhead) + suffix;
}

Failure WriteWholeFile(const WriteRequest& request) {
  if (Stopped(request)) return Failure::Errno(ECANCELED, Syscall::kWrite);
  if (request.target.fd >= 0) {
    Failure failure = WriteAll(request.target.fd, request.data, request.length);
    if (!failure.failed() && request.flush && fsync(request.target.fd) != 0) failure = Failure::Errno(errno, Syscall::kFsync);
    return failure;
  }
  if (request.atomic != Atomic::kNone) return WriteAtomically(request);
  int fd;
  if (request.confinement.confined()) {
    open_how how{};
    how.flags = static_cast<uint64_t>(request.flags | O_CLOEXEC);
    how.mode = OpenMayCreate(request.flags) ? request.mode : 0;
    how.resolve = request.confinement.resolve;
    fd = OpenAt2(request.confinement.dirfd, request.target.path.c_str(), &how);
  } else {
    fd = open(request.target.path.c_str(), request.flags | O_CLOEXEC, request.mode);
  }
  if (fd < 0) return Failure::Errno(errno, Syscall::kOpen);
  return FillAndClose(fd, request);
}

bool WriteTargetFromJs(napi_env env, napi_value value, ReadTarget* target) {
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok) return false;
  if (type == napi_number) return napi_get_value_int32(env, value, &target->fd) == napi_ok;
  target->fd = -1;
  if (type == napi_string) {
    size_t length = 0;
    if (napi_get_value_string_utf8(env, value, nullptr, 0, &length) != napi_ok) return false;
    target->path.resize(length + 1);
    if (napi_get_value_string_utf8(env, value, target->path.data(), length + 1, &length) != napi_ok) return false;
    target->path.resize(length);
    return true;
  }
  void* data = nullptr;
  size_t length = 0;
  if (napi_get_buffer_info(env, value, &data, &length) != napi_ok) return false;
  target->path.assign(static_cast<const char*>(data), length);
  return true;
}

bool BoolArg(napi_env env, napi_value value) {
  bool result = false;
  return napi_get_value_bool(env, value, &result) == napi_ok && result;
}

bool ArrayLength(napi_env env, napi_value array, uint32_t* length) {
  return napi_get_array_length(env, array, length) == napi_ok;
}

bool ArrayElement(napi_env env, napi_value array, uint32_t index, napi_value* element) {
  return napi_get_element(env, array, index, element) == napi_ok && *element != nullptr;
}

bool WriteRequestFromJs(const Napi::CallbackInfo& info, size_t index, WriteRequest* request) {
  if (!WriteTargetFromJs(info.Env(), info[index], &request->target)) {
    napi_throw_type_error(info.Env(), nullptr, "target must be a path or an fd");
    return false;
  }
  size_t length = 0;
  uint8_t* data = nullptr;
  if (!ViewBytes(info.Env(), info[index + 1], &data, &length)) {
    napi_throw_type_error(info.Env(), nullptr, "data must be an ArrayBufferView");
    return false;
  }
  request->data = data;
  request->length = length;
  request->flags = info[index + 2].As<Napi::Number>().Int32Value();
  request->mode = static_cast<mode_t>(info[index + 3].As<Napi::Number>().Uint32Value());
  request->flush = BoolArg(info.Env(), info[index + 4]);
  request->atomic = static_cast<Atomic>(info[index + 5].As<Napi::Number>().Uint32Value());
  request->confinement = ConfinementFromJs(info, index + 6);
  return true;
}

Napi::Value WriteFileSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) {
    // The path is checked for NUL bytes as node:fs does; the request keeps its own copy.
    Failure failure;
    PathArg path;
    if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  }
  WriteRequest request;
  if (!WriteRequestFromJs(info, 0, &request)) return Napi::Value();
  const Failure failure = WriteWholeFile(request);
  if (failure.failed()) return FailureToJs(env, failure);
  return env.Undefined();
}

}  // namespace smartread
