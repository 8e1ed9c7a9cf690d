// SPDX-License-Identifier: MIT
// Module init: one Instance per Node environment, released by the environment's cleanup hook.
#include <napi.h>
#include <sys/stat.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#define SMARTREAD_HAVE_MALLINFO2 1
#include <dlfcn.h>
#include <malloc.h>
#endif

#include <iterator>

#include "common/args.h"
#include "common/block_pool.h"
#include "common/dest_buffer.h"
#include "read/beneath.h"
#include "read/cached_read.h"
#include "read/cached_run.h"
#include "read/instance.h"
#include "read/mmap_file.h"
#include "read/page_cache.h"
#include "read/prefetch.h"
#include "read/read_into.h"
#include "read/sync_read.h"
#include "read/threadpool_read.h"
#include "uring/cached_batch.h"
#include "uring/mkdir_many.h"
#include "uring/ring.h"
#include "uring/write_many.h"
#include "write/known_dirs.h"
#include "write/mkdir_all.h"
#include "write/threadpool_write.h"
#include "write/write_file.h"

#include <memory>
#include <string>

namespace smartread {

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) : env_(env) {
    // Instance data is finalized late in teardown; the cleanup hook releases resources as soon
    // as the environment (main thread or worker) begins to exit. Close() is idempotent.
    env.AddCleanupHook([this, env] { Close(env); });
    Napi::Object features = Napi::Object::New(env);
#ifdef HAVE_LIBURING
    features.Set("liburing", true);
#else
    features.Set("liburing", false);
#endif
    DefineAddon(exports, {
        InstanceMethod("setup", &Addon::Setup),
        InstanceMethod("setPool", &Addon::SetPool),
        InstanceMethod("tuning", &Addon::GetTuning),
        InstanceMethod("setTuning", &Addon::SetTuning),
        InstanceMethod("blockPoolStats", &Addon::BlockPoolStatsMethod),
        InstanceMethod("blindReadsStats", &Addon::BlindReadsStatsMethod),
        InstanceMethod("mallocInUse", &Addon::MallocInUseMethod),
        InstanceMethod("blindReadsLook", &Addon::BlindReadsLookMethod),
        InstanceMethod("readFileSync", &Addon::ReadFileSyncMethod),
        InstanceMethod("threadpoolRead", &Addon::ThreadpoolReadMethod),
        InstanceMethod("cachedRead", &Addon::CachedReadMethod),
        InstanceMethod("cachedReadBatch", &Addon::CachedReadBatchMethod),
        InstanceMethod("cachedReadRun", &Addon::CachedReadRunMethod),
        InstanceMethod("cachedRunClaim", &Addon::CachedRunClaimMethod),
        InstanceMethod("cachedRunSettle", &Addon::CachedRunSettleMethod),
        InstanceMethod("evictFromPageCache", &Addon::EvictMethod),
        InstanceMethod("prefetch", &Addon::PrefetchMethod),
        InstanceMethod("pageCacheResidency", &Addon::ResidencyMethod),
        InstanceMethod("statBeneath", &Addon::StatBeneathMethod),
        InstanceMethod("statAt", &Addon::StatAtMethod),
        InstanceMethod("statBeneathIfCached", &Addon::StatBeneathIfCachedMethod),
        InstanceMethod("statAtNow", &Addon::StatAtNowMethod),
        InstanceMethod("statBeneathAsync", &Addon::StatBeneathAsyncMethod),
        InstanceMethod("statAtAsync", &Addon::StatAtAsyncMethod),
        InstanceMethod("openBeneath", &Addon::OpenBeneathMethod),
        InstanceMethod("openBeneathAsync", &Addon::OpenBeneathAsyncMethod),
        InstanceMethod("opensWaitBeneath", &Addon::OpensWaitBeneathMethod),
        InstanceMethod("fileAsksServer", &Addon::FileAsksServerMethod),
        InstanceMethod("mapFile", &Addon::MapFileMethod),
        InstanceMethod("unmap", &Addon::UnmapMethod),
        InstanceMethod("readIntoSync", &Addon::ReadIntoSyncMethod),
        InstanceMethod("readIntoAsync", &Addon::ReadIntoAsyncMethod),
        InstanceMethod("adviseRandom", &Addon::AdviseRandomMethod),
        InstanceMethod("writeFileSync", &Addon::WriteFileSyncMethod),
        InstanceMethod("mkdirAllSync", &Addon::MkdirAllSyncMethod),
        InstanceMethod("dirsKnown", &Addon::DirsKnownMethod),
        InstanceMethod("forgetDirs", &Addon::ForgetDirsMethod),
        InstanceMethod("threadpoolWriteFiles", &Addon::ThreadpoolWriteFilesMethod),
        InstanceMethod("threadpoolMkdirMany", &Addon::ThreadpoolMkdirManyMethod),
        InstanceValue("features", features, napi_enumerable),
    });
#ifdef HAVE_LIBURING
    DefineProperties(exports, {
        InstanceMethod("uringStatus", &Addon::UringStatus),
        InstanceMethod("uringRead", &Addon::UringRead),
        InstanceMethod("uringSubmit", &Addon::UringSubmit),
        InstanceMethod("uringCancel", &Addon::UringCancel),
        InstanceMethod("uringRegisterFile", &Addon::UringRegisterFile),
        InstanceMethod("uringUnregisterFile", &Addon::UringUnregisterFile),
        InstanceMethod("uringReadAt", &Addon::UringReadAt),
        InstanceMethod("uringCanLookUp", &Addon::UringCanLookUp),
        InstanceMethod("uringLookUp", &Addon::UringLookUp),
        InstanceMethod("uringOpenBeneath", &Addon::UringOpenBeneath),
        InstanceMethod("uringWriteSupport", &Addon::UringWriteSupport),
        InstanceMethod("uringWriteFiles", &Addon::UringWriteFiles),
        InstanceMethod("uringMkdirMany", &Addon::UringMkdirMany),
        InstanceMethod("uringCancelBatch", &Addon::UringCancelBatch),
    });
#endif
  }
  ~Addon() { Close(env_); }

 private:
  // Idempotent: the cleanup hook, then the destructor.
  void Close(napi_env env) {
    instance_.Close(env);
#ifdef HAVE_LIBURING
    cached_batch_.reset();
#endif
  }

  // setup({ maxLength, hugePages, blockPoolFrom }): facts of this runtime that only JS can read.
  Napi::Value Setup(const Napi::CallbackInfo& info) {
    napi_env env = info.Env();
    napi_value options = info[0];
    double max_length;
    bool huge_pages;
    double block_pool_from;
    // Nothing is set unless every option could be read (see NumberProperty).
    if (!NumberProperty(env, options, "maxLength", &max_length) ||
        !BoolProperty(env, options, "hugePages", &huge_pages) ||
        !NumberProperty(env, options, "blockPoolFrom", &block_pool_from)) {
      return BadArgument(env, "setup(options): options.maxLength and options.blockPoolFrom must be numbers");
    }
    instance_.max_length = static_cast<uint64_t>(max_length);
    // A fact of the machine (src/ts/engine/huge_pages.ts decides it), the same in every environment.
    SetHugePageAdvice(huge_pages);
    // Which results the pool takes by default depends on the runtime's V8 (src/ts/engine/tuning.ts).
    instance_.tuning.block_pool.from = static_cast<uint64_t>(block_pool_from);
    if (!instance_.blocks) {
      instance_.blocks = BlockPool::Create(env_);
      if (instance_.blocks) instance_.blocks->SetLimits(instance_.tuning.block_pool);
    }
    return info.Env().Undefined();
  }

  // tuning() -> the addon's part of the Tuning (src/ts/engine/tuning.ts names its fields)
  Napi::Value GetTuning(const Napi::CallbackInfo& info) {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("fastPathBudgetUs", static_cast<double>(instance_.tuning.fast_path_budget_us));
    out.Set("copyRateMBps", static_cast<double>(instance_.tuning.copy_rate_mb_per_s));
    out.Set("uringChunk", static_cast<double>(instance_.tuning.uring_chunk));
    out.Set("uringInFlight", instance_.tuning.uring_in_flight);
    out.Set("uringAsyncFrom", static_cast<double>(instance_.tuning.uring_async_from));
    out.Set("blockPoolFrom", static_cast<double>(instance_.tuning.block_pool.from));
    out.Set("blockPoolMaxBytes", static_cast<double>(instance_.tuning.block_pool.max_bytes));
    out.Set("blockPoolIdleMs", static_cast<double>(instance_.tuning.block_pool.idle_ms));
    return out;
  }

  // setTuning(tuning): every field of tuning(),
  // validated in JS. Reads already started keep what they began with.
  Napi::Value SetTuning(const Napi::CallbackInfo& info) {
    napi_env env = info.Env();
    napi_value in = info[0];
    static constexpr const char* kFields[] = {"fastPathBudgetUs", "copyRateMBps", "uringChunk", "uringInFlight",
                                              "uringAsyncFrom", "blockPoolFrom", "blockPoolMaxBytes", "blockPoolIdleMs"};
    double v[std::size(kFields)];
    // All or nothing (see NumberProperty).
    for (size_t i = 0; i < std::size(kFields); i++) {
      if (!NumberProperty(env, in, kFields[i], &v[i])) return BadArgument(env, "setTuning(tuning): every field must be a number");
    }
    Tuning& t = instance_.tuning;
    t.fast_path_budget_us = static_cast<uint64_t>(v[0]);
    t.copy_rate_mb_per_s = static_cast<uint64_t>(v[1]);
    t.uring_chunk = static_cast<uint64_t>(v[2]);
    t.uring_in_flight = static_cast<uint32_t>(v[3]);
    t.uring_async_from = static_cast<uint64_t>(v[4]);
    t.block_pool.from = static_cast<uint64_t>(v[5]);
    t.block_pool.max_bytes = static_cast<uint64_t>(v[6]);
    t.block_pool.idle_ms = static_cast<uint64_t>(v[7]);
    if (instance_.blocks) instance_.blocks->SetLimits(t.block_pool);
    return info.Env().Undefined();
  }

  // blockPoolStats() -> { idleBytes, idleBlocks, lentBytes, lentBlocks, hits, misses, released,
  //                     declined, processBytes },
  // or null where the environment has no pool.
  Napi::Value BlockPoolStatsMethod(const Napi::CallbackInfo& info) {
    if (!instance_.blocks) return info.Env().Null();
    const BlockPoolStats stats = instance_.blocks->Stats();
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("idleBytes", static_cast<double>(stats.idle_bytes));
    out.Set("idleBlocks", static_cast<double>(stats.idle_blocks));
    out.Set("lentBytes", static_cast<double>(stats.lent_bytes));
    out.Set("lentBlocks", static_cast<double>(stats.lent_blocks));
    out.Set("hits", static_cast<double>(stats.hits));
    out.Set("misses", static_cast<double>(stats.misses));
    out.Set("released", static_cast<double>(stats.released));
    out.Set("declined", static_cast<double>(stats.declined));
    out.Set("processBytes", static_cast<double>(stats.process_bytes));
    return out;
  }

  // mallocInUse() -> the bytes malloc has handed out and not had back, in its arenas and in
  // its own mappings (glibc's mallinfo2: uordblks + hblkhd), or null where that cannot be asked
  // (not glibc, or a glibc before 2.33 at build or at run time). RSS cannot tell memory still
  // held from memory freed but kept by the arenas; this can (the soak test's leak check).
  // mallinfo2 is looked up at run time, so that a prebuilt addon still loads on an older glibc.
  Napi::Value MallocInUseMethod(const Napi::CallbackInfo& info) {
#ifdef SMARTREAD_HAVE_MALLINFO2
    using MallInfo2 = struct mallinfo2 (*)();
    static const auto mallinfo2_fn = reinterpret_cast<MallInfo2>(dlsym(RTLD_DEFAULT, "mallinfo2"));
    if (mallinfo2_fn != nullptr) {
      const struct mallinfo2 m = mallinfo2_fn();
      return Napi::Number::New(info.Env(), static_cast<double>(m.uordblks + m.hblkhd));
    }
#endif
    return info.Env().Null();
  }

  // blindReadsStats() -> { firstRead, recentRead, resident, notResident, cooling, misjudged }:
  // the fast path's judgements on filesystems that refuse RWF_NOWAIT (see BlindReads).
  Napi::Value BlindReadsStatsMethod(const Napi::CallbackInfo& info) {
    const BlindReads::Stats stats = instance_.blind->stats();
    Napi::Object out = Napi::Object::New(info.Env());
    static const char* const kNames[BlindReads::kJudgements] = {"firstRead", "recentRead", "resident", "notResident", "cooling"};
    for (size_t i = 0; i < BlindReads::kJudgements; i++) out.Set(kNames[i], static_cast<double>(stats.judged[i]));
    out.Set("misjudged", static_cast<double>(stats.misjudged));
    return out;
  }

  // blindReadsLook(pathOrFd) -> null, or { filesystem, judgement, coolingMs }: how the fast path
  // would judge a read of that file now, where its filesystem is known to refuse RWF_NOWAIT
  // (explain()); null too where it cannot be looked at (explain() reports that itself).
  Napi::Value BlindReadsLookMethod(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    struct stat st {};
    BlindReads::File file;
    if (info[0].IsNumber()) {
      if (fstat(info[0].As<Napi::Number>().Int32Value(), &st) != 0) return env.Null();
      file = BlindReads::Inode(st);
    } else {
      PathArg path;
      Failure failure;
      if (!path.From(env, info[0], &failure) || stat(path.c_str(), &st) != 0) return env.Null();
      file = BlindReads::Named(FastPathHints::Hash(path.c_str()), st);
    }
    BlindReads::Peek peek;
    if (!instance_.blind->Look(file, MonotonicNs(), &peek)) return env.Null();
    static const char* const kNames[BlindReads::kJudgements] = {"first-read", "recent-read", "resident", "not-resident", "cooling"};
    Napi::Object out = Napi::Object::New(env);
    out.Set("filesystem", peek.filesystem);
    out.Set("judgement", kNames[static_cast<size_t>(peek.judgement)]);
    out.Set("coolingMs", static_cast<double>(peek.cooling_ms));
    return out;
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

  Napi::Value CachedReadMethod(const Napi::CallbackInfo& info) {
    return CachedRead(info, instance_);
  }

  // cachedReadBatch(paths, start, end, flags, results, out, onRing, rootFd?, resolve?): onRing
  // when the engine after the fast path is io_uring, which may then read small files in batches.
  Napi::Value CachedReadBatchMethod(const Napi::CallbackInfo& info) {
    SmallFileBatch* batch = nullptr;
#ifdef HAVE_LIBURING
    if (ArgIsTrue(info, 6)) batch = cached_batch_.get();
#endif
    bool batch_failed = false;
    Napi::Value result = CachedReadBatch(info, instance_, batch, &batch_failed);
#ifdef HAVE_LIBURING
    if (batch_failed) cached_batch_.reset();
#endif
    return result;
  }

  Napi::Value CachedReadRunMethod(const Napi::CallbackInfo& info) {
    return CachedReadRun(info, instance_);
  }

  Napi::Value CachedRunClaimMethod(const Napi::CallbackInfo& info) { return CachedRunClaim(info); }
  Napi::Value CachedRunSettleMethod(const Napi::CallbackInfo& info) { return CachedRunSettle(info); }

  Napi::Value ThreadpoolReadMethod(const Napi::CallbackInfo& info) {
    return ThreadpoolRead(info, instance_);
  }

  Napi::Value PrefetchMethod(const Napi::CallbackInfo& info) { return Prefetch(info); }
  Napi::Value EvictMethod(const Napi::CallbackInfo& info) { return EvictFromPageCache(info); }
  Napi::Value ResidencyMethod(const Napi::CallbackInfo& info) { return PageCacheResidency(info); }
  Napi::Value StatBeneathMethod(const Napi::CallbackInfo& info) { return StatBeneath(info); }
  Napi::Value StatAtMethod(const Napi::CallbackInfo& info) { return StatAt(info); }
  Napi::Value StatBeneathIfCachedMethod(const Napi::CallbackInfo& info) { return StatBeneathIfCached(info, instance_); }
  Napi::Value StatAtNowMethod(const Napi::CallbackInfo& info) { return StatAtNow(info, instance_); }
  Napi::Value StatBeneathAsyncMethod(const Napi::CallbackInfo& info) { return StatAsync(info, true); }
  Napi::Value StatAtAsyncMethod(const Napi::CallbackInfo& info) { return StatAsync(info, false); }
  Napi::Value OpenBeneathMethod(const Napi::CallbackInfo& info) { return OpenBeneath(info); }
  Napi::Value OpenBeneathAsyncMethod(const Napi::CallbackInfo& info) { return OpenBeneathAsync(info); }
  Napi::Value OpensWaitBeneathMethod(const Napi::CallbackInfo& info) { return OpensWaitBeneath(info, instance_); }
  Napi::Value FileAsksServerMethod(const Napi::CallbackInfo& info) { return FileAsksServer(info, instance_); }
  Napi::Value MapFileMethod(const Napi::CallbackInfo& info) { return MapFile(info, instance_); }
  Napi::Value UnmapMethod(const Napi::CallbackInfo& info) { return Unmap(info); }
  Napi::Value ReadIntoSyncMethod(const Napi::CallbackInfo& info) { return ReadIntoSync(info); }
  Napi::Value ReadIntoAsyncMethod(const Napi::CallbackInfo& info) { return ReadIntoAsync(info); }
  Napi::Value AdviseRandomMethod(const Napi::CallbackInfo& info) { return AdviseRandom(info); }
  Napi::Value WriteFileSyncMethod(const Napi::CallbackInfo& info) { return WriteFileSync(info); }
  Napi::Value MkdirAllSyncMethod(const Napi::CallbackInfo& info) { return MkdirAllSync(info, known_dirs_); }
  Napi::Value DirsKnownMethod(const Napi::CallbackInfo& info) { return DirsKnown(info, *known_dirs_); }
  Napi::Value ForgetDirsMethod(const Napi::CallbackInfo& info) { return ForgetDirs(info, *known_dirs_); }
  Napi::Value ThreadpoolWriteFilesMethod(const Napi::CallbackInfo& info) { return ThreadpoolWriteFiles(info); }
  Napi::Value ThreadpoolMkdirManyMethod(const Napi::CallbackInfo& info) {
    return ThreadpoolMkdirMany(info, known_dirs_);
  }

#ifdef HAVE_LIBURING
  // uringStatus(): sets the ring up on first use; null when usable, else why not.
  Napi::Value UringStatus(const Napi::CallbackInfo& info) {
    if (ring_ == nullptr && ring_why_.empty()) {
      ring_ = uring::Ring::Create(env_, &instance_, &ring_why_);
      // Set up with the engine's ring, so that both are open for the life of the environment
      // from its first io_uring read on; without it, readMany reads with syscalls.
      std::string why;
      if (ring_ != nullptr) cached_batch_ = uring::CachedBatchRing::Create(&why);
      // What io_uring can do for writes, while descriptors are still to be had for the probe's
      // small ring (a process may exhaust them before its first write).
      if (ring_ != nullptr) uring::ProbeWriteSupport();
    }
    if (ring_ != nullptr) return info.Env().Null();
    return Napi::String::New(info.Env(), ring_why_);
  }

  Napi::Value UringRead(const Napi::CallbackInfo& info) {
    if (ring_ == nullptr) {
      Napi::Error::New(info.Env(), "smartread: io_uring is not set up").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    return Napi::Value(info.Env(), ring_->Read(info));
  }

  Napi::Value UringSubmit(const Napi::CallbackInfo& info) {
    if (ring_ != nullptr) ring_->Submit();
    return info.Env().Undefined();
  }

  Napi::Value UringCancel(const Napi::CallbackInfo& info) {
    if (ring_ != nullptr) ring_->Cancel(info[0].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  }

  // uringRegisterFile(fd) -> the fixed-file slot, or -1 (then reads name the fd itself).
  Napi::Value UringRegisterFile(const Napi::CallbackInfo& info) {
    if (ring_ == nullptr) return Napi::Number::New(info.Env(), -1);
    return Napi::Number::New(info.Env(), ring_->RegisterFile(info[0].As<Napi::Number>().Int32Value()));
  }

  Napi::Value UringUnregisterFile(const Napi::CallbackInfo& info) {
    if (ring_ != nullptr) ring_->UnregisterFile(info[0].As<Napi::Number>().Int32Value());
    return info.Env().Undefined();
  }

  Napi::Value UringReadAt(const Napi::CallbackInfo& info) {
    if (ring_ == nullptr) {
      Napi::Error::New(info.Env(), "smartread: io_uring is not set up").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    return Napi::Value(info.Env(), ring_->ReadAt(info));
  }

  // uringCanLookUp() -> whether uringLookUp and uringOpenBeneath can be used (the ring is set
  // up, with OPENAT2).
  Napi::Value UringCanLookUp(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), ring_ != nullptr && ring_->can_look_up());
  }

  Napi::Value UringLookUp(const Napi::CallbackInfo& info) { return BeneathOnRing(info, &uring::Ring::LookUp); }
  Napi::Value UringOpenBeneath(const Napi::CallbackInfo& info) { return BeneathOnRing(info, &uring::Ring::OpenBeneath); }

  // A lookup or an open made by the ring, or an error where it cannot make one (uringCanLookUp).
  Napi::Value BeneathOnRing(const Napi::CallbackInfo& info, napi_value (uring::Ring::*start)(const Napi::CallbackInfo&)) {
    if (ring_ == nullptr || !ring_->can_look_up()) {
      Napi::Error::New(info.Env(), "smartread: io_uring cannot make lookups or opens beneath a root here").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    return Napi::Value(info.Env(), (ring_->*start)(info));
  }

  // uringWriteSupport() -> { writes, atomic, mkdir, why? }: what the kernel's io_uring can do
  // for writes (the ops it lacks go to the thread pool); why: the probe failed.
  Napi::Value UringWriteSupport(const Napi::CallbackInfo& info) {
    const uring::WriteSupport& support = uring::ProbeWriteSupport();
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("writes", support.writes);
    out.Set("atomic", support.atomic);
    out.Set("mkdir", support.mkdir);
    if (!support.probe_failure.empty()) out.Set("why", support.probe_failure);
    return out;
  }

  Napi::Value UringWriteFiles(const Napi::CallbackInfo& info) {
    if (ring_ == nullptr) {
      Napi::Error::New(info.Env(), "smartread: io_uring is not set up").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    return Napi::Value(info.Env(), uring::StartWriteBatch(ring_, info));
  }

  Napi::Value UringMkdirMany(const Napi::CallbackInfo& info) {
    if (ring_ == nullptr) {
      Napi::Error::New(info.Env(), "smartread: io_uring is not set up").ThrowAsJavaScriptException();
      return info.Env().Undefined();
    }
    return Napi::Value(info.Env(), uring::StartMkdirBatch(ring_, info, known_dirs_));
  }

  // uringCancelBatch(id): cancels a write or mkdir batch; its promise still settles.
  Napi::Value UringCancelBatch(const Napi::CallbackInfo& info) {
    if (ring_ != nullptr) ring_->CancelClient(info[0].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  }

  // Owned by itself from setup on: it deletes itself at the end of the environment's teardown.
  uring::Ring* ring_ = nullptr;
  // readMany's batches of small cached files; closed for good if it fails.
  std::unique_ptr<uring::CachedBatchRing> cached_batch_;
  std::string ring_why_;
#endif

  napi_env env_;
  Instance instance_;
  // Shared with the pool's mkdir jobs, which may outlive the environment's teardown.
  std::shared_ptr<KnownDirs> known_dirs_ = std::make_shared<KnownDirs>();
};

}  // namespace smartread

using smartread::Addon;
NODE_API_ADDON(Addon)
