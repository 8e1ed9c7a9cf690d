// SPDX-License-Identifier: MIT
// readMany's fast path on a pool thread: a run of cached files read while the JS thread reads
// another.
#include "cached_run.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../common/args.h"
#include "../common/block_pool.h"
#include "../common/file_io.h"
#include "../common/pool_job.h"
#include "blind_reads.h"
#include "cached_read.h"

namespace smartread {

namespace {

// A hint to the core that this thread is spinning.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Where a run's results land (a block, the slab) before they are copied into the one Buffer the
// run returns, or the slab is lent as that Buffer (WrapBytes): room for the sizes its names had
// when last read, and kUnknownRoom for each name not read before, rounded up to a power of two
// from kSlabMin (a run of kElsewhereRunMax files of 8 KiB) to kSlabMax; and the largest file a
// run takes, about what the fast path reads on the JS thread: a larger one is for the engines.
// With one slab of 2 MiB and files of at most 256 KiB, a tree of sources and assets (the
// bench's: 3,000 files, 45 MB) left its six files of more than 256 KiB (18 MB), and those past
// a full slab, to the JS thread: readMany ×64 took 0.96-1.08 of the smartReadSync loop's time on
// ext4 and overlay; with these, 0.81-0.96 (alternated processes, medians of 8 rounds each).
constexpr size_t kSlabMin = size_t{2} << 20;
constexpr size_t kSlabMax = size_t{8} << 20;
constexpr size_t kUnknownRoom = size_t{8} << 10;
constexpr size_t kFileMax = size_t{4} << 20;

// A run's files, read by the pool thread from its start while the JS thread, once done with
// its own share of the list, may claim the rest (Claim) and read them itself: the pool thread
// is woken in tens of microseconds here, or later, and the JS thread does not sit idle until
// then, nor wait for the loop to turn to take the pool thread's results (TrySettle). Shared by
// the job on the pool and the handle the JS thread holds.
class Run {
 public:
  struct Item {
    std::string path;
    // The size the name had as a regular file when last read (hints), or -1: looked at first;
    // the device it was on then (0: not known); and, as the JS thread's hints had them when the
    // run began, whether that device honoured RWF_NOWAIT and whether it was tmpfs or ramfs (how
    // it is read again without fstat, AsBefore).
    int64_t known = -1;
    dev_t dev = 0;
    bool batchable = false;
    bool dev_in_memory = false;
    // Read as before on tmpfs, slower than memory, found on another device: forgotten at Settle.
    bool moved = false;
    int32_t result = kRunLeft;
    uint32_t offset = 0;
    bool in_memory = false;
    // On a filesystem that refuses RWF_NOWAIT (see BlindReads): never batched.
    bool blind = false;
    // The device it was read from, or left to the engines on, and its size there.
    dev_t read_dev = 0;
    uint64_t size = 0;
  };

  Instance* instance = nullptr;
  std::shared_ptr<BlockPool> blocks;
  std::shared_ptr<BlindReads> blind;
  ReadBudget budget{0, 0};
  std::vector<Item> items;
  int flags = 0;
  Confinement confinement;

  ~Run() { ReleaseSlab(); }

  // Before the job is queued, once the items are in place.
  void Prepare() {
    states_.reset(new std::atomic<uint8_t>[items.size()]);
    size_t room = 0;
    for (size_t k = 0; k < items.size(); k++) {
      states_[k].store(kUnclaimed, std::memory_order_relaxed);
      room += items[k].known >= 0 ? (static_cast<size_t>(items[k].known) + 7) & ~size_t{7} : kUnknownRoom;
    }
    // A power of two, so that the runs of a list find each other's blocks in the pool.
    slab_size_ = kSlabMin;
    while (slab_size_ < room && slab_size_ < kSlabMax) slab_size_ *= 2;
  }

  // The pool thread: every item not yet claimed, one at a time, in order. No slab is taken
  // where the JS thread has claimed them all; without one, those it claims are left (kRunLeft).
  void Execute() {
    size_t k = next_.fetch_add(1, std::memory_order_acq_rel);
    if (k >= items.size()) return;
    if (blocks) slab_ = blocks->Take(slab_size_);
    if (slab_.data == nullptr && !blocks) slab_ = Block{static_cast<uint8_t*>(malloc(slab_size_)), slab_size_, false};
    for (; k < items.size(); k = next_.fetch_add(1, std::memory_order_acq_rel)) {
      if (slab_.data != nullptr && !items[k].path.empty()) ReadOne(items[k]);
      states_[k].store(kReadHere, std::memory_order_release);
    }
  }

