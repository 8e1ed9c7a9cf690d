// SPDX-License-Identifier: MIT
// The cache-hit fast path: a whole-file read that succeeds only if it cannot block.
#pragma once

#include <napi.h>

#include <cstdint>

#include "instance.h"

namespace smartread {

// The longest run of a list one cachedReadBatch call goes through (kCachedRunMax in engine.ts).
constexpr size_t kCachedRunMax = Instance::kRunSlots;
// Files of up to this size are returned from one slab per run rather than a Buffer each.
constexpr size_t kSmallFileMax = Instance::kPooledMax;

// One small file of a run for a SmallFileBatch: its path, the size it had when last read, where
// its bytes go (room for size + 1 of them), and, once read, `size` (a hit: the whole file, the
// same size as before), or -errno: -EAGAIN when its name or pages are not in memory, -ESTALE
// when its size changed, anything else when it no longer names a file that can be read (the
// caller's own read of it reports what is wrong).
struct SmallFileRead {
  const char* path;
  uint8_t* dest;
  uint32_t size;
  int32_t result;
};

// Reads many files that named small regular files last time, without waiting on a device.
class SmallFileBatch {
 public:
  virtual ~SmallFileBatch() = default;
  // Fills in each item's result; false when the reader can no longer be used (every item is
  // then a miss), and the caller should close it.
  virtual bool ReadSmall(SmallFileRead* items, size_t count, int flags) = 0;
};

// cachedRead(target: string | Buffer, flags: number, poolOffset: number)
//   -> Buffer | bytes read into the pool | {errno, syscall} | null | false
// openat2(RESOLVE_CACHED) then preadv2(RWF_NOWAIT), on the calling thread: both succeed only
// when the path's dentries and the file's pages are in memory, and fail with EAGAIN instead
// of waiting for a disk. null means "not a hit" (not cached, not a regular file, or a kernel
// without these calls), false "a regular file whose path is cached, too large to copy within
// the fast path's time budget" (Tuning::FastPathMax): either way nothing was left open and the
// caller reads it another way. An error the path resolution or the file gives for certain is
// returned as such. Pooling as readFileSync's.
Napi::Value CachedRead(const Napi::CallbackInfo& info, Instance& instance);

// What cachedReadBatch leaves in results[2k] when paths[start + k] was not a hit, or when it
// was one returned as a Buffer of its own in out[k]; any other value is a small result's size.
constexpr int32_t kNotHit = -1;
constexpr int32_t kHitInOut = -2;
// ...and for paths after the run ended: its copies had used up the fast path's time budget
// (the next run starts there).
constexpr int32_t kNotReached = -3;
// ...and for a miss that the engines will make a hit of (see BlindReads: a file on overlayfs or
// FUSE read for the first time lately): not a hit, but not the sign of a cold list either.
constexpr int32_t kWarmingMiss = -5;
// ...and for a regular file whose path is cached, too large to copy within the fast path's
// whole budget: for the engines' read of a large cached file (CachedRead's false).
constexpr int32_t kTooLargeMiss = -6;

// cachedReadBatch(paths: unknown[], start, end, flags, results: Int32Array, out: unknown[],
//                 onRing, rootFd?, resolve?) -> Buffer | undefined
// The fast path over paths[start..end), at most kCachedRunMax of them, in one call (readMany's
// cached files). Only strings are tried; anything else, a miss and an error are all "not a
// hit", left to the caller's per-path reads, which report errors in full. results[2k] is
// kNotHit, kWarmingMiss, kTooLargeMiss, kHitInOut, or a small result's byte count; that
// result is in the one Buffer returned (as Node pools small Buffers), at results[2k + 1]. The
// files of one run together copy within the fast path's time budget: the run ends before the
// file that would pass it, unless it is the first (results[2k] is then kNotReached). With
// `batch`, names that were small regular files last time are read through it, all at once;
// the others, and every name under a root, one by one.
// *batch_failed is set when `batch` should be closed.
Napi::Value CachedReadBatch(const Napi::CallbackInfo& info, Instance& instance,
                            SmallFileBatch* batch, bool* batch_failed);

}  // namespace smartread
