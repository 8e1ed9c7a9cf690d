// SPDX-License-Identifier: MIT
// The thread-pool engine: one PoolJob per read opens (O_CLOEXEC), fstats, reads into malloc'd
// memory and closes on a pool thread, then hands the bytes to a Buffer (or a failure object)
// on the JS thread. The fd is closed before Execute() returns, so no outcome, abort by the
// caller included, leaves one open.
#include "threadpool_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>

#include "../common/args.h"
#include "../common/block_pool.h"
#include "../common/dest_buffer.h"
#include "../common/errors.h"
#include "../common/file_io.h"
#include "../common/pool_job.h"

namespace smartread {

namespace {

// Results up to this size are copied into a Buffer of Node's; larger ones are handed over as
// external memory, freed by the Buffer's finalizer, so that no large result is copied twice.
constexpr size_t kCopyMax = size_t{64} << 10;
constexpr size_t kFirstChunk = size_t{64} << 10;
// Status napi_no_external_buffers_allowed (Node >= 20.3); a number so that older headers build.
constexpr int kNoExternalBuffersAllowed = 22;

class ReadJob final : public PoolJob {
 public:
  ReadTarget target;
  int flags = 0;
  Confinement confinement;
  bool stat_user_fd = true;
  uint64_t max_length = 0;
  // The environment's pool, which a large result's destination is taken from.
  std::shared_ptr<BlockPool> blocks;

  ~ReadJob() override {
    if (block.data != nullptr) {
      blocks->Give(block);
    } else {
      free(data);
    }
  }

 private:
  void Execute() override;
  napi_value Settle(napi_env env) override;

  Failure ReadFd(int fd, bool own_fd, bool stat_first) {
    if (stat_first) {
      struct stat st;
      if (fstat(fd, &st) < 0) return Failure::Errno(errno, Syscall::kFstat);
      if (S_ISREG(st.st_mode) && st.st_size > 0) {
        const uint64_t size = static_cast<uint64_t>(st.st_size);
        if (size > max_length) return Failure::TooLarge(size);
        if (blocks && blocks->Wants(size)) block = blocks->Take(size);
        if (block.data != nullptr) {
          data = block.data;
        } else {
          data = static_cast<uint8_t*>(malloc(size));
          if (data == nullptr) return Failure::Errno(ENOMEM, Syscall::kRead);
          AdviseHugePagesIfLarge(data, size);
        }
        ssize_t n = FillFromFile(fd, data, size, own_fd);
        if (n < 0) return Failure::Errno(static_cast<int>(-n), Syscall::kRead);
        length = static_cast<size_t>(n);
        return {};
      }
    }
    size_t capacity = kFirstChunk;
    data = static_cast<uint8_t*>(malloc(capacity));
    if (data == nullptr) return Failure::Errno(ENOMEM, Syscall::kRead);
    return ReadRestToEof(fd, max_length, &data, &length, &capacity);
  }

  // Gives the bytes to a Buffer; false with a pending exception when memory cannot be had.
  bool HandOver(napi_env env, napi_value* out) {
    if (block.data != nullptr) {
      const Block lent = block;
      block = Block{};
      data = nullptr;
      return blocks->Lend(env, lent, length, out);
    }
    if (length > kCopyMax) {
      napi_status status = napi_create_external_buffer(
          env, length, data,
          [](napi_env finalize_env, void* block, void* hint) {
            free(block);
            int64_t ignored;
            napi_adjust_external_memory(
                finalize_env, -static_cast<int64_t>(reinterpret_cast<size_t>(hint)), &ignored);
          },
          reinterpret_cast<void*>(length), out);
      if (status == napi_ok) {
        // V8 does not count external bytes by itself: without this, dropped results would be
        // collected late and memory would pile up.
        int64_t ignored;
        napi_adjust_external_memory(env, static_cast<int64_t>(length), &ignored);
        data = nullptr;
        return true;
      }
      if (static_cast<int>(status) != kNoExternalBuffersAllowed) return false;
    }
    return CopyToBuffer(env, data, length, out);
  }

  // The destination: a block of the pool (block.data), or else malloc'd memory.
  Block block;
  uint8_t* data = nullptr;
  size_t length = 0;
  Failure failure;
};

void ReadJob::Execute() {
  if (target.fd >= 0) {
    failure = ReadFd(target.fd, false, stat_user_fd);
    return;
  }
  const int fd = OpenForRead(target.path.c_str(), flags, confinement);
  if (fd < 0) {
    failure = Failure::Errno(errno, Syscall::kOpen);
    return;
  }
  failure = ReadFd(fd, true, true);
  // Linux releases the descriptor even when close(2) reports EINTR: never retry it.
  if (close(fd) < 0 && !failure.failed() && errno != EINTR) failure = Failure::Errno(errno, Syscall::kClose);
}

napi_value ReadJob::Settle(napi_env env) {
  if (failure.failed()) return FailureToJs(Napi::Env(env), failure);
  napi_value result = nullptr;
  if (!HandOver(env, &result)) {
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_reject_deferred(env, deferred(), error);
    return nullptr;
  }
  return result;
}

}  // namespace

Napi::Value ThreadpoolRead(const Napi::CallbackInfo& info, Instance& instance) {
  napi_env env = info.Env();
  auto job = std::make_unique<ReadJob>();
  job->target = ReadTargetFromJs(info[0]);
  job->flags = info[1].As<Napi::Number>().Int32Value();
  job->stat_user_fd = info[2].As<Napi::Boolean>().Value();
  job->confinement = ConfinementFromJs(info, 3);
  job->max_length = instance.max_length;
  job->blocks = instance.blocks;
  return Napi::Value(env, PoolJob::Start(env, std::move(job), "smartread:threadpoolRead"));
}

}  // namespace smartread