  // The JS thread: the next item nobody has claimed, now the caller's to read (its result is
  // kRunTaken), or -1 when none is left.
  int64_t Claim() {
    if (settled_) return -1;
    const size_t k = next_.fetch_add(1, std::memory_order_acq_rel);
    if (k >= items.size()) return -1;
    items[k].result = kRunTaken;
    states_[k].store(kTaken, std::memory_order_relaxed);
    return static_cast<int64_t>(k);
  }

  // The JS thread, once Claim() has found nothing left: the results when the pool thread has
  // finished every item it claimed, waiting for that at most `spin_ns` (it is then reading one,
  // or was preempted before it could); nullptr, with nothing pending, when it has not, or when
  // the run was settled before. From here on nobody claims an item: any not claimed yet is
  // left (kRunLeft), so that the pool thread never reads into a slab settled here.
  napi_value TrySettle(napi_env env, int64_t spin_ns) {
    if (settled_) return nullptr;
    if (claims_end_ == kClaimsOpen) {
      claims_end_ = std::min(next_.fetch_add(items.size(), std::memory_order_acq_rel), items.size());
    }
    const size_t claimed = claims_end_;
    const int64_t until = spin_ns > 0 ? MonotonicNs() + spin_ns : 0;
    for (size_t k = 0; k < claimed; k++) {
      while (states_[k].load(std::memory_order_acquire) == kUnclaimed) {
        if (until == 0 || MonotonicNs() >= until) return nullptr;
        CpuRelax();
      }
    }
    return Settle(env);
  }

  // The JS thread: [slab, results] once; nullptr (undefined for the promise) the second time.
  // The hints learn the sizes of the files read.
  napi_value Settle(napi_env env) {
    if (settled_) {
      napi_value undefined = nullptr;
      napi_get_undefined(env, &undefined);
      return undefined;
    }
    settled_ = true;
    napi_value out = Results(env);
    // Back to the pool at once, not when the handle is collected: the next run takes it.
    ReleaseSlab();
    return out;
  }

 private:
  static constexpr uint8_t kUnclaimed = 0;  // or claimed by the pool thread, which reads it
  static constexpr uint8_t kReadHere = 1;   // read by the pool thread
  static constexpr uint8_t kTaken = 2;      // claimed by the JS thread

