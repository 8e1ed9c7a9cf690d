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
// ...or a path the JS thread claimed from the run (cachedRunClaim) and read itself.
constexpr int32_t kRunTaken = -6;

// The longest run cachedReadRun takes. Longer than a run on the JS thread (kCachedRunMax): the
// pool thread reads while its last run waits for the JS thread to take it (up to a turn of the
// lanes' budget, plus a thread wake-up), and with runs of 64 it sat idle more than half the
// time on a real tree (docs/benchmarks.md).
constexpr size_t kElsewhereRunMax = 256;

// cachedReadRun(paths: unknown[], start, end, flags, rootFd?, resolve?)
//   -> [Promise<[slab: Buffer, results: Int32Array] | undefined>, run: external]
// Reads the small regular files of paths[start..end) (at most kElsewhereRunMax) on a thread of
// libuv's pool, as the fast path does on the JS thread (openat2 RESOLVE_CACHED, a look at the
// name before it is opened unless it was a small regular file last time, preadv2 RWF_NOWAIT or
// a plain read on tmpfs and ramfs), so that it never waits on a device. results[2k] is a hit's
// byte count, kRunMiss, kRunWarming or kRunLeft; a hit's bytes are in the slab at results[2k + 1]. The names
// are copied before the call returns; a root's descriptor must stay open until it settles.
// The pool thread reads the files in order, each once nobody has claimed it; the JS thread may
// claim those it has not reached (cachedRunClaim), whose results[2k] are then kRunTaken.
Napi::Value CachedReadRun(const Napi::CallbackInfo& info, Instance& instance);

// cachedRunClaim(run) -> number
// The index (from start) of the next file of the run that nobody has claimed, now the caller's
// to read, or -1 when none is left (or the run has settled).
Napi::Value CachedRunClaim(const Napi::CallbackInfo& info);

// cachedRunSettle(run, spinUs) -> [slab, results] | undefined
// Ends the claims (a file nobody has claimed yet is left: kRunLeft), then the run's results, as
// its promise would give them, when the pool thread has read every file it claimed, waiting for
// that at most spinUs (at most 1,000) on the calling thread; the promise then resolves with
// undefined. undefined when the pool thread is not done by then, or when the run has settled
// before: the promise gives them. Called once cachedRunClaim has returned -1.
Napi::Value CachedRunSettle(const Napi::CallbackInfo& info);

}  // namespace smartread
