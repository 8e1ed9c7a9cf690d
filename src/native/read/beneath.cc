// SPDX-License-Identifier: MIT
// Lookups and opens under a confinement, for what confined readers do besides whole-file reads.
#include "beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include "../common/args.h"
#include "../common/errors.h"
#include "../common/file_io.h"
#include "../common/pool_job.h"
#include "mount_table.h"

namespace smartread {

namespace {

// statBeneath's lookup (confined) or statAt's (unconfined, from `dirfd`); 0 or an errno.
int LookUp(const char* path, bool confined, const Confinement& confinement, struct stat* st) {
  if (!confined) return fstatat(confinement.dirfd, path, st, 0) < 0 ? errno : 0;
  // O_PATH: resolution and permission to search only; a FIFO or device is not opened.
  const int fd = OpenForRead(path, O_PATH, confinement);
  if (fd < 0) return errno;
  const int err = fstat(fd, st) < 0 ? errno : 0;
  close(fd);
  return err;
}

// `path` opened O_PATH from the dentry cache alone (RESOLVE_CACHED, never retried): no disk is
// read and no server asked on the way; -1 with EAGAIN where a name on the way is not cached.
int OpenPathIfCached(const char* path, Confinement confinement) {
  confinement.resolve |= RESOLVE_CACHED;
  return OpenForRead(path, O_PATH, confinement);
}

// A statBeneath or statAt on libuv's thread pool.
class StatJob final : public PoolJob {
 public:
  std::string path;
  bool confined = true;
  Confinement confinement;

 private:
  void Execute() override { error_ = LookUp(path.c_str(), confined, confinement, &st_); }

  napi_value Settle(napi_env env) override {
    if (error_ != 0) return FailureToJs(Napi::Env(env), Failure::Errno(error_, Syscall::kStat));
    return StatToJs(env, st_);
  }

  struct stat st_ {};
  int error_ = 0;
};

class OpenJob final : public PoolJob {
 public:
  std::string path;
  int flags = 0;
  Confinement confinement;

  ~OpenJob() override {
    if (fd_ >= 0) close(fd_);
  }

 private:
  void Execute() override {
    fd_ = OpenForRead(path.c_str(), flags, confinement);
    if (fd_ < 0) error_ = errno;
  }

  napi_value Settle(napi_env env) override {
    if (fd_ < 0) return FailureToJs(Napi::Env(env), Failure::Errno(error_, Syscall::kOpen));
    // Resolved here, so that a descriptor no promise took is closed (by the destructor).
    napi_value value;
    if (napi_create_int32(env, fd_, &value) == napi_ok && napi_resolve_deferred(env, deferred(), value) == napi_ok) {
      fd_ = -1;
    }
    return nullptr;
  }

  int fd_ = -1;
  int error_ = 0;
};

}  // namespace

napi_value StatToJs(napi_env env, const struct stat& st) {
  napi_value buffer, array;
  void* data = nullptr;
  if (napi_create_arraybuffer(env, 6 * sizeof(double), &data, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, 6, buffer, 0, &array) != napi_ok) {
    return nullptr;
  }
  double* out = static_cast<double*>(data);
  out[0] = static_cast<double>(st.st_mode);
  out[1] = static_cast<double>(st.st_size);
  out[2] = static_cast<double>(st.st_mtim.tv_sec) * 1e3 + static_cast<double>(st.st_mtim.tv_nsec) / 1e6;
  out[3] = static_cast<double>(st.st_ino);
  out[4] = static_cast<double>(st.st_dev);
  out[5] = static_cast<double>(st.st_ctim.tv_sec) * 1e3 + static_cast<double>(st.st_ctim.tv_nsec) / 1e6;
  return array;
}

struct stat StatFromStatx(const struct statx& stx) {
  struct stat st {};
  st.st_mode = stx.stx_mode;
  st.st_size = static_cast<off_t>(stx.stx_size);
  st.st_mtim = {stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec};
  st.st_ino = stx.stx_ino;
  st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st.st_ctim = {stx.stx_ctime.tv_sec, stx.stx_ctime.tv_nsec};
  return st;
}

Napi::Value StatBeneath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  struct stat st;
  const int err = LookUp(path.c_str(), true, ConfinementFromJs(info, 1), &st);
  if (err != 0) return FailureToJs(env, Failure::Errno(err, Syscall::kStat));
  return Napi::Value(env, StatToJs(env, st));
}

