// SPDX-License-Identifier: MIT
// readMany's fast path on a pool thread: a run of cached files read while the JS thread reads
// another.
#pragma once

#include <napi.h>

#include "instance.h"

namespace smartread {

// What cachedReadRun leaves in results[2k] for paths[start + k] that it did not read: a miss
// (its name or pages are not in memory: for the engines, which wait), or a path left to the JS
// thread's own fast path (not a string, not a small regular file, an error, or no room left in
// the run's slab), which reads it and reports what it must.
constexpr int32_t kRunMiss = -1;
constexpr int32_t kRunLeft = -4;
// ...or a miss that the engines will make a hit of (cached_read.h kWarmingMiss).
constexpr int32_t kRunWarming = -5;

// The longest run cachedReadRun takes. Longer than a run on the JS thread (kCachedRunMax): the
// pool thread reads while its last run waits for the JS thread to take it (up to a turn of the
// lanes' budget, plus a thread wake-up), and with runs of 64 it sat idle more than half the
// time on a real tree (docs/benchmarks.md).
constexpr size_t kElsewhereRunMax = 256;

// cachedReadRun(paths: unknown[], start, end, flags, rootFd?, resolve?)
//   -> Promise<[slab: Buffer, results: Int32Array]>
// Reads the small regular files of paths[start..end) (at most kElsewhereRunMax) on a thread of
// libuv's pool, as the fast path does on the JS thread (openat2 RESOLVE_CACHED, a look at the
// name before it is opened unless it was a small regular file last time, preadv2 RWF_NOWAIT or
// a plain read on tmpfs and ramfs), so that it never waits on a device. results[2k] is a hit's
// byte count, kRunMiss, kRunWarming or kRunLeft; a hit's bytes are in the slab at results[2k + 1]. The names
// are copied before the call returns; a root's descriptor must stay open until it settles.
Napi::Value CachedReadRun(const Napi::CallbackInfo& info, Instance& instance);

}  // namespace smartread