  void ReadOne(Item& item) {
    open_how how{};
    how.resolve = RESOLVE_CACHED | confinement.resolve;
    const int dirfd = confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD;
    struct stat st {};
    // As on the JS thread: opens are timed where the kernel will not say whether a read waits,
    // and not made where that filesystem's reads wait too often lately (BlindReads).
    int64_t opened_ns = blind->Any() ? MonotonicNs() : 0;
    const BlindReads::Device device = item.dev != 0 ? blind->Before(item.dev, opened_ns) : BlindReads::Device{};
    // None was known as this began, and the JS thread has found one since: timed from here.
    if (opened_ns == 0 && (device.known || device.opens_may_wait)) opened_ns = MonotonicNs();
    if (device.cooling) {
      item.result = kRunMiss;
      return;
    }
    if (device.opens_may_wait &&
        !blind->WorthOpening({FastPathHints::Hash(item.path.c_str()), item.dev, static_cast<off_t>(item.known), -1}, opened_ns)) {
      item.result = kRunWarming;
      return;
    }
    // As on the JS thread: a name not known to be a small regular file is looked at through an
    // O_PATH descriptor, which opens nothing, before it is opened (a FIFO must not be).
    if (item.known < 0) {
      how.flags = static_cast<uint64_t>(O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY)));
      const int probe = static_cast<int>(syscall(SYS_openat2, dirfd, item.path.c_str(), &how, sizeof how));
      if (probe < 0) {
        item.result = errno == EAGAIN ? kRunMiss : kRunLeft;
        return;
      }
      const bool fits = fstat(probe, &st) == 0 && Fits(st);
      close(probe);
      if (!fits) return;
      const BlindReads::File file = confinement.confined() ? BlindReads::Inode(st)
                                                           : BlindReads::Named(FastPathHints::Hash(item.path.c_str()), st);
      blind->LearnIfServerMount(st.st_dev);
      const BlindReads::Device device_now = blind->Before(st.st_dev, opened_ns);
      if (device_now.known && (device_now.cooling || (device_now.opens_may_wait && !blind->WorthOpening(file, opened_ns)))) {
        // As on the JS thread, the hints keep its device (see Settle).
        item.result = device_now.cooling ? kRunMiss : kRunWarming;
        item.blind = true;
        item.read_dev = st.st_dev;
        item.size = static_cast<uint64_t>(st.st_size);
        return;
      }
    } else if (static_cast<size_t>(item.known) > slab_size_ - used_) {
      return;
    }
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NONBLOCK);
    const int fd = static_cast<int>(syscall(SYS_openat2, dirfd, item.path.c_str(), &how, sizeof how));
    if (fd < 0) {
      item.result = errno == EAGAIN ? kRunMiss : kRunLeft;
      return;
    }
    // As on the JS thread, a name read before is read as it was, without fstat.
    const AsBefore as_before = item.known > 0 ? AsBeforeFor(item.batchable, device.known, item.dev_in_memory) : AsBefore::kLook;
    if (as_before != AsBefore::kLook && ReadAsBeforeHere(item, as_before, fd, opened_ns)) {
      close(fd);
      return;
    }
    if (fstat(fd, &st) == 0 && Fits(st)) {
      const size_t size = static_cast<size_t>(st.st_size);
      const bool known_in_memory = InMemory(st.st_dev);
      item.in_memory = known_in_memory;
      const BlindReads::File file = confinement.confined() ? BlindReads::Inode(st)
                                                           : BlindReads::Named(FastPathHints::Hash(item.path.c_str()), st);
      const NoWaitRead read = ReadUnlessWaiting(*blind, file, fd, st, slab_.data + used_, size, &item.in_memory,
                                                budget, opened_ns);
      if (item.in_memory && !known_in_memory) memory_devs_.push_back(st.st_dev);
      item.blind = !item.in_memory && blind->Known(st.st_dev);
      item.read_dev = st.st_dev;
      item.size = size;
      if (read.error == EAGAIN) {
        item.result = item.blind && !blind->CoolingNow(st.st_dev) ? kRunWarming : kRunMiss;
      } else if (read.error == 0) {
        item.result = static_cast<int32_t>(read.done);
        item.offset = static_cast<uint32_t>(used_);
        used_ = (used_ + read.done + 7) & ~size_t{7};
      }
    }
    close(fd);
  }

  // A name read before (item.known bytes, room for them checked), open as `fd`, read as
  // `as_before` says (ReadCached's way): true where that settled it, a hit or a miss; false
  // where it is to be looked at with fstat.
  bool ReadAsBeforeHere(Item& item, AsBefore as_before, int fd, int64_t opened_ns) {
    const size_t size = static_cast<size_t>(item.known);
    const BlindReads::File named{FastPathHints::Hash(item.path.c_str()), item.dev, static_cast<off_t>(size), -1};
    const bool judged = as_before == AsBefore::kJudged;
    // Settled here: what Results() tells the hints is the name's device and size as before.
    const auto settled = [&](int32_t result) {
      item.result = result;
      item.read_dev = item.dev;
      item.size = size;
      item.blind = judged;
      item.in_memory = as_before == AsBefore::kInMemory;
      return true;
    };
    bool cooling = false;
    if (judged && !JudgedInline(*blind, named, fd, opened_ns, budget, &cooling)) return settled(cooling ? kRunMiss : kRunWarming);
    switch (ReadNamedAsBefore(as_before, *blind, named, fd, slab_.data + used_, budget, opened_ns, &item.moved)) {
      case AsBeforeRead::kSame:
        item.offset = static_cast<uint32_t>(used_);
        used_ = (used_ + size + 7) & ~size_t{7};
        return settled(static_cast<int32_t>(size));
      case AsBeforeRead::kMiss:
        return settled(kRunMiss);
      case AsBeforeRead::kLook:
        break;
    }
    return false;
  }

  // A regular file with a size, small enough for the run, with room left for it.
  bool Fits(const struct stat& st) const {
    if (!S_ISREG(st.st_mode) || st.st_size <= 0) return false;
    const size_t size = static_cast<size_t>(st.st_size);
    return size <= kFileMax && size <= slab_size_ - used_;
  }

  // The devices found to be tmpfs or ramfs in this run, read without trying RWF_NOWAIT.
  bool InMemory(dev_t dev) const { return std::find(memory_devs_.begin(), memory_devs_.end(), dev) != memory_devs_.end(); }

  // The slab, unless it was lent as the results' Buffer. On the JS thread, or where no thread
  // can be reading into it any longer.
  void ReleaseSlab() {
    if (slab_.data == nullptr) return;
    if (blocks) {
      blocks->Give(slab_);
    } else {
      free(slab_.data);
    }
    slab_ = Block{};
  }

  napi_value Results(napi_env env) {
    napi_value slab = nullptr;
    napi_value buffer = nullptr;
    napi_value results = nullptr;
    napi_value out = nullptr;
    void* data = nullptr;
    const size_t count = items.size();
    if (!WrapBytes(env, &slab) ||
        napi_create_arraybuffer(env, 2 * count * sizeof(int32_t), &data, &buffer) != napi_ok ||
        napi_create_typedarray(env, napi_int32_array, 2 * count, buffer, 0, &results) != napi_ok ||
        napi_create_array_with_length(env, 2, &out) != napi_ok ||
        napi_set_element(env, out, 0, slab) != napi_ok || napi_set_element(env, out, 1, results) != napi_ok) {
      return nullptr;
    }
    int32_t* values = static_cast<int32_t*>(data);
    FastPathHints& hints = instance->fast_path;
    for (size_t k = 0; k < count; k++) {
      const Item& item = items[k];
      values[2 * k] = item.result;
      values[2 * k + 1] = static_cast<int32_t>(item.offset);
      // Names under a root are relative to it: never remembered (as on the JS thread).
      // What it left, the JS thread's fast path reads, and learns from.
      if (item.moved) {
        hints.Forget(item.path.c_str());
      } else if (item.result >= 0 && !confinement.confined()) {
        hints.SetRegular(item.path.c_str(), static_cast<uint64_t>(item.result), !item.in_memory && !item.blind, item.read_dev);
      } else if (item.blind && item.size > 0 && !confinement.confined()) {
        hints.SetRegular(item.path.c_str(), item.size, false, item.read_dev);
      }
    }
    return out;
  }

  // The Buffer the run's results share: the slab itself where they fill at least half of it
  // (large files: no copy on the JS thread, which the run is there to spare, and the block goes
  // back to the pool once they are collected), else a copy of what they use.
  bool WrapBytes(napi_env env, napi_value* out) {
    if (blocks && used_ >= slab_size_ / 2) {
      const Block slab = slab_;
      slab_ = Block{};
      // Lend() gives the block back to the pool itself if it fails.
      return blocks->Lend(env, slab, used_, out);
    }
    void* data = nullptr;
    return napi_create_buffer_copy(env, used_, used_ > 0 ? slab_.data : nullptr, &data, out) == napi_ok;
  }

  Block slab_;
  size_t slab_size_ = kSlabMin;
  size_t used_ = 0;
  std::vector<dev_t> memory_devs_;
  // The next item to claim, by either thread, and what became of each claimed.
  std::atomic<size_t> next_{0};
  std::unique_ptr<std::atomic<uint8_t>[]> states_;
  // Settled by TrySettle(), or by the job's completion; how many items had been claimed when
  // TrySettle() ended the claims (JS thread only).
  bool settled_ = false;
  static constexpr size_t kClaimsOpen = SIZE_MAX;
  size_t claims_end_ = kClaimsOpen;
};

