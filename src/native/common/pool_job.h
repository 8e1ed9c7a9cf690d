// SPDX-License-Identifier: MIT
// One job on libuv's thread pool settled as a promise: the lifecycle the pool engines share.
#pragma once

#include <node_api.h>

#include <memory>

namespace smartread {

// The lifecycle of a job (a napi_async_work):
//   JS thread:   the engine copies its arguments into the job and calls Start(), which returns
//                the promise; from then on the job belongs to the queue.
//   pool thread: Execute() does the syscalls. It touches no JS value and keeps what happened
//                (bytes, a failure) in the job.
//   JS thread:   Settle() turns that into the value the promise resolves with (or rejects it
//                itself); then the reference to `keep`, if any, is dropped and the job deleted.
// Raw N-API, not node-addon-api: when a worker is terminated, completions still run while calls
// into JS fail, and node-addon-api would turn such a failure into a fatal error. Here a failed
// call only leaves the promise unsettled, which nobody is left to notice.
class PoolJob {
 public:
  virtual ~PoolJob() = default;

  // Queues the job; its promise, or nullptr with a pending exception (the job is then freed).
  // `keep`, if given, is a JS value whose memory the job uses: held until the job is done.
  static napi_value Start(napi_env env, std::unique_ptr<PoolJob> job, const char* name,
                          napi_value keep = nullptr);

 protected:
  virtual void Execute() = 0;
  // The value to resolve with; nullptr leaves the promise to Settle(), which may have rejected
  // it, or to nobody, when a call into JS failed.
  virtual napi_value Settle(napi_env env) = 0;

  napi_deferred deferred() const { return deferred_; }

 private:
  static void ExecuteOnPool(napi_env env, void* data);
  static void Complete(napi_env env, napi_status status, void* data);

  napi_async_work work_ = nullptr;
  napi_deferred deferred_ = nullptr;
  napi_ref keep_ = nullptr;
};

}  // namespace smartread
