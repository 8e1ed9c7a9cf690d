// SPDX-License-Identifier: MIT
// Recycled destinations for large results: a per-environment pool of mapped blocks.
#include "block_pool.h"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <thread>

#include "dest_buffer.h"

namespace smartread {

namespace {

constexpr size_t kPage = 4096;

size_t RoundUp(size_t value, size_t step) { return (value + step - 1) / step * step; }

// Blocks come in size classes eight to a doubling (at most 12.5% of a block unused), so that
// files of nearby sizes share blocks, and a file read again gets the block its last read had.
size_t SizeClass(size_t length) {
  const size_t pages = RoundUp(std::max<size_t>(length, 1), kPage);
  const int top = 63 - __builtin_clzll(pages);
  const size_t step = top > 15 ? size_t{1} << (top - 3) : kPage;
  return RoundUp(pages, std::max(step, kPage));
}

uint64_t NowMs() { return uv_hrtime() / 1000000; }

std::atomic<uint64_t> process_bytes{0};

// Unmapping a block frees its pages, on the thread that calls munmap: 10 ms for a 128 MiB block
// here, and the pool releases blocks from the event loop (a finalizer, the idle timer, a return
// past the bound). One thread of the process unmaps them instead, so that no loop waits. Where
// it falls behind by more than kBacklogBytes, or cannot be started, the caller unmaps, so that
// memory is never held on its account for long. Made once and never destroyed: it may still be
// unmapping while the process exits.
class Unmapper {
 public:
  static Unmapper& Get() {
    static Unmapper* unmapper = new Unmapper();
    return *unmapper;
  }

  void Unmap(void* data, size_t length) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (backlog_ + length <= kBacklogBytes && Started()) {
        queue_.push_back({data, length});
        backlog_ += length;
        wake_.notify_one();
        return;
      }
    }
    munmap(data, length);
  }

 private:
  static constexpr size_t kBacklogBytes = size_t{1} << 30;
  struct Mapping {
    void* data;
    size_t length;
  };

  bool Started() {
    if (state_ == State::kNotYet) {
      try {
        std::thread(&Unmapper::Run, this).detach();
        state_ = State::kRunning;
      } catch (...) {
        state_ = State::kFailed;
      }
    }
    return state_ == State::kRunning;
  }

  void Run() {
    pthread_setname_np(pthread_self(), "smartread-unmap");
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return !queue_.empty(); });
      const Mapping mapping = queue_.front();
      queue_.pop_front();
      lock.unlock();
      munmap(mapping.data, mapping.length);
      lock.lock();
      backlog_ -= mapping.length;
    }
  }

  enum class State { kNotYet, kRunning, kFailed };
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Mapping> queue_;
  size_t backlog_ = 0;
  State state_ = State::kNotYet;
};

}  // namespace

// What a lent Buffer's finalizer needs: the pool (kept alive by it) and the block; a weak
// reference to the Buffer's ArrayBuffer, and whether Reclaim() has taken the block back.
struct BlockPool::Loan {
  std::shared_ptr<BlockPool> pool;
  Block block;
  napi_ref weak = nullptr;
  bool reclaimed = false;
};

std::shared_ptr<BlockPool> BlockPool::Create(napi_env env) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) return nullptr;
  std::shared_ptr<BlockPool> pool(new BlockPool(loop));
  pool->timer_ = new uv_timer_t;
  uv_timer_init(loop, pool->timer_);
  pool->timer_->data = pool.get();
  // Idle blocks never keep the process alive, nor does the end of a turn.
  uv_unref(reinterpret_cast<uv_handle_t*>(pool->timer_));
  pool->turn_end_ = new uv_check_t;
  uv_check_init(loop, pool->turn_end_);
  pool->turn_end_->data = pool.get();
  uv_unref(reinterpret_cast<uv_handle_t*>(pool->turn_end_));
  // The hook holds the pool until the timer is closed: finalizers of Buffers still alive at
  // teardown may return blocks after the environment's own references are gone.
  auto* holder = new std::shared_ptr<BlockPool>(pool);
  if (napi_add_async_cleanup_hook(env, &BlockPool::OnTeardown, holder, &pool->teardown_) != napi_ok) {
    delete holder;
    uv_close(reinterpret_cast<uv_handle_t*>(pool->timer_), [](uv_handle_t* handle) {
      delete reinterpret_cast<uv_timer_t*>(handle);
    });
    pool->timer_ = nullptr;
    pool->CloseTurnEnd();
    return nullptr;
  }
  return pool;
}