class RunJob final : public PoolJob {
 public:
  explicit RunJob(std::shared_ptr<Run> run) : run_(std::move(run)) {}

 private:
  void Execute() override { run_->Execute(); }
  napi_value Settle(napi_env env) override { return run_->Settle(env); }

  std::shared_ptr<Run> run_;
};

void DeleteRunHandle(napi_env, void* data, void*) { delete static_cast<std::shared_ptr<Run>*>(data); }

// Marks the handles cachedReadRun makes, so that no other external passes for one.
constexpr napi_type_tag kRunTag = {0x736d61727472756eULL, 0x72756e68616e646cULL};

// The run a handle from cachedReadRun holds, or nullptr (with a pending TypeError) for anything else.
Run* RunOf(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  void* data = nullptr;
  napi_valuetype type;
  bool tagged = false;
  if (info.Length() < 1 || napi_typeof(env, info[0], &type) != napi_ok || type != napi_external ||
      napi_check_object_type_tag(env, info[0], &kRunTag, &tagged) != napi_ok || !tagged ||
      napi_get_value_external(env, info[0], &data) != napi_ok || data == nullptr) {
    napi_throw_type_error(env, nullptr, "not a run of cachedReadRun");
    return nullptr;
  }
  return static_cast<std::shared_ptr<Run>*>(data)->get();
}

}  // namespace

