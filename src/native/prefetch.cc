// SPDX-License-Identifier: MIT
// Readahead for files about to be read. Lifecycle of one prefetch (a napi_async_work):
//   JS thread:   the paths are copied into a PrefetchJob; the promise is returned.
//   pool thread: Execute() opens, advises and closes each file, recording failures as data.
//   JS thread:   Complete() resolves with what was started and what failed, and frees the job.
// One thread hop for the whole list, not one per file. Raw N-API, as threadpool_read.cc.
#include "prefetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "errors.h"

namespace smartread {

namespace {

struct PrefetchFailure {
  uint32_t index;
  Failure failure;
};

struct PrefetchJob {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  std::vector<std::string> paths;
  uint32_t started = 0;
  std::vector<PrefetchFailure> failures;
};

void Execute(napi_env, void* arg) {
  PrefetchJob* job = static_cast<PrefetchJob*>(arg);
  for (uint32_t i = 0; i < job->paths.size(); i++) {
    const int fd = open(job->paths[i].c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      job->failures.push_back({i, Failure::Errno(errno, Syscall::kOpen)});
      continue;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
      job->failures.push_back({i, Failure::Errno(errno, Syscall::kFstat)});
    } else if (S_ISREG(st.st_mode)) {
      const int err = posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
      if (err != 0) {
        job->failures.push_back({i, Failure::Errno(err, Syscall::kFadvise)});
      } else {
        job->started++;
      }
    }
    close(fd);
  }
}

void Complete(napi_env env, napi_status status, void* arg) {
  std::unique_ptr<PrefetchJob> job(static_cast<PrefetchJob*>(arg));
  napi_delete_async_work(env, job->work);
  if (status != napi_ok) return;
  napi_value result, started, failures;
  if (napi_create_object(env, &result) != napi_ok ||
      napi_create_uint32(env, job->started, &started) != napi_ok ||
      napi_create_array_with_length(env, job->failures.size(), &failures) != napi_ok) {
    return;
  }
  for (uint32_t k = 0; k < job->failures.size(); k++) {
    napi_value index;
    napi_value failure = FailureToJs(Napi::Env(env), job->failures[k].failure);
    if (failure == nullptr || napi_create_uint32(env, job->failures[k].index, &index) != napi_ok ||
        napi_set_named_property(env, failure, "index", index) != napi_ok ||
        napi_set_element(env, failures, k, failure) != napi_ok) {
      return;
    }
  }
  if (napi_set_named_property(env, result, "started", started) != napi_ok ||
      napi_set_named_property(env, result, "failures", failures) != napi_ok) {
    return;
  }
  napi_resolve_deferred(env, job->deferred, result);
}

}  // namespace

Napi::Value Prefetch(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  auto job = std::make_unique<PrefetchJob>();
  Napi::Array paths = info[0].As<Napi::Array>();
  job->paths.reserve(paths.Length());
  for (uint32_t i = 0; i < paths.Length(); i++) job->paths.push_back(ReadTargetFromJs(paths.Get(i)).path);
  napi_value promise = nullptr;
  napi_value name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "smartread:prefetch", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, nullptr, name, Execute, Complete, job.get(), &job->work) != napi_ok) {
    return Napi::Value(env, nullptr);
  }
  if (napi_queue_async_work(env, job->work) != napi_ok) {
    napi_delete_async_work(env, job->work);
    return Napi::Value(env, nullptr);
  }
  job.release();
  return Napi::Value(env, promise);
}

}  // namespace smartread
