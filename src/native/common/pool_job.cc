// SPDX-License-Identifier: MIT
// One job on libuv's thread pool settled as a promise: the lifecycle the pool engines share.
#include "pool_job.h"

namespace smartread {

napi_value PoolJob::Start(napi_env env, std::unique_ptr<PoolJob> job, const char* name,
                          napi_value keep) {
  napi_value promise = nullptr;
  napi_value resource_name;
  if (napi_create_promise(env, &job->deferred_, &promise) != napi_ok ||
      (keep != nullptr && napi_create_reference(env, keep, 1, &job->keep_) != napi_ok) ||
      napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_create_async_work(env, nullptr, resource_name, ExecuteOnPool, Complete, job.get(),
                             &job->work_) != napi_ok) {
    if (job->keep_ != nullptr) napi_delete_reference(env, job->keep_);
    return nullptr;
  }
  if (napi_queue_async_work(env, job->work_) != napi_ok) {
    napi_delete_async_work(env, job->work_);
    if (job->keep_ != nullptr) napi_delete_reference(env, job->keep_);
    return nullptr;
  }
  job.release();
  return promise;
}

void PoolJob::ExecuteOnPool(napi_env, void* data) { static_cast<PoolJob*>(data)->Execute(); }

void PoolJob::Complete(napi_env env, napi_status status, void* data) {
  std::unique_ptr<PoolJob> job(static_cast<PoolJob*>(data));
  napi_delete_async_work(env, job->work_);
  if (status == napi_ok) {
    napi_value result = job->Settle(env);
    if (result != nullptr) napi_resolve_deferred(env, job->deferred_, result);
  }
  if (job->keep_ != nullptr) napi_delete_reference(env, job->keep_);
}

}  // namespace smartread