Napi::Value CachedReadRun(const Napi::CallbackInfo& info, Instance& instance) {
  napi_env env = info.Env();
  napi_value paths = info[0];
  const uint32_t start = info[1].As<Napi::Number>().Uint32Value();
  const uint32_t end = info[2].As<Napi::Number>().Uint32Value();
  auto job = std::make_shared<Run>();
  job->instance = &instance;
  job->blocks = instance.blocks;
  job->blind = instance.blind;
  job->budget = ReadBudget{instance.tuning.fast_path_budget_us, instance.tuning.copy_rate_mb_per_s};
  job->flags = info[3].As<Napi::Number>().Int32Value();
  job->confinement = ConfinementFromJs(info, 4);
  const size_t count = std::min<size_t>(end > start ? end - start : 0, kElsewhereRunMax);
  job->items.resize(count);
  FastPathHints& hints = instance.fast_path;
  for (size_t k = 0; k < count; k++) {
    napi_value item;
    napi_valuetype type;
    if (napi_get_element(env, paths, static_cast<uint32_t>(start + k), &item) != napi_ok ||
        napi_typeof(env, item, &type) != napi_ok || type != napi_string) {
      continue;
    }
    PathArg path;
    Failure failure;
    if (!path.From(env, item, &failure)) continue;
    Run::Item& slot = job->items[k];
    slot.path.assign(path.c_str());
    uint64_t known;
    dev_t dev = 0;
    bool batchable = false;
    if (!job->confinement.confined() && hints.KnownRegular(path.c_str(), &known, &batchable, &dev) && known <= kFileMax) {
      slot.known = static_cast<int64_t>(known);
      slot.dev = dev;
      slot.batchable = batchable;
      slot.dev_in_memory = dev != 0 && hints.InMemory(dev);
    }
  }
  job->Prepare();
  napi_value handle = nullptr;
  auto* held = new std::shared_ptr<Run>(job);
  if (napi_create_external(env, held, DeleteRunHandle, nullptr, &handle) != napi_ok) {
    delete held;
    return Napi::Value();
  }
  if (napi_type_tag_object(env, handle, &kRunTag) != napi_ok) return Napi::Value();
  napi_value promise = PoolJob::Start(env, std::make_unique<RunJob>(std::move(job)), "smartread:cachedReadRun");
  if (promise == nullptr) return Napi::Value();
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(uint32_t{0}, Napi::Value(env, promise));
  out.Set(uint32_t{1}, Napi::Value(env, handle));
  return out;
}

Napi::Value CachedRunClaim(const Napi::CallbackInfo& info) {
  Run* run = RunOf(info);
  if (run == nullptr) return Napi::Value();
  return Napi::Number::New(info.Env(), static_cast<double>(run->Claim()));
}

Napi::Value CachedRunSettle(const Napi::CallbackInfo& info) {
  Run* run = RunOf(info);
  if (run == nullptr) return Napi::Value();
  const int64_t spin_us = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int64Value() : 0;
  napi_value out = run->TrySettle(info.Env(), std::max<int64_t>(0, std::min<int64_t>(spin_us, 1000)) * 1000);
  return out == nullptr ? info.Env().Undefined() : Napi::Value(info.Env(), out);
}

}  // namespace smartread
