// SPDX-License-Identifier: MIT
// Module init: one Instance per Node environment, released by the environment's cleanup hook.
#include <napi.h>

#include "instance.h"
#include "sync_read.h"

namespace smartread {

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) {
    // Instance data is finalized late in teardown; the cleanup hook releases resources as soon
    // as the environment (main thread or worker) begins to exit. Close() is idempotent.
    env.AddCleanupHook([this] { instance_.Close(); });
    Napi::Object features = Napi::Object::New(env);
#ifdef HAVE_LIBURING
    features.Set("liburing", true);
#else
    features.Set("liburing", false);
#endif
    DefineAddon(exports, {
        InstanceMethod("setup", &Addon::Setup),
        InstanceMethod("readFileSync", &Addon::ReadFileSyncMethod),
        InstanceValue("features", features, napi_enumerable),
    });
  }
  ~Addon() { instance_.Close(); }

 private:
  // setup({ maxLength }): facts of this runtime that only JS can read.
  Napi::Value Setup(const Napi::CallbackInfo& info) {
    Napi::Object options = info[0].As<Napi::Object>();
    instance_.max_length =
        static_cast<uint64_t>(options.Get("maxLength").As<Napi::Number>().DoubleValue());
    return info.Env().Undefined();
  }

  Napi::Value ReadFileSyncMethod(const Napi::CallbackInfo& info) {
    return ReadFileSync(info, instance_);
  }

  Instance instance_;
};

}  // namespace smartread

using smartread::Addon;
NODE_API_ADDON(Addon)
