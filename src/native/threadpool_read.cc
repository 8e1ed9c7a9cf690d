// SPDX-License-Identifier: MIT
// The thread-pool engine. Lifecycle of one read (a Napi::AsyncWorker):
//   JS thread:   arguments copied into the worker; the promise is returned; Queue().
//   pool thread: Execute() opens (O_CLOEXEC), fstats, reads into malloc'd memory, closes. It
//                touches no JS value and reports through `failure_`, never by throwing.
//   JS thread:   OnOK() hands the bytes to a Buffer (or a failure object) and settles the
//                promise; the worker then deletes itself. The fd is closed before Execute()
//                returns, so no outcome, abort by the caller included, leaves one open.
#include "threadpool_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "dest_buffer.h"
#include "errors.h"
#include "file_io.h"

namespace smartread {

namespace {

// Results up to this size are copied into a Buffer of Node's; larger ones are handed over as
// external memory, freed by the Buffer's finalizer, so that no large result is copied twice.
constexpr size_t kCopyMax = size_t{64} << 10;
constexpr size_t kFirstChunk = size_t{64} << 10;
// Status napi_no_external_buffers_allowed (Node >= 20.3); a number so that older headers build.
constexpr int kNoExternalBuffersAllowed = 22;

class ReadWorker : public Napi::AsyncWorker {
 public:
  ReadWorker(Napi::Env env, std::string path, int fd, int flags, bool stat_user_fd,
             uint64_t max_length)
      : Napi::AsyncWorker(env, "smartread:threadpoolRead"),
        deferred_(Napi::Promise::Deferred::New(env)),
        path_(std::move(path)),
        user_fd_(fd),
        flags_(flags),
        stat_user_fd_(stat_user_fd),
        max_length_(max_length) {}

  ~ReadWorker() override { free(data_); }

  Napi::Promise Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    if (user_fd_ >= 0) {
      failure_ = ReadFd(user_fd_, false, stat_user_fd_);
      return;
    }
    const int fd = open(path_.c_str(), flags_ | O_CLOEXEC, 0666);
    if (fd < 0) {
      failure_ = Failure::Errno(errno, Syscall::kOpen);
      return;
    }
    failure_ = ReadFd(fd, true, true);
    // Linux releases the descriptor even when close(2) reports EINTR: never retry it.
    if (close(fd) < 0 && !failure_.failed() && errno != EINTR) {
      failure_ = Failure::Errno(errno, Syscall::kClose);
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (failure_.failed()) {
      deferred_.Resolve(FailureToJs(env, failure_));
      return;
    }
    napi_value result;
    if (!HandOver(env, &result)) {
      deferred_.Reject(env.GetAndClearPendingException().Value());
      return;
    }
    deferred_.Resolve(Napi::Value(env, result));
  }

  // Execute() reports through failure_, so this runs only if node-addon-api itself failed.
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Failure ReadFd(int fd, bool own_fd, bool stat_first) {
    if (stat_first) {
      struct stat st;
      if (fstat(fd, &st) < 0) return Failure::Errno(errno, Syscall::kFstat);
      if (S_ISREG(st.st_mode) && st.st_size > 0) {
        const uint64_t size = static_cast<uint64_t>(st.st_size);
        if (size > max_length_) return Failure::TooLarge(size);
        data_ = static_cast<uint8_t*>(malloc(size));
        if (data_ == nullptr) return Failure::Errno(ENOMEM, Syscall::kRead);
        AdviseHugePagesIfLarge(data_, size);
        ssize_t n = FillFromFile(fd, data_, size, own_fd);
        if (n < 0) return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
        length_ = static_cast<size_t>(n);
        return {};
      }
    }
    size_t capacity = kFirstChunk;
    data_ = static_cast<uint8_t*>(malloc(capacity));
    if (data_ == nullptr) return Failure::Errno(ENOMEM, Syscall::kRead);
    return ReadRestToEof(fd, max_length_, &data_, &length_, &capacity);
  }

  // Gives the bytes to a Buffer; false with a pending exception when memory cannot be had.
  bool HandOver(napi_env env, napi_value* out) {
    if (length_ > kCopyMax) {
      napi_status status = napi_create_external_buffer(
          env, length_, data_,
          [](napi_env finalize_env, void* block, void* hint) {
            free(block);
            int64_t ignored;
            napi_adjust_external_memory(finalize_env, -static_cast<int64_t>(reinterpret_cast<size_t>(hint)), &ignored);
          },
          reinterpret_cast<void*>(length_), out);
      if (status == napi_ok) {
        // V8 does not count external bytes by itself: without this, dropped results would be
        // collected late and memory would pile up.
        int64_t ignored;
        napi_adjust_external_memory(env, static_cast<int64_t>(length_), &ignored);
        data_ = nullptr;
        return true;
      }
      if (static_cast<int>(status) != kNoExternalBuffersAllowed) return false;
    }
    return CopyToBuffer(env, data_, length_, out);
  }

  Napi::Promise::Deferred deferred_;
  const std::string path_;
  const int user_fd_;
  const int flags_;
  const bool stat_user_fd_;
  const uint64_t max_length_;
  uint8_t* data_ = nullptr;
  size_t length_ = 0;
  Failure failure_;
};

}  // namespace

Napi::Value ThreadpoolRead(const Napi::CallbackInfo& info, Instance& instance) {
  Napi::Env env = info.Env();
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const bool stat_user_fd = info[2].As<Napi::Boolean>().Value();
  std::string path;
  int fd = -1;
  if (info[0].IsNumber()) {
    fd = info[0].As<Napi::Number>().Int32Value();
  } else if (info[0].IsString()) {
    path = info[0].As<Napi::String>().Utf8Value();
  } else {
    Napi::Buffer<char> bytes = info[0].As<Napi::Buffer<char>>();
    path.assign(bytes.Data(), bytes.Length());
  }
  auto* worker = new ReadWorker(env, std::move(path), fd, flags, stat_user_fd, instance.max_length);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace smartread