// The check handle holds nothing of the pool once it is closing: its close callback only frees
// it, whenever it runs.
void BlockPool::CloseTurnEnd() {
  if (turn_end_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(turn_end_), [](uv_handle_t* handle) {
    delete reinterpret_cast<uv_check_t*>(handle);
  });
  turn_end_ = nullptr;
}

void BlockPool::OnTeardown(napi_async_cleanup_hook_handle, void* arg) {
  auto* holder = static_cast<std::shared_ptr<BlockPool>*>(arg);
  BlockPool* self = holder->get();
  self->Close();
  self->CloseTurnEnd();
  uv_timer_t* timer = self->timer_;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->timer_ = nullptr;
  }
  timer->data = holder;
  uv_close(reinterpret_cast<uv_handle_t*>(timer), [](uv_handle_t* handle) {
    auto* holder = static_cast<std::shared_ptr<BlockPool>*>(handle->data);
    napi_remove_async_cleanup_hook((*holder)->teardown_);
    delete reinterpret_cast<uv_timer_t*>(handle);
    delete holder;
  });
}

BlockPool::BlockPool(uv_loop_t* loop) : loop_(loop), loop_thread_(std::this_thread::get_id()) {}

BlockPool::~BlockPool() {
  for (const Idle& idle : idle_) Release(idle.block);
}

// A block given back to the system: no longer the pool's from here (processBytes), although its
// pages may be freed a moment later by the unmapping thread.
void BlockPool::Release(const Block& block) {
  process_bytes.fetch_sub(block.capacity, std::memory_order_relaxed);
  Unmapper::Get().Unmap(block.data, block.capacity);
}

bool BlockPool::Wants(size_t length) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !closed_ && limits_.from > 0 && length >= limits_.from;
}

Block BlockPool::Take(size_t length, bool may_map) {
  const size_t capacity = SizeClass(length);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The most recently returned block of the class: the likeliest to still be in the caches.
    for (size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i].block.capacity != capacity) continue;
      Block block = idle_[i].block;
      idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
      stats_.idle_bytes -= capacity;
      stats_.idle_blocks--;
      stats_.hits++;
      stats_.lent_bytes += capacity;
      stats_.lent_blocks++;
      block.recycled = true;
      return block;
    }
    if (!may_map) {
      stats_.declined++;
      return Block{};
    }
    stats_.misses++;
  }
  void* data = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return Block{};
  process_bytes.fetch_add(capacity, std::memory_order_relaxed);
  Block block{static_cast<uint8_t*>(data), capacity, false};
  AdviseHugePagesIfLarge(block.data, capacity);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.lent_bytes += capacity;
  stats_.lent_blocks++;
  return block;
}

void BlockPool::Give(const Block& block) {
  if (block.data != nullptr) Return(block, false);
}

void BlockPool::Return(const Block& block, bool lent) {
  bool keep;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.lent_bytes -= block.capacity;
    stats_.lent_blocks--;
    keep = !closed_ && std::this_thread::get_id() == loop_thread_ && block.capacity <= limits_.max_bytes;
    if (keep) {
      idle_.push_back(Idle{block, NowMs()});
      stats_.idle_bytes += block.capacity;
      stats_.idle_blocks++;
      TrimLocked(NowMs());
    } else {
      stats_.released++;
    }
  }
  if (!keep) Release(block);
  if (keep) ArmTimer();
}

