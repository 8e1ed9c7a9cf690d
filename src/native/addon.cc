// SPDX-License-Identifier: MIT
// Module init: one Instance per Node environment, released by the environment's cleanup hook.
#include <napi.h>

#include "instance.h"
#include "page_cache.h"
#include "sync_read.h"
#include "threadpool_read.h"

namespace smartread {

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) : env_(env) {
    // Instance data is finalized late in teardown; the cleanup hook releases resources as soon
    // as the environment (main thread or worker) begins to exit. Close() is idempotent.
    env.AddCleanupHook([this, env] { instance_.Close(env); });
    Napi::Object features = Napi::Object::New(env);
#ifdef HAVE_LIBURING
    features.Set("liburing", true);
#else
    features.Set("liburing", false);
#endif
    DefineAddon(exports, {
        InstanceMethod("setup", &Addon::Setup),
        InstanceMethod("setPool", &Addon::SetPool),
        InstanceMethod("readFileSync", &Addon::ReadFileSyncMethod),
        InstanceMethod("threadpoolRead", &Addon::ThreadpoolReadMethod),
        InstanceMethod("evictFromPageCache", &Addon::EvictMethod),
        InstanceMethod("pageCacheResidency", &Addon::ResidencyMethod),
        InstanceValue("features", features, napi_enumerable),
    });
  }
  ~Addon() { instance_.Close(env_); }

 private:
  // setup({ maxLength }): facts of this runtime that only JS can read.
  Napi::Value Setup(const Napi::CallbackInfo& info) {
    Napi::Object options = info[0].As<Napi::Object>();
    instance_.max_length =
        static_cast<uint64_t>(options.Get("maxLength").As<Napi::Number>().DoubleValue());
    return info.Env().Undefined();
  }

  // setPool(buffer): the slab small results are read into from now on.
  Napi::Value SetPool(const Napi::CallbackInfo& info) {
    Napi::Buffer<uint8_t> pool = info[0].As<Napi::Buffer<uint8_t>>();
    if (instance_.pool_ref != nullptr) napi_delete_reference(env_, instance_.pool_ref);
    napi_create_reference(env_, pool, 1, &instance_.pool_ref);
    instance_.pool_data = pool.Data();
    instance_.pool_length = pool.Length();
    return info.Env().Undefined();
  }

  Napi::Value ReadFileSyncMethod(const Napi::CallbackInfo& info) {
    return ReadFileSync(info, instance_);
  }

  Napi::Value ThreadpoolReadMethod(const Napi::CallbackInfo& info) {
    return ThreadpoolRead(info, instance_);
  }

  Napi::Value EvictMethod(const Napi::CallbackInfo& info) { return EvictFromPageCache(info); }
  Napi::Value ResidencyMethod(const Napi::CallbackInfo& info) { return PageCacheResidency(info); }

  napi_env env_;
  Instance instance_;
};

}  // namespace smartread

using smartread::Addon;
NODE_API_ADDON(Addon)
