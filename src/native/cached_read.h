// SPDX-License-Identifier: MIT
// The cache-hit fast path: a whole-file read that succeeds only if it cannot block.
#pragma once

#include <napi.h>

#include <cstdint>

#include "instance.h"

namespace smartread {


// cachedRead(target: string | Buffer, flags: number, poolOffset: number)
//   -> Buffer | bytes read into the pool | {errno, syscall} | null
// openat2(RESOLVE_CACHED) then preadv2(RWF_NOWAIT), on the calling thread: both succeed only
// when the path's dentries and the file's pages are in memory, and fail with EAGAIN instead
// of waiting for a disk. null means "not a hit" (not cached, not a regular file, too large for
// the fast path, or a kernel without these calls): nothing was left open and the caller reads
// it another way. An error the path resolution or the file gives for certain is returned as
// such. Pooling as readFileSync's.
Napi::Value CachedRead(const Napi::CallbackInfo& info, Instance& instance);

// What cachedReadBatch leaves in sizes[k] when paths[start + k] was not a hit, or when it was
// one returned as a Buffer of its own in out[k]; any other value is a pooled result's size.
constexpr int32_t kNotHit = -1;
constexpr int32_t kHitInOut = -2;

// cachedReadBatch(paths: unknown[], start, end, flags, poolOffset, sizes: Int32Array,
//                 out: unknown[]) -> how many of paths[start..end) it went through
// The fast path over a run of a list in one call (readMany's cached files). Only strings are
// tried; anything else, a miss and an error are all "not a hit", left to the caller's
// per-path reads, which report errors in full. Pooled results are laid out from poolOffset
// one after another, 8-byte aligned; the run stops early when the pool may not hold the next
// one, and at sizes.length.
Napi::Value CachedReadBatch(const Napi::CallbackInfo& info, Instance& instance);

}  // namespace smartread