void BlockPool::TrimLocked(uint64_t now_ms) {
  size_t drop = 0;
  uint64_t bytes = stats_.idle_bytes;
  // Oldest first: idle_ is in the order blocks came back.
  while (drop < idle_.size() &&
         (now_ms - idle_[drop].since_ms >= limits_.idle_ms || bytes > limits_.max_bytes)) {
    bytes -= idle_[drop].block.capacity;
    drop++;
  }
  for (size_t i = 0; i < drop; i++) Release(idle_[i].block);
  idle_.erase(idle_.begin(), idle_.begin() + static_cast<std::ptrdiff_t>(drop));
  stats_.idle_bytes = bytes;
  stats_.idle_blocks -= drop;
  stats_.released += drop;
}

// One-shot, set for when the oldest idle block has been idle for idle_ms. On the JS thread only.
void BlockPool::ArmTimer() {
  uint64_t due_in;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || idle_.empty() || timer_ == nullptr) return;
    const uint64_t age = NowMs() - idle_.front().since_ms;
    due_in = age >= limits_.idle_ms ? 0 : limits_.idle_ms - age;
  }
  // Re-armed from each return: a later due time than the one set would only delay the release.
  if (timer_armed_ && uv_timer_get_due_in(timer_) <= due_in) return;
  uv_timer_start(timer_, &BlockPool::OnTimer, due_in, 0);
  timer_armed_ = true;
}

void BlockPool::OnTimer(uv_timer_t* timer) {
  BlockPool* self = static_cast<BlockPool*>(timer->data);
  self->timer_armed_ = false;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->TrimLocked(NowMs());
  }
  self->ArmTimer();
}

// V8 counts a Buffer's bytes as external memory by itself, whoever allocated them, and collects
// when that grows 64 MiB past what its last full collection left. A Buffer that Node's allocator
// makes also has V8 look, before it allocates, at the external bytes of young objects: past two
// semispaces' worth (16 MiB here) it runs a scavenge first, which frees the dead young results
// in a fraction of a millisecond. A Buffer over a block skips that look, so dead results were
// only found by full collections: a mark-compact every 3 reads of 16 MiB (0.6-3.5 ms each, the
// reads' mean 3.0 ms against a median of 2.1). A one-byte ArrayBuffer from the allocator has V8
// take the look: with it, 300 reads of 16 MiB took 3 mark-compacts instead of 74, and 1.8 ms
// each on average (Node 20 and 22; Node 24's V8 no longer looks, for its own Buffers either).
//
// That look is taken once per kPokeBytes lent, not per Buffer: the one-byte ArrayBuffer is an
// allocation and garbage of its own. And the loans are looked at only after a collection, which
// the last one-byte ArrayBuffer, held weakly, tells: young and referenced by nothing else, any
// collection that could free a result frees it too. Looking at every loan on every read cost
// time in proportion to the loans outstanding (500 at 64 KiB between scavenges): a loop of
// cached 64 KiB reads from the pool took 13 us a read instead of 10.7 without it.
void BlockPool::CollectYoungIfDue(napi_env env, size_t length) {
  constexpr uint64_t kPokeBytes = uint64_t{1} << 20;
  void* data;
  napi_value fresh = nullptr;
  lent_since_poke_ += length;
  if (lent_since_poke_ >= kPokeBytes) {
    napi_create_arraybuffer(env, 1, &data, &fresh);
    lent_since_poke_ = 0;
  }
  if (collected_ != nullptr) {
    napi_value alive = nullptr;
    if (napi_get_reference_value(env, collected_, &alive) == napi_ok && alive != nullptr) return;
    napi_delete_reference(env, collected_);
    collected_ = nullptr;
  }
  Reclaim(env);
  if (fresh == nullptr) napi_create_arraybuffer(env, 1, &data, &fresh);
  if (fresh != nullptr) napi_create_reference(env, fresh, 0, &collected_);
}

