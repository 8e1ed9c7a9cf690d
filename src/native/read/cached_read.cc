// SPDX-License-Identifier: MIT
// The cache-hit fast path: a whole-file read that succeeds only if it cannot block.
#include "cached_read.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "../common/args.h"
#include "../common/dest_buffer.h"
#include "../common/errors.h"
#include "../common/file_io.h"
#include "blind_reads.h"

namespace smartread {

namespace {

// Errors that mean "not through this path", not "this file cannot be read": the kernel would
// have to block (EAGAIN), or it lacks openat2 (ENOSYS, 5.6), RESOLVE_CACHED (EINVAL, 5.12),
// RWF_NOWAIT for this file (EOPNOTSUPP), or a seccomp filter refuses the call (EPERM is
// ambiguous, so it is left to the other engines to report).
bool IsMiss(int err) {
  return err == EAGAIN || err == ENOSYS || err == EINVAL || err == EOPNOTSUPP || err == EPERM;
}

ReadBudget BudgetOf(const Instance& instance) {
  return ReadBudget{instance.tuning.fast_path_budget_us, instance.tuning.copy_rate_mb_per_s};
}

// Reads without waiting (see ReadUnlessWaiting, and `opened_ns` there); the hints remember the
// devices found to be in memory.
ssize_t ReadIfCached(Instance& instance, const BlindReads::File& file, int fd, const struct stat& st,
                     uint8_t* data, size_t size, int64_t opened_ns) {
  FastPathHints& hints = instance.fast_path;
  const bool known_in_memory = hints.InMemory(st.st_dev);
  bool in_memory = known_in_memory;
  const NoWaitRead read = ReadUnlessWaiting(*instance.blind, file, fd, st, data, size, &in_memory,
                                            BudgetOf(instance), opened_ns);
  if (in_memory && !known_in_memory) hints.SetInMemory(st.st_dev);
  return read.error != 0 ? -read.error : static_cast<ssize_t>(read.done);
}

// A hit copies the file on the calling thread: only a regular file with a size, and no larger
// than `max_size` (what is left of the fast path's time budget), whose copy cannot hold the
// event loop for long.
enum class Fit { kFits, kTooLarge, kNotForFastPath };

Fit FitsFastPath(const struct stat& st, uint64_t max_size) {
  if (!S_ISREG(st.st_mode) || st.st_size <= 0) return Fit::kNotForFastPath;
  return static_cast<uint64_t>(st.st_size) <= max_size ? Fit::kFits : Fit::kTooLarge;
}

// A result's own Buffer of `size` bytes in *dest (kept where it is one of that size already),
// its pages faulted in where they are fresh. Where the read is judged by its time (`opened_ns`
// not null, nor 0), that time moves on by what making the destination took: a large one's fresh
// pages, or a V8 collection its memory sets off, took longer than the read and passed for a wait
// (six cached 2-4 MiB overlay files read by readMany back to back cooled the overlay). False on
// a JS exception.
bool MakeDestination(napi_env env, Instance& instance, size_t size, DestBuffer* dest, int64_t* opened_ns) {
  const int64_t from = opened_ns != nullptr && *opened_ns != 0 ? MonotonicNs() : 0;
  if ((dest->value == nullptr || dest->length != size) && !NewDestBuffer(env, instance.blocks.get(), size, dest)) return false;
  if (!dest->in_place) FaultInIfFresh(dest->data, size);
  if (from != 0) *opened_ns += MonotonicNs() - from;
  return true;
}

// kWarming: a miss on a filesystem that refuses RWF_NOWAIT, whose file the judge now remembers
// (BlindReads: a first read, or a large file not all in memory): once the engines have read it,
// the next read is a hit, so a run of them is not a cold list.
enum class Outcome { kHit, kMiss, kWarming, kTooLarge, kFailed, kJsException };

// Room for a small result, in a slab the caller returns it from (data nullptr: none).
struct SmallDest {
  uint8_t* data = nullptr;
  size_t capacity = 0;
};

// One fast-path read of `path`, of a regular file of at most `max_size` bytes (kTooLarge for a
// larger one; its size in *size either way). A hit leaves a Buffer in *value, or, when the
// result went into `small`, nullptr there and the byte count in *small_length.
Outcome ReadCached(napi_env env, Instance& instance, const char* path, int flags,
                   const Confinement& confinement, uint64_t max_size, SmallDest small,
                   napi_value* value, size_t* small_length, uint64_t* size_out, Failure* failure) {
  // Flags that create or truncate are never for the fast path (RESOLVE_CACHED refuses them).
  if ((flags & (O_CREAT | O_TRUNC | O_TMPFILE)) != 0) return Outcome::kMiss;
  // What the path names is looked at before it is opened, unless it named a small regular
  // file last time: opening a FIFO would wait for a writer (or, nonblocking, release one that
  // waits, whose writes then find no reader), and opening a device may act on it. An O_PATH
  // descriptor opens nothing.
  FastPathHints& hints = instance.fast_path;
  open_how how{};
  how.resolve = RESOLVE_CACHED | confinement.resolve;
  const int dirfd = confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD;
  struct stat st {};
  // Confined reads always look first: their names are relative to a root whose descriptor
  // number may name another directory on the next call.
  const bool remember = !confinement.confined();
  uint64_t known_size = 0;
  bool batchable = false;
  dev_t known_dev = 0;
  BlindReads& blind = *instance.blind;
  // Where the kernel will not say whether a read waits (BlindReads), the open is timed too: on
  // FUSE and NFS an open alone waits for the server.
  int64_t opened_ns = blind.Any() ? MonotonicNs() : 0;
  const bool known_regular = remember && hints.KnownRegular(path, &known_size, &batchable, &known_dev);
  BlindReads::Device device;
  if (known_regular && known_dev != 0) {
    device = blind.Before(known_dev, opened_ns);
    // None was known as this began, and a pool thread has found one since: timed from here.
    if (opened_ns == 0 && (device.known || device.opens_may_wait)) opened_ns = MonotonicNs();
    if (device.cooling) return Outcome::kMiss;
    // Where an open waits for a server, only a file read lately is opened here at all.
    if (device.opens_may_wait &&
        !blind.WorthOpening({FastPathHints::Hash(path), known_dev, static_cast<off_t>(known_size), -1}, opened_ns)) {
      return Outcome::kWarming;
    }
  }
  // A name read before is read as it was, without fstat (AsBefore): asked not to wait where the
  // filesystem honours RWF_NOWAIT, judged by its name where it refuses it (known_dev is
  // BlindReads'), timed on tmpfs and ramfs (in memory for a second after a read with fstat
  // found the device so).
  const AsBefore as_before = known_regular
      ? AsBeforeFor(batchable, device.known, known_dev != 0 && hints.InMemory(known_dev)) : AsBefore::kLook;
  // A name known without its device (a reader that did not say) is looked at like a new one
  // where some filesystem refuses RWF_NOWAIT: it may be there, and its open wait for a server.
  const bool look_first = !known_regular || (known_dev == 0 && !batchable && blind.Any());
  if (look_first) {
    how.flags = static_cast<uint64_t>(O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY)));
    const int probe = static_cast<int>(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
    if (probe < 0) {
      if (IsMiss(errno)) return Outcome::kMiss;
      *failure = Failure::Errno(errno, Syscall::kOpen);
      return Outcome::kFailed;
    }
    const Fit fit = fstat(probe, &st) == 0 ? FitsFastPath(st, max_size) : Fit::kNotForFastPath;
    close(probe);
    // A directory opened to be read opens, then refuses the read: node:fs's EISDIR from read,
    // known here without a trip to the engines (and, as node:fs has it from the fstat after its
    // open, before the caller's signal is looked at).
    if (S_ISDIR(st.st_mode) && (flags & O_ACCMODE) == O_RDONLY) {
      *failure = Failure::Errno(EISDIR, Syscall::kRead);
      return Outcome::kFailed;
    }
    if (fit == Fit::kFits) blind.LearnIfServerMount(st.st_dev);
    const BlindReads::Device device_now = fit == Fit::kFits ? blind.Before(st.st_dev, opened_ns) : BlindReads::Device{};
    if (device_now.known) {
      // Left to the engines without an open here: the hints keep its device, so that io_uring
      // opens it on a worker where opens wait (Ring::Read), and the next read is judged first.
      const Outcome refused = device_now.cooling ? Outcome::kMiss
          : device_now.opens_may_wait &&
                    !blind.WorthOpening(remember ? BlindReads::Named(FastPathHints::Hash(path), st) : BlindReads::Inode(st), opened_ns)
              ? Outcome::kWarming : Outcome::kHit;
      if (refused != Outcome::kHit) {
        if (remember) hints.SetRegular(path, static_cast<uint64_t>(st.st_size), false, st.st_dev);
        return refused;
      }
    }
    // Files without a size, and large ones, are for the engines that do not hold the loop.
    if (fit != Fit::kFits) {
      *size_out = static_cast<uint64_t>(st.st_size);
      return fit == Fit::kTooLarge ? Outcome::kTooLarge : Outcome::kMiss;
    }
  }
  // Nonblocking in case the name no longer names a regular file.
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NONBLOCK);
  const int fd = static_cast<int>(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
  if (fd < 0) {
    if (known_regular) hints.Forget(path);
    if (IsMiss(errno)) return Outcome::kMiss;
    *failure = Failure::Errno(errno, Syscall::kOpen);
    return Outcome::kFailed;
  }
  DestBuffer dest;
  if (as_before != AsBefore::kLook && known_size > 0 && known_size <= max_size && known_size <= kReadAsBeforeMax) {
    const BlindReads::File named{FastPathHints::Hash(path), known_dev, static_cast<off_t>(known_size), -1};
    const bool judged = as_before == AsBefore::kJudged;
    bool cooling = false;
    if (judged && !JudgedInline(blind, named, fd, opened_ns, BudgetOf(instance), &cooling)) {
      close(fd);
      return cooling ? Outcome::kMiss : Outcome::kWarming;
    }
    const bool pool = small.data != nullptr && known_size <= small.capacity;
    if (pool) {
      dest.data = small.data;
    } else if (!MakeDestination(env, instance, static_cast<size_t>(known_size), &dest, judged ? &opened_ns : nullptr)) {
      close(fd);
      return Outcome::kJsException;
    }
    bool moved = false;
    const AsBeforeRead read = ReadNamedAsBefore(as_before, blind, named, fd, dest.data, BudgetOf(instance), opened_ns, &moved);
    if (moved) hints.Forget(path);
    if (read == AsBeforeRead::kSame) {
      close(fd);
      *size_out = known_size;
      if (pool) {
        *value = nullptr;
        *small_length = static_cast<size_t>(known_size);
      } else {
        *value = dest.value;
      }
      return Outcome::kHit;
    }
    // The start of the file is not in memory (and its readahead has begun): a miss, which an
    // fstat and a second read without waiting would only have found again.
    if (read == AsBeforeRead::kMiss) {
      close(fd);
      return Outcome::kMiss;
    }
  }
  const Fit fit = fstat(fd, &st) == 0 ? FitsFastPath(st, max_size) : Fit::kNotForFastPath;
  if (fit != Fit::kFits) {
    // No longer the small regular file it was; a large one stays regular (readMany's runs see
    // large files whose turn has not come: they are looked at afresh then).
    if (remember && fit == Fit::kNotForFastPath) hints.Forget(path);
    close(fd);
    *size_out = static_cast<uint64_t>(st.st_size);
    return fit == Fit::kTooLarge ? Outcome::kTooLarge : Outcome::kMiss;
  }
  Outcome outcome = Outcome::kMiss;
  const size_t size = static_cast<size_t>(st.st_size);
  *size_out = size;
  const bool pool = small.data != nullptr && size <= small.capacity;
  if (pool) {
    dest.data = small.data;
    dest.length = size;
  } else if (!MakeDestination(env, instance, size, &dest, &opened_ns)) {
    close(fd);
    return Outcome::kJsException;
  }
  const BlindReads::File file = remember ? BlindReads::Named(FastPathHints::Hash(path), st) : BlindReads::Inode(st);
  const ssize_t n = ReadIfCached(instance, file, fd, st, dest.data, size, opened_ns);
  // After the read, which finds out whether the filesystem keeps its files in memory, or refuses
  // RWF_NOWAIT: neither is asked without waiting next time, nor batched.
  if (remember) {
    hints.SetRegular(path, static_cast<uint64_t>(st.st_size),
                     !hints.InMemory(st.st_dev) && !blind.Known(st.st_dev), st.st_dev);
  }
  if (n < 0) {
    if (!IsMiss(static_cast<int>(-n))) {
      *failure = Failure::Errno(static_cast<int>(-n), Syscall::kRead);
      outcome = Outcome::kFailed;
    } else if (n == -EAGAIN && blind.Known(st.st_dev) && !blind.CoolingNow(st.st_dev)) {
      outcome = Outcome::kWarming;
    }
  } else if (pool) {
    *value = nullptr;
    *small_length = static_cast<size_t>(n);
    outcome = Outcome::kHit;
  } else if (static_cast<size_t>(n) == size) {
    *value = dest.value;
    outcome = Outcome::kHit;
  } else if (CopyToBuffer(env, dest.data, static_cast<size_t>(n), value)) {
    outcome = Outcome::kHit;
  } else {
    outcome = Outcome::kJsException;
  }
  close(fd);
  return outcome;
}

// Where the small result after one of `bytes` starts: 8-byte aligned, as Node's pool does.
size_t NextSlabOffset(size_t offset, size_t bytes) { return (offset + bytes + 7) & ~size_t{7}; }

// The flags a batched open may carry: those of a plain read.
bool PlainReadFlags(int flags) { return (flags & ~(O_NOFOLLOW | O_NOATIME | O_CLOEXEC)) == 0; }

}  // namespace

