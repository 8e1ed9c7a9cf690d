// SPDX-License-Identifier: MIT
// Allocation of read destinations: Node's allocator, with huge-page advice for large ones.
#include "dest_buffer.h"

#include <sys/mman.h>

#include "block_pool.h"

#include <atomic>
#include <cerrno>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

namespace smartread {

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
// glibc serves allocations of 32 MiB and more (its largest mmap threshold) from fresh mappings
// that no one has touched yet, which is when advice still decides the page size. Smaller ones
// may come from the heap, already faulted in, where advice would only split its mapping.
constexpr size_t kHugeAdviceThreshold = size_t{32} << 20;

std::atomic<bool> huge_page_advice{true};

}  // namespace

void SetHugePageAdvice(bool on) { huge_page_advice.store(on, std::memory_order_relaxed); }

// Advice only: where THP is off, or the range is not ours to advise, the pages stay small.
void AdviseHugePagesIfLarge(uint8_t* data, size_t length) {
  if (length < kHugeAdviceThreshold || !huge_page_advice.load(std::memory_order_relaxed)) return;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + length) & ~(kHugePage - 1);
  if (end > start) madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
}

namespace {

// A destination is usually cold: V8 frees dead Buffers only at its next GC, so malloc hands out
// memory last touched many reads ago, and so does the pool a recycled block (it came back at a
// collection). The kernel's copy into it stalls on one cache miss after another. Asking for every
// line up front overlaps those misses: measured here, a cached 64 KiB read into a fresh Buffer
// went from ~14 to ~11 us and 256 KiB from ~54 to ~38 us; into a recycled block (Node 20,
// smartReadSync in a loop, CPU time a read) tmpfs 64 KiB 19 -> 12 us, 256 KiB 58 -> 36, overlay
// 64 KiB 13 -> 10, ext4 unchanged within noise. Above this range the lines outgrow what the core
// can keep in flight (prefetching recycled blocks of 1 MiB made ext4 and overlay reads slower,
// 120 -> 150 us: the kernel copies their large folios fast), and below it there is nothing to
// overlap.
constexpr size_t kPrefetchMin = size_t{16} << 10;
constexpr size_t kPrefetchMax = size_t{384} << 10;

void PrefetchIfCold(const uint8_t* data, size_t length) {
  if (length < kPrefetchMin || length > kPrefetchMax) return;
  for (size_t offset = 0; offset < length; offset += 64) __builtin_prefetch(data + offset, 1, 3);
}

// Below this, a few faults cost less than the look.
constexpr size_t kFaultInMin = size_t{256} << 10;
constexpr uintptr_t kPage = 4096;

// Cleared on the first EINVAL: a kernel before 5.14.
std::atomic<bool> populate_works{true};

bool PageInPlace(uintptr_t page) {
  unsigned char in_core = 0;
  // ENOMEM (not mapped) cannot happen for a live destination; any failure means "do not know".
  if (mincore(reinterpret_cast<void*>(page), kPage, &in_core) != 0) return true;
  return (in_core & 1) != 0;
}

}  // namespace

// MADV_POPULATE_WRITE allocates and maps every page of a range in one call, without a trap per
// page: measured here on fresh memory, a read of a cached file into 256 KiB took 27 instead of
// 45 us, 1 MiB 117 instead of 188, 16 MiB 3.8 instead of 5.6 ms. On memory already in place it
// only walks the page tables, but that still costs ~8 us per MiB, hence the look first: mincore
// at both ends and in the middle (malloc hands out fresh ranges, or recycled ones, rarely a mix;
// a mix is still read correctly, faulting as it goes).
void FaultInIfFresh(uint8_t* data, size_t length) {
  if (length < kFaultInMin || !populate_works.load(std::memory_order_relaxed)) return;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + length) & ~(kPage - 1);
  if (end <= start) return;
  const uintptr_t middle = start + (((end - start) / 2) & ~(kPage - 1));
  if (PageInPlace(start) && PageInPlace(middle) && PageInPlace(end - kPage)) return;
  FaultIn(data, length);
}

void FaultIn(uint8_t* data, size_t length) {
  if (length < kFaultInMin || !populate_works.load(std::memory_order_relaxed)) return;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + length) & ~(kPage - 1);
  if (end <= start) return;
  // EINVAL: a kernel before 5.14. Anything else (ENOMEM, EFAULT) is left to the read itself,
  // which faults the pages in as before and reports what it must.
  if (madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
    populate_works.store(false, std::memory_order_relaxed);
  }
}

bool NewDestBuffer(napi_env env, BlockPool* blocks, size_t length, DestBuffer* out) {
  if (blocks != nullptr && blocks->Wants(length)) {
    Block block;
    const bool lent = blocks->LendNew(env, length, &block, &out->value);
    // A pool that cannot map a block leaves the Buffer to Node's allocator, which reports
    // what it must.
    if (block.data != nullptr) {
      if (!lent) return false;
      out->data = block.data;
      out->length = length;
      out->in_place = block.recycled;
      // A new block's pages are not there yet: nothing to prefetch.
      if (block.recycled) PrefetchIfCold(out->data, length);
      return true;
    }
  }
  void* data = nullptr;
  if (napi_create_buffer(env, length, &data, &out->value) != napi_ok) return false;
  out->data = static_cast<uint8_t*>(data);
  out->length = length;
  AdviseHugePagesIfLarge(out->data, length);
  PrefetchIfCold(out->data, length);
  return true;
}

bool CopyToBuffer(napi_env env, const uint8_t* data, size_t length, napi_value* out) {
  void* copy = nullptr;
  return napi_create_buffer_copy(env, length, data, &copy, out) == napi_ok;
}

}  // namespace smartread