Napi::Value StatAt(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  Confinement from;
  from.dirfd = info[1].As<Napi::Number>().Int32Value();
  struct stat st;
  const int err = LookUp(path.c_str(), false, from, &st);
  if (err != 0) return FailureToJs(env, Failure::Errno(err, Syscall::kStat));
  return Napi::Value(env, StatToJs(env, st));
}

Napi::Value StatBeneathIfCached(const Napi::CallbackInfo& info, Instance& instance) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  const int fd = OpenPathIfCached(path.c_str(), ConfinementFromJs(info, 1));
  if (fd < 0) return errno == EAGAIN ? env.Null() : FailureToJs(env, Failure::Errno(errno, Syscall::kStat));
  // The device from what the kernel holds (which asks no server); only off a server's mount is
  // the file's own stat taken (which there never waits once the name is cached).
  const dev_t dev = CachedDevice(fd);
  if (dev == 0 || instance.blind->OpensMayWait(dev)) {
    close(fd);
    return env.Null();
  }
  struct stat st;
  const int err = fstat(fd, &st) < 0 ? errno : 0;
  close(fd);
  if (err != 0) return FailureToJs(env, Failure::Errno(err, Syscall::kStat));
  return Napi::Value(env, StatToJs(env, st));
}

Napi::Value StatAtNow(const Napi::CallbackInfo& info, Instance& instance) {
  const dev_t dev = static_cast<dev_t>(info[2].As<Napi::Number>().Int64Value());
  if (!instance.blind->OpensMayWait(dev)) return StatAt(info);
  Napi::Env env = info.Env();
  if (!info[3].ToBoolean().Value()) return env.Null();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  // Resolved as fstatat would (unconfined, following links), from the dentry cache alone: a
  // lapsed name would be asked of the server on the way.
  Confinement from;
  from.dirfd = info[1].As<Napi::Number>().Int32Value();
  const int fd = OpenPathIfCached(path.c_str(), from);
  if (fd < 0) return errno == EAGAIN ? env.Null() : FailureToJs(env, Failure::Errno(errno, Syscall::kStat));
  struct statx stx {};
  const int err = statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &stx) < 0 ? errno : 0;
  close(fd);
  if (err != 0) return FailureToJs(env, Failure::Errno(err, Syscall::kStat));
  return Napi::Value(env, StatToJs(env, StatFromStatx(stx)));
}

Napi::Value StatAsync(const Napi::CallbackInfo& info, bool confined) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  auto job = std::make_unique<StatJob>();
  job->path = path.c_str();
  job->confined = confined;
  if (confined) {
    job->confinement = ConfinementFromJs(info, 1);
  } else {
    job->confinement.dirfd = info[1].As<Napi::Number>().Int32Value();
  }
  return Napi::Value(env, PoolJob::Start(env, std::move(job), confined ? "smartread:statBeneath" : "smartread:statAt"));
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

Napi::Value OpenBeneathAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  auto job = std::make_unique<OpenJob>();
  job->path = path.c_str();
  job->flags = info[1].As<Napi::Number>().Int32Value();
  job->confinement = ConfinementFromJs(info, 2);
  return Napi::Value(env, PoolJob::Start(env, std::move(job), "smartread:openBeneath"));
}

Napi::Value OpensWaitBeneath(const Napi::CallbackInfo& info, Instance& instance) {
  Napi::Env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return Napi::Boolean::New(env, false);
  const Confinement confinement = ConfinementFromJs(info, 1);
  const int dirfd = confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD;
  const dev_t dev = CachedNameDevice(path.c_str(), dirfd, confinement.resolve);
  return Napi::Boolean::New(env, dev != 0 && instance.blind->OpensMayWait(dev));
}

Napi::Value FileAsksServer(const Napi::CallbackInfo& info, Instance& instance) {
  const dev_t dev = CachedDevice(info[0].As<Napi::Number>().Int32Value());
  return Napi::Boolean::New(info.Env(), dev != 0 && instance.blind->OpensMayWait(dev));
}

}  // namespace smartread