Napi::Value CachedRead(const Napi::CallbackInfo& info, Instance& instance) {
  Napi::Env env = info.Env();
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const int64_t pool_offset = info[2].As<Napi::Number>().Int64Value();
  PathArg path;
  Failure failure;
  if (!path.From(env, info[0], &failure)) return FailureToJs(env, failure);
  SmallDest small;
  if (pool_offset >= 0 && static_cast<uint64_t>(pool_offset) < instance.pool_length) {
    small.data = instance.pool_data + pool_offset;
    small.capacity = std::min(Instance::kPooledMax, instance.pool_length - static_cast<size_t>(pool_offset));
  }
  napi_value value = nullptr;
  size_t pooled = 0;
  uint64_t size = 0;
  switch (ReadCached(env, instance, path.c_str(), flags, ConfinementFromJs(info, 3),
                     instance.tuning.FastPathMax(), small, &value, &pooled, &size, &failure)) {
    case Outcome::kHit:
      if (value == nullptr) napi_create_uint32(env, static_cast<uint32_t>(pooled), &value);
      return Napi::Value(env, value);
    case Outcome::kMiss:
    case Outcome::kWarming:
      return env.Null();
    case Outcome::kTooLarge:
      return Napi::Boolean::New(env, false);
    case Outcome::kFailed:
      return FailureToJs(env, failure);
    case Outcome::kJsException:
      break;
  }
  return Napi::Value();
}

