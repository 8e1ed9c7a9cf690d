// SPDX-License-Identifier: MIT
// Destination Buffers for whole-file reads, allocated so that filling them is not fault bound.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>

namespace smartread {

class BlockPool;

struct DestBuffer {
  napi_value value = nullptr;  // the JS Buffer
  uint8_t* data = nullptr;
  size_t length = 0;
  // Every page is already faulted in (a recycled block): nothing to fault in before the read.
  bool in_place = false;
};

// An uninitialised Buffer of `length` bytes. From the environment's block pool, `blocks` (null
// where it has none), when the size calls for it (block_pool.h: a recycled block's pages are in
// place, so filling it costs no page faults), else from Node's allocator, so that V8 accounts
// for it and frees it when it is collected. A large one from Node's allocator is advised
// MADV_HUGEPAGE before it is touched, so that the kernel faults it in 2 MiB at a time instead of
// 4 KiB (BASELINES.md: a fresh 128 MiB destination fills at ~1.7 GB/s with small pages).
// Returns false with a pending JS exception when memory cannot be had.
bool NewDestBuffer(napi_env env, BlockPool* blocks, size_t length, DestBuffer* out);

// Whether AdviseHugePagesIfLarge advises at all (setup() passes what
// src/ts/engine/huge_pages.ts found: not where free page reporting makes huge pages expensive to
// touch). On by default.
void SetHugePageAdvice(bool on);

// Advises MADV_HUGEPAGE on the 2 MiB-aligned part of a large block that nothing has touched yet
// (blocks under 32 MiB may be recycled heap, where advice would only split the mapping).
void AdviseHugePagesIfLarge(uint8_t* data, size_t length);

// Faults in a destination that the kernel's copy would otherwise fault in one 4 KiB page at a
// time: memory that no one has touched yet, as a new mapping from malloc is, or heap memory the
// allocator has given back to the kernel. Memory already in place is left alone. For the calling
// thread just before it fills the range; never on the event loop for a read that runs elsewhere.
void FaultInIfFresh(uint8_t* data, size_t length);

// Faults in every page of a range known to be fresh (a new block), in one call.
void FaultIn(uint8_t* data, size_t length);

// A Buffer holding a copy of `length` bytes at `data`; false with a pending exception on failure.
bool CopyToBuffer(napi_env env, const uint8_t* data, size_t length, napi_value* out);

}  // namespace smartread
