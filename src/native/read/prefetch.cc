// SPDX-License-Identifier: MIT
// Readahead for files about to be read: one PoolJob for the whole list (one thread hop, not one
// per file) opens, advises and closes each file, and settles with what was started and what
// failed.
#include "prefetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "../common/args.h"
#include "../common/errors.h"
#include "../common/pool_job.h"

namespace smartread {

namespace {

struct PrefetchFailure {
  uint32_t index;
  Failure failure;
};

class PrefetchJob final : public PoolJob {
 public:
  std::vector<std::string> paths;

 private:
  void Execute() override {
    for (uint32_t i = 0; i < paths.size(); i++) {
      const int fd = open(paths[i].c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) {
        failures_.push_back({i, Failure::Errno(errno, Syscall::kOpen)});
        continue;
      }
      struct stat st;
      if (fstat(fd, &st) < 0) {
        failures_.push_back({i, Failure::Errno(errno, Syscall::kFstat)});
      } else if (S_ISREG(st.st_mode)) {
        const int err = posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
        if (err != 0) {
          failures_.push_back({i, Failure::Errno(err, Syscall::kFadvise)});
        } else {
          started_++;
        }
      }
      close(fd);
    }
  }

  // { started, failures: [{ errno, syscall, index }] }
  napi_value Settle(napi_env env) override {
    napi_value result, started, failures;
    if (napi_create_object(env, &result) != napi_ok ||
        napi_create_uint32(env, started_, &started) != napi_ok ||
        napi_create_array_with_length(env, failures_.size(), &failures) != napi_ok) {
      return nullptr;
    }
    for (uint32_t k = 0; k < failures_.size(); k++) {
      napi_value index;
      napi_value failure = FailureToJs(Napi::Env(env), failures_[k].failure);
      if (failure == nullptr || napi_create_uint32(env, failures_[k].index, &index) != napi_ok ||
          napi_set_named_property(env, failure, "index", index) != napi_ok ||
          napi_set_element(env, failures, k, failure) != napi_ok) {
        return nullptr;
      }
    }
    if (napi_set_named_property(env, result, "started", started) != napi_ok ||
        napi_set_named_property(env, result, "failures", failures) != napi_ok) {
      return nullptr;
    }
    return result;
  }

  uint32_t started_ = 0;
  std::vector<PrefetchFailure> failures_;
};

}  // namespace

Napi::Value Prefetch(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  auto job = std::make_unique<PrefetchJob>();
  Napi::Array paths = info[0].As<Napi::Array>();
  job->paths.reserve(paths.Length());
  for (uint32_t i = 0; i < paths.Length(); i++) {
    // An element that cannot be had (a getter, or a worker ending: see NumberProperty) ends the call.
    napi_value item;
    if (napi_get_element(env, paths, i, &item) != napi_ok) return Napi::Value();
    job->paths.push_back(ReadTargetFromJs(Napi::Value(env, item)).path);
  }
  return Napi::Value(env, PoolJob::Start(env, std::move(job), "smartread:prefetch"));
}

}  // namespace smartread
