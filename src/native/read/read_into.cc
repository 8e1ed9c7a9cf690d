// SPDX-License-Identifier: MIT
// Positional reads into the caller's memory: on the calling thread, or on libuv's pool (a
// PoolJob that holds the view until it is done, and settles with the count or a failure).
#include "read_into.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "../common/args.h"
#include "../common/errors.h"
#include "../common/file_io.h"
#include "../common/pool_job.h"

namespace smartread {

namespace {

struct Request {
  uint8_t* data = nullptr;
  size_t length = 0;
  int64_t position = 0;
};

// One read(2) or pread(2) of a user's fd, as fs.readSync does: a short count is the caller's.
ssize_t ReadFdOnce(int fd, const Request& req) {
  for (;;) {
    const ssize_t n = req.position < 0 ? read(fd, req.data, req.length)
                                       : pread(fd, req.data, req.length, static_cast<off_t>(req.position));
    if (n >= 0 || errno != EINTR) return n < 0 ? -errno : n;
  }
}

// A path's bytes from `position`: open, read until full or EOF, close.
Failure ReadPath(const char* path, const Request& req, ssize_t* count) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Failure::Errno(errno, Syscall::kOpen);
  const ssize_t n = ReadFully(fd, req.data, req.length, req.position < 0 ? 0 : req.position);
  Failure failure;
  if (n < 0) failure = Failure::Errno(static_cast<int>(-n), Syscall::kRead);
  // Linux releases the descriptor even when close(2) reports EINTR: never retry it.
  if (close(fd) < 0 && !failure.failed() && errno != EINTR) failure = Failure::Errno(errno, Syscall::kClose);
  *count = n;
  return failure;
}

Failure ReadUserFd(int fd, const Request& req, ssize_t* count) {
  *count = ReadFdOnce(fd, req);
  if (*count < 0) return Failure::Errno(static_cast<int>(-*count), Syscall::kRead);
  return {};
}

bool RequestFromJs(const Napi::CallbackInfo& info, Request* req) {
  uint8_t* data;
  size_t byte_length;
  if (!ViewBytes(info.Env(), info[1], &data, &byte_length)) {
    napi_throw_type_error(info.Env(), nullptr, "buffer must be an ArrayBufferView");
    return false;
  }
  req->data = data + static_cast<size_t>(info[2].As<Napi::Number>().Int64Value());
  req->length = static_cast<size_t>(info[3].As<Napi::Number>().Int64Value());
  // A bigint where a number would not hold the offset exactly (past 2^53); JS checked its range.
  if (info[4].IsBigInt()) {
    bool lossless;
    req->position = info[4].As<Napi::BigInt>().Int64Value(&lossless);
  } else {
    req->position = info[4].As<Napi::Number>().Int64Value();
  }
  return true;
}

class ReadIntoJob final : public PoolJob {
 public:
  ReadTarget target;
  Request req;

 private:
  void Execute() override {
    failure_ = target.fd >= 0 ? ReadUserFd(target.fd, req, &count_) : ReadPath(target.path.c_str(), req, &count_);
  }
  napi_value Settle(napi_env env) override {
    if (failure_.failed()) return FailureToJs(Napi::Env(env), failure_);
    napi_value result = nullptr;
    napi_create_double(env, static_cast<double>(count_), &result);
    return result;
  }

  ssize_t count_ = 0;
  Failure failure_;
};

}  // namespace

Napi::Value ReadIntoSync(const Napi::CallbackInfo& info) {
  Request req;
  if (!RequestFromJs(info, &req)) return info.Env().Undefined();
  ssize_t count = 0;
  Failure failure;
  if (info[0].IsNumber()) {
    failure = ReadUserFd(info[0].As<Napi::Number>().Int32Value(), req, &count);
  } else {
    PathArg path;
    if (!path.From(info.Env(), info[0], &failure)) return FailureToJs(info.Env(), failure);
    failure = ReadPath(path.c_str(), req, &count);
  }
  if (failure.failed()) return FailureToJs(info.Env(), failure);
  return Napi::Number::New(info.Env(), static_cast<double>(count));
}

Napi::Value ReadIntoAsync(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  auto job = std::make_unique<ReadIntoJob>();
  if (!RequestFromJs(info, &job->req)) return Napi::Value(env, nullptr);
  job->target = ReadTargetFromJs(info[0]);
  return Napi::Value(env, PoolJob::Start(env, std::move(job), "smartread:readInto", info[1]));
}

Napi::Value AdviseRandom(const Napi::CallbackInfo& info) {
  const int err = posix_fadvise(info[0].As<Napi::Number>().Int32Value(), 0, 0, POSIX_FADV_RANDOM);
  if (err != 0) return FailureToJs(info.Env(), Failure::Errno(err, Syscall::kFadvise));
  return info.Env().Undefined();
}

}  // namespace smartread
