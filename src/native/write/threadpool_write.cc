// SPDX-License-Identifier: MIT
// The thread-pool engine for writes: runs of whole-file writes and of mkdir -p on libuv's pool,
// for where io_uring is unavailable (and for confined writes).
#include "threadpool_write.h"

#include <cerrno>
#include <string>
#include <vector>

#include "../common/args.h"
#include "../common/errors.h"
#include "../common/pool_job.h"
#include "mkdir_all.h"
#include "write_file.h"

namespace smartread {

namespace {

class WriteFilesJob final : public PoolJob {
 public:
  std::vector<WriteRequest> requests;

 private:
  void Execute() override {
    failures_.resize(requests.size());
    for (size_t i = 0; i < requests.size(); i++) failures_[i] = WriteWholeFile(requests[i]);
  }

  napi_value Settle(napi_env env) override {
    napi_value out = nullptr;
    bool any = false;
    for (const Failure& failure : failures_) any = any || failure.failed();
    if (!any) {
      napi_get_undefined(env, &out);
      return out;
    }
    if (napi_create_array_with_length(env, failures_.size(), &out) != napi_ok) return nullptr;
    for (size_t i = 0; i < failures_.size(); i++) {
      if (!failures_[i].failed()) continue;
      napi_value failure = FailureToJs(Napi::Env(env), failures_[i]);
      if (failure == nullptr || napi_set_element(env, out, static_cast<uint32_t>(i), failure) != napi_ok) return nullptr;
    }
    return out;
  }

  std::vector<Failure> failures_;
};

class MkdirManyJob final : public PoolJob {
 public:
  std::vector<std::string> paths;
  mode_t mode = 0777;
  Confinement confinement;
  std::shared_ptr<KnownDirs> known;
  // A byte the JS thread sets (to non-zero) after an abort: the paths not begun by then are
  // left unmade and fail with ECANCELED (as WriteRequest::stop). Null where none was given.
  const uint8_t* stop = nullptr;

 private:
  // failed_'s mark for a path stopped before it was begun: it failed at no level.
  static constexpr int64_t kStopped = -2;

  void Execute() override {
    const DirSyscalls syscalls(confinement);
    results_.resize(paths.size());
    failed_.resize(paths.size());
    for (size_t i = 0; i < paths.size(); i++) {
      if (stop != nullptr && __atomic_load_n(stop, __ATOMIC_RELAXED) != 0) {
        results_[i] = -static_cast<int64_t>(ECANCELED) - 2;
        failed_[i] = kStopped;
        continue;
      }
      int64_t first = -1;
      // For fs.mkdir's callers: its asynchronous walk's errors.
      const int err = MkdirAll(paths[i], mode, confinement.confined() ? nullptr : known.get(), syscalls, true,
                               &first, &failed_[i]);
      results_[i] = err != 0 ? -static_cast<int64_t>(err) - 2 : first;
    }
  }

  napi_value Settle(napi_env env) override {
    napi_value out = nullptr;
    if (napi_create_array_with_length(env, results_.size(), &out) != napi_ok) return nullptr;
    for (size_t i = 0; i < results_.size(); i++) {
      napi_value value = nullptr;
      if (results_[i] >= -1) {
        if (napi_create_double(env, static_cast<double>(results_[i]), &value) != napi_ok) return nullptr;
      } else {
        const int err = static_cast<int>(-(results_[i] + 2));
        value = failed_[i] == kStopped ? FailureToJs(Napi::Env(env), Failure::Errno(err, Syscall::kMkdir))
                                       : MkdirFailureToJs(env, err, failed_[i]);
        if (value == nullptr) return nullptr;
      }
      if (napi_set_element(env, out, static_cast<uint32_t>(i), value) != napi_ok) return nullptr;
    }
    return out;
  }