bool BlockPool::Lend(napi_env env, const Block& block, size_t length, napi_value* out) {
  CollectYoungIfDue(env, length);
  return Wrap(env, block, length, out);
}

bool BlockPool::LendNew(napi_env env, size_t length, Block* block, napi_value* out) {
  CollectYoungIfDue(env, length);
  *block = Take(length, MayMapThisTurn());
  if (block->data == nullptr) return false;
  if (!block->recycled) MappedThisTurn(block->capacity);
  return Wrap(env, *block, length, out);
}

bool BlockPool::MayMapThisTurn() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mapped_this_turn_ < limits_.max_bytes / 4;
}

void BlockPool::MappedThisTurn(size_t capacity) {
  mapped_this_turn_ += capacity;
  if (turn_end_ != nullptr && uv_is_active(reinterpret_cast<uv_handle_t*>(turn_end_)) == 0) {
    uv_check_start(turn_end_, &BlockPool::OnTurnEnd);
  }
}

void BlockPool::OnTurnEnd(uv_check_t* check) {
  static_cast<BlockPool*>(check->data)->mapped_this_turn_ = 0;
  uv_check_stop(check);
}

bool BlockPool::Wrap(napi_env env, const Block& block, size_t length, napi_value* out) {
  Loan* loan = new Loan{shared_from_this(), block};
  if (napi_create_external_buffer(env, length, block.data, &BlockPool::Finalize, loan, out) != napi_ok) {
    delete loan;
    Give(block);
    return false;
  }
  // From here on the loan belongs to the Buffer's finalizer. Without the weak reference the
  // block only comes back through the finalizer.
  napi_value array_buffer;
  if (napi_get_typedarray_info(env, *out, nullptr, nullptr, nullptr, &array_buffer, nullptr) == napi_ok &&
      napi_create_reference(env, array_buffer, 0, &loan->weak) == napi_ok) {
    watched_.push_back(loan);
  }
  return true;
}

void BlockPool::Reclaim(napi_env env) {
  size_t kept = 0;
  for (Loan* loan : watched_) {
    napi_value value = nullptr;
    if (napi_get_reference_value(env, loan->weak, &value) != napi_ok || value != nullptr) {
      watched_[kept++] = loan;
      continue;
    }
    napi_delete_reference(env, loan->weak);
    loan->weak = nullptr;
    loan->reclaimed = true;
    Return(loan->block, true);
  }
  watched_.resize(kept);
}

// Called on the JS thread once V8 has freed the Buffer's memory, or by Node at the
// environment's teardown for a Buffer still alive then.
void BlockPool::Finalize(napi_env env, void*, void* hint) {
  Loan* loan = static_cast<Loan*>(hint);
  if (!loan->reclaimed) {
    BlockPool* pool = loan->pool.get();
    if (loan->weak != nullptr) {
      pool->watched_.erase(std::find(pool->watched_.begin(), pool->watched_.end(), loan));
      napi_delete_reference(env, loan->weak);
    }
    pool->Return(loan->block, true);
  }
  delete loan;
}

void BlockPool::SetLimits(const BlockPoolLimits& limits) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    limits_ = limits;
    TrimLocked(NowMs());
  }
  if (timer_armed_ && timer_ != nullptr) {
    uv_timer_stop(timer_);
    timer_armed_ = false;
  }
  ArmTimer();
}

BlockPoolLimits BlockPool::limits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return limits_;
}

BlockPoolStats BlockPool::Stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  BlockPoolStats stats = stats_;
  stats.process_bytes = process_bytes.load(std::memory_order_relaxed);
  return stats;
}

void BlockPool::Close() {
  std::vector<Idle> idle;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    closed_ = true;
    idle.swap(idle_);
    stats_.released += idle.size();
    stats_.idle_bytes = 0;
    stats_.idle_blocks = 0;
  }
  for (const Idle& i : idle) Release(i.block);
}

}  // namespace smartread
