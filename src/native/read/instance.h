// SPDX-License-Identifier: MIT
// The state one Node environment (the main thread or a worker) keeps for its reads (addon.cc
// holds it, beside the environment's ring and the directories its writes know).
#pragma once

#include <node_api.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../common/block_pool.h"
#include "blind_reads.h"
#include "fast_path_hints.h"

namespace smartread {

// What a calibration profile may change (see src/ts/engine/tuning.ts), with the defaults measured
// on the machines smartread was written on.
struct Tuning {
  // The cache-hit fast path copies a file on the calling thread while the copy is expected to
  // take at most this long, at this rate: past it, the event loop would be held too long, and
  // a read in parallel chunks on other threads is sooner done. The rate is that of a copy from
  // the page cache into a destination in place (~9 GB/s in BASELINES.md on this machine kind;
  // `smartread calibrate` measures it).
  uint64_t fast_path_budget_us = 500;
  uint64_t copy_rate_mb_per_s = 8000;
  // The largest file the fast path copies.
  uint64_t FastPathMax() const { return fast_path_budget_us * copy_rate_mb_per_s; }
  // io_uring reads a larger file in chunks of this size, this many in flight: each is a worker
  // thread copying. Where there are two CPUs, four are faster than eight and hold the loop less
  // (128 MiB on this 2 vCPU VM: cold 62 ms instead of 89, its longest loop stall 2.2 ms instead
  // of 6.1; warm 16 MiB 2.8 ms instead of 3.4), as `smartread calibrate` also finds; beyond two
  // CPUs eight, as measured before.
  uint64_t uring_chunk = uint64_t{2} << 20;
  uint32_t uring_in_flight = uv_available_parallelism() <= 2 ? 4 : 8;
  // From this size on, io_uring's reads run on its workers rather than inline at submission.
  uint64_t uring_async_from = uint64_t{512} << 10;
  // Which results come from recycled blocks, and how many the pool keeps for how long.
  BlockPoolLimits block_pool;
};

struct Instance {
  Tuning tuning;

  // Recycled destinations for large results (set up by setup(); null where the environment has
  // no event loop). Its blocks outlive the Instance while Buffers still hold them.
  std::shared_ptr<BlockPool> blocks;

  // buffer.constants.MAX_LENGTH of this runtime, set by the TypeScript loader: the largest file
  // a Buffer can hold.
  uint64_t max_length = uint64_t{1} << 32;

  // First chunk of reads whose size is unknown beforehand (/proc, pipes, devices), reused so that
  // such reads allocate only what they return. Owned by this environment; released by its
  // cleanup hook.
  static constexpr size_t kScratchSize = size_t{64} << 10;
  std::unique_ptr<uint8_t[]> scratch;

  // The slab that small results are read into and returned from as views, as Node pools small
  // Buffers: a Buffer owned by JS, held here by a strong reference while it is the current one.
  static constexpr size_t kPooledMax = 4096;
  napi_ref pool_ref = nullptr;
  uint8_t* pool_data = nullptr;
  size_t pool_length = 0;

  // What the cache-hit fast path learnt from earlier reads.
  FastPathHints fast_path;
  // Its judgements where the kernel cannot be asked (overlayfs, FUSE), shared with readMany's
  // runs on pool threads.
  std::shared_ptr<BlindReads> blind = std::make_shared<BlindReads>();

  // Where the small results of a readMany run that are read one by one land before they are
  // copied into the run's one Buffer: kRunSlots slots of kPooledMax bytes, reused (so not
  // faulted in again); and the names the run's io_uring batch reads.
  static constexpr size_t kRunSlots = 64;
  std::unique_ptr<uint8_t[]> run_slots;
  std::vector<std::string> run_names = std::vector<std::string>(kRunSlots);

  uint8_t* Scratch() {
    if (!scratch) scratch.reset(new uint8_t[kScratchSize]);
    return scratch.get();
  }
  uint8_t* RunSlots() {
    if (!run_slots) run_slots.reset(new uint8_t[kRunSlots * kPooledMax]);
    return run_slots.get();
  }
  // Idempotent: called by the env cleanup hook and again by the instance-data finalizer.
  void Close(napi_env env) {
    if (blocks) blocks->Close();
    blocks.reset();
    scratch.reset();
    run_slots.reset();
    if (pool_ref != nullptr) napi_delete_reference(env, pool_ref);
    pool_ref = nullptr;
    pool_data = nullptr;
    pool_length = 0;
  }
};

}  // namespace smartread