  // The first directory made's length, -1 for none, or -(errno + 2); and the level a failure
  // happened at.
  std::vector<int64_t> results_;
  std::vector<int64_t> failed_;
};

// The stop byte of a run at info[index] (a Uint8Array whose first byte the engine sets to stop
// it: WriteRequest::stop, MkdirManyJob::stop): true with *stop null where none is given, false
// where the argument is not one.
bool StopByteArg(napi_env env, const Napi::CallbackInfo& info, size_t index, const uint8_t** stop) {
  *stop = nullptr;
  if (info.Length() <= index || info[index].IsUndefined()) return true;
  napi_typedarray_type type;
  size_t length = 0;
  uint8_t* bytes = nullptr;
  if (napi_get_typedarray_info(env, info[index], &type, &length, reinterpret_cast<void**>(&bytes), nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array || length < 1) {
    return false;
  }
  *stop = bytes;
  return true;
}

}  // namespace

Napi::Value ThreadpoolWriteFiles(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  napi_value targets = info[0];
  napi_value datas = info[1];
  uint32_t count = 0;
  uint32_t* modes = nullptr;
  size_t modes_length = 0;
  napi_typedarray_type type;
  // Raw N-API throughout (WriteTargetFromJs): under a worker's termination, nothing starts.
  if (!ArrayLength(env, targets, &count) ||
      napi_get_typedarray_info(env, info[2], &type, &modes_length, reinterpret_cast<void**>(&modes), nullptr, nullptr) != napi_ok ||
      type != napi_uint32_array || modes_length < count) {
    return Napi::Value();
  }
  auto job = std::make_unique<WriteFilesJob>();
  job->requests.resize(count);
  const int flags = info[3].As<Napi::Number>().Int32Value();
  const bool flush = BoolArg(env, info[4]);
  const Atomic atomic = static_cast<Atomic>(info[5].As<Napi::Number>().Uint32Value());
  const Confinement confinement = ConfinementFromJs(info, 6);
  // info[8]: a Uint8Array whose first byte the engine sets to stop the run (WriteRequest::stop);
  // held with the datas until the job is done.
  const uint8_t* stop = nullptr;
  napi_value keep = datas;
  if (!StopByteArg(env, info, 8, &stop) ||
      (stop != nullptr && (napi_create_array_with_length(env, 2, &keep) != napi_ok ||
                           napi_set_element(env, keep, 0, datas) != napi_ok || napi_set_element(env, keep, 1, info[8]) != napi_ok))) {
    return Napi::Value();
  }
  for (uint32_t i = 0; i < count; i++) {
    WriteRequest& request = job->requests[i];
    napi_value target, data;
    uint8_t* bytes = nullptr;
    if (!ArrayElement(env, targets, i, &target) || !ArrayElement(env, datas, i, &data) ||
        !WriteTargetFromJs(env, target, &request.target) || !ViewBytes(env, data, &bytes, &request.length)) {
      return Napi::Value();
    }
    request.data = bytes;
    request.flags = flags;
    request.mode = static_cast<mode_t>(modes[i]);
    request.flush = flush;
    request.atomic = atomic;
    request.confinement = confinement;
    request.stop = stop;
  }
  return Napi::Value(env, PoolJob::Start(env, std::move(job), "smartread:threadpoolWriteFiles", keep));
}

Napi::Value ThreadpoolMkdirMany(const Napi::CallbackInfo& info, const std::shared_ptr<KnownDirs>& known) {
  napi_env env = info.Env();
  napi_value paths = info[0];
  uint32_t count = 0;
  if (!ArrayLength(env, paths, &count)) return Napi::Value();
  auto job = std::make_unique<MkdirManyJob>();
  job->paths.resize(count);
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    ReadTarget target;
    if (!ArrayElement(env, paths, i, &element) || !WriteTargetFromJs(env, element, &target)) return Napi::Value();
    job->paths[i] = std::move(target.path);
  }
  job->mode = static_cast<mode_t>(info[1].As<Napi::Number>().Uint32Value());
  job->confinement = ConfinementFromJs(info, 2);
  job->known = known;
  // info[4]: the stop byte's Uint8Array (MkdirManyJob::stop), held until the job is done.
  if (!StopByteArg(env, info, 4, &job->stop)) return Napi::Value();
  napi_value keep = job->stop != nullptr ? static_cast<napi_value>(info[4]) : nullptr;
  return Napi::Value(env, PoolJob::Start(env, std::move(job), "smartread:threadpoolMkdirMany", keep));
}

}  // namespace smartread