Napi::Value CachedReadBatch(const Napi::CallbackInfo& info, Instance& instance,
                            SmallFileBatch* batch, bool* batch_failed) {
  napi_env env = info.Env();
  napi_value paths = info[0];
  const uint32_t start = info[1].As<Napi::Number>().Uint32Value();
  const uint32_t end = info[2].As<Napi::Number>().Uint32Value();
  const int flags = info[3].As<Napi::Number>().Int32Value();
  Napi::TypedArrayOf<int32_t> results = info[4].As<Napi::TypedArrayOf<int32_t>>();
  napi_value out = info[5];
  const Confinement confinement = ConfinementFromJs(info, 7);
  size_t count = std::min({size_t{end - start}, kCachedRunMax, results.ElementLength() / 2});
  const bool use_batch = batch != nullptr && !confinement.confined() && PlainReadFlags(flags);
  FastPathHints& hints = instance.fast_path;
  // Small results get a place in the run's one Buffer, at results[2k + 1]: those read now are
  // read into a slot and copied there; the names batched are read straight into it.
  uint8_t* slots = instance.RunSlots();
  std::vector<std::string>& names = instance.run_names;
  SmallFileRead batched[kCachedRunMax];
  size_t batched_index[kCachedRunMax];
  size_t batched_count = 0;
  size_t slab_size = 0;
  // What the run may still copy within the fast path's time budget.
  const uint64_t budget = instance.tuning.FastPathMax();
  uint64_t left = budget;
  size_t k = 0;
  for (; k < count; k++) {
    results[2 * k] = kNotHit;
    napi_value item;
    napi_valuetype type;
    if (napi_get_element(env, paths, static_cast<uint32_t>(start + k), &item) != napi_ok ||
        napi_typeof(env, item, &type) != napi_ok || type != napi_string) {
      continue;
    }
    PathArg path;
    Failure failure;
    if (!path.From(env, item, &failure)) continue;
    uint64_t known_size;
    if (use_batch && hints.BatchableSize(path.c_str(), &known_size) && known_size <= kSmallFileMax &&
        known_size <= left) {
      left -= known_size;
      names[k].assign(path.c_str());
      results[2 * k + 1] = static_cast<int32_t>(slab_size);
      batched[batched_count] = SmallFileRead{names[k].c_str(), nullptr,
                                             static_cast<uint32_t>(known_size), 0};
      batched_index[batched_count++] = k;
      // One byte more: the batch reads that much to see a file that grew.
      slab_size = NextSlabOffset(slab_size, known_size + 1);
      continue;
    }
    napi_value value = nullptr;
    size_t small = 0;
    uint64_t size = 0;
    const Outcome outcome = ReadCached(env, instance, path.c_str(), flags, confinement, left,
                                       SmallDest{slots + k * kSmallFileMax, kSmallFileMax},
                                       &value, &small, &size, &failure);
    // A file that would pass what is left of the budget starts the next run, unless the whole
    // budget could not hold it either (it is then for the engines).
    if (outcome == Outcome::kTooLarge && k > 0 && size <= budget) break;
    switch (outcome) {
      case Outcome::kHit:
        left -= std::min<uint64_t>(left, size);
        if (value == nullptr) {
          results[2 * k] = static_cast<int32_t>(small);
          results[2 * k + 1] = static_cast<int32_t>(slab_size);
          slab_size = NextSlabOffset(slab_size, small);
        } else {
          results[2 * k] = kHitInOut;
          napi_set_element(env, out, static_cast<uint32_t>(k), value);
        }
        break;
      case Outcome::kWarming:
        results[2 * k] = kWarmingMiss;
        break;
      case Outcome::kTooLarge:
        results[2 * k] = kTooLargeMiss;
        break;
      case Outcome::kMiss:
      case Outcome::kFailed:
        break;
      case Outcome::kJsException:
        return Napi::Value();
    }
  }
  for (size_t rest = k; rest < count; rest++) results[2 * rest] = kNotReached;
  count = k;
  if (slab_size == 0 && batched_count == 0) {
    for (size_t k = 0; k < count; k++) {
      if (results[2 * k] >= 0) return Napi::Buffer<uint8_t>::New(env, 0);  // empty files only
    }
    return Napi::Env(env).Undefined();
  }
  // From the block pool where results of its size are (64 KiB and more on Node 20 and 22): its
  // pages are in place, where a new Buffer's would fault in as the run's results are copied.
  DestBuffer dest;
  if (!NewDestBuffer(env, instance.blocks.get(), slab_size, &dest)) return Napi::Value();
  napi_value slab = dest.value;
  uint8_t* slab_data = dest.data;
  for (size_t k = 0; k < count; k++) {
    if (results[2 * k] > 0) {
      memcpy(slab_data + results[2 * k + 1], slots + k * kSmallFileMax, static_cast<size_t>(results[2 * k]));
    }
  }
  if (batched_count > 0) {
    for (size_t i = 0; i < batched_count; i++) {
      batched[i].dest = slab_data + results[2 * batched_index[i] + 1];
    }
    *batch_failed = !batch->ReadSmall(batched, batched_count, flags);
    for (size_t i = 0; i < batched_count; i++) {
      const SmallFileRead& read = batched[i];
      if (read.result >= 0) {
        results[2 * batched_index[i]] = read.result;
      } else if (read.result != -EAGAIN) {
        // Gone, changed, or no longer a regular file: looked at afresh next time.
        hints.Forget(read.path);
      }
    }
  }
  return Napi::Value(env, slab);
}

}  // namespace smartread
