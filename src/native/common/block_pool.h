// SPDX-License-Identifier: MIT
// Recycled destinations for large results: blocks whose pages are already in place.
#pragma once

#include <node_api.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace smartread {

// A block of anonymous memory that a result is read into.
struct Block {
  uint8_t* data = nullptr;
  size_t capacity = 0;
  // Taken from the pool: every page is in place (faulted in by an earlier read).
  bool recycled = false;
};

// The limits of one environment's pool (set through setTuning, see src/ts/engine/tuning.ts).
struct BlockPoolLimits {
  // Results of at least this many bytes come from the pool (0: none do). setup() sets it for
  // the runtime's V8 (src/ts/engine/tuning.ts defaultBlockPoolFrom: 128 KiB or 8 MiB)...
  uint64_t from = uint64_t{8} << 20;
  // ...which keeps at most this many bytes of idle blocks...
  uint64_t max_bytes = uint64_t{256} << 20;
  // ...each for at most this long after its last use.
  uint64_t idle_ms = 3000;
};

struct BlockPoolStats {
  uint64_t idle_bytes = 0;
  uint64_t idle_blocks = 0;
  uint64_t lent_bytes = 0;
  uint64_t lent_blocks = 0;
  // Results that got a recycled block, and those that got a new one.
  uint64_t hits = 0;
  uint64_t misses = 0;
  // Blocks given back to the system: idle too long, past the bound, or at teardown.
  uint64_t released = 0;
  // Results left to Node's allocator: this turn of the event loop had mapped its share of new
  // blocks already (see BlockPool's comment).
  uint64_t declined = 0;
  // Bytes mapped by every environment's pool in this process, idle or lent.
  uint64_t process_bytes = 0;
};

// One environment's pool. A Buffer made with Lend() owns its block until its ArrayBuffer has
// been collected: a block is never handed out again while any Buffer still refers to it. Node
// makes such Buffers untransferable (postMessage copies them on Node 20 and refuses to transfer
// them from 22 on), so no other thread can hold one either.
// Node calls a Buffer's finalizer only from its event loop (SetImmediate), after V8 has freed
// the memory: a synchronous loop of reads would never see a block come back, and would map a
// new one per read until it yields. So each loan also holds a weak reference to its
// ArrayBuffer, and Reclaim() (on the JS thread, before a block is taken) takes back the blocks
// of those V8 has collected; their finalizers, when they come, find them taken back.
//
// Reclaim() only sees what a full collection has found dead: while V8 marks incrementally,
// scavenges leave the loans' ArrayBuffers alone, and a synchronous loop of large reads (16 MiB
// x 300, results dropped at once) saw no block back for 100 reads at a time, mapped 3.2 GB and
// peaked at 1.6-4.3 GB of RSS where fs.readFileSync held 145 MB. So in one turn of the event
// loop, LendNew() maps new blocks only until it has mapped a quarter of max_bytes (64 MiB by
// default; the block that crosses it is still mapped): past that, until the loop turns, a result
// gets a recycled block if one is idle, else Node's allocator, whose memory V8 frees at its next
// scavenge without the loop. A loop whose results come back in time (one that touches its
// results, or awaits between reads) keeps recycling its first blocks and is not slowed.
//
// Take() may run on any thread (the thread-pool engine allocates on its workers); Lend(), the
// finalizer, the idle timer and the turn's check run on the environment's JS thread. A block
// returned from elsewhere is released at once rather than kept, as the timer can only be armed
// from there.
class BlockPool : public std::enable_shared_from_this<BlockPool> {
 public:
  // nullptr when the environment has no event loop to run the idle timer on.
  static std::shared_ptr<BlockPool> Create(napi_env env);
  ~BlockPool();

  // Whether a result of `length` bytes should come from the pool.
  bool Wants(size_t length) const;
  // A block of at least `length` bytes: a recycled one of its size class, or a new mapping
  // unless `may_map` is false (data nullptr when none is had). The caller owns it until it
  // Lend()s or Give()s it. Any thread.
  Block Take(size_t length, bool may_map = true);
  // Returns a block that was never lent out (a read that failed).
  void Give(const Block& block);
  // A Buffer of `length` bytes over the block, which goes back to the pool once V8 has
  // collected it. False with a pending exception (the block is then given back). JS thread.
  bool Lend(napi_env env, const Block& block, size_t length, napi_value* out);
  // Take() and Lend() in one, on the JS thread, in the order that lets the block be a recycled
  // one: V8 is asked to free dead young results first, then collected Buffers' blocks are taken
  // back, then one is taken, a new one only within this turn's share. *block.data is nullptr,
  // with nothing pending, when no block was had (the caller uses Node's allocator).
  bool LendNew(napi_env env, size_t length, Block* block, napi_value* out);

  void SetLimits(const BlockPoolLimits& limits);
  BlockPoolLimits limits() const;
  BlockPoolStats Stats() const;
  // Idle blocks are released, and from now on every block as it comes back. Idempotent.
  void Close();

 private:
  struct Idle {
    Block block;
    uint64_t since_ms;
  };
  struct Loan;

  explicit BlockPool(uv_loop_t* loop);
  // The Buffer over a block.
  bool Wrap(napi_env env, const Block& block, size_t length, napi_value* out);
  // Takes back the blocks of lent Buffers that V8 has collected. JS thread.
  void Reclaim(napi_env env);
  // Has V8 scavenge first if its young results hold many external bytes (looked at once per
  // MiB lent), then Reclaim()s if anything was collected since the last look.
  void CollectYoungIfDue(napi_env env, size_t length);
  void Return(const Block& block, bool lent);
  // With the lock held: releases idle blocks unused for idle_ms, and the oldest ones while the
  // pool holds more than max_bytes.
  void TrimLocked(uint64_t now_ms);
  void ArmTimer();
  static void OnTimer(uv_timer_t* timer);
  // LendNew()'s new mappings in this turn of the event loop, counted until the loop's next check
  // phase (a check handle started by the first of a turn). JS thread only.
  bool MayMapThisTurn() const;
  void MappedThisTurn(size_t capacity);
  static void OnTurnEnd(uv_check_t* check);
  void CloseTurnEnd();
  // The environment's teardown: Close(), and the timer closed before the loop is.
  static void OnTeardown(napi_async_cleanup_hook_handle handle, void* arg);
  static void Release(const Block& block);
  static void Finalize(napi_env env, void* data, void* hint);

  uv_loop_t* const loop_;
  const std::thread::id loop_thread_;
  uv_timer_t* timer_ = nullptr;
  bool timer_armed_ = false;
  uv_check_t* turn_end_ = nullptr;
  uint64_t mapped_this_turn_ = 0;
  napi_async_cleanup_hook_handle teardown_ = nullptr;

  mutable std::mutex mutex_;
  BlockPoolLimits limits_;
  std::vector<Idle> idle_;
  // Loans whose ArrayBuffer may still be alive (JS thread only).
  std::vector<Loan*> watched_;
  // A one-byte ArrayBuffer held weakly: gone once V8 has collected since the loans were last
  // looked at. Bytes lent since V8 was last made to look at its young external bytes.
  napi_ref collected_ = nullptr;
  uint64_t lent_since_poke_ = 0;
  BlockPoolStats stats_;
  bool closed_ = false;
};

}  // namespace smartread
