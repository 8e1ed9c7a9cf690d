// SPDX-License-Identifier: MIT
// The state one Node environment (the main thread or a worker) keeps in the addon.
#pragma once

#include <node_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace smartread {

struct Instance {
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

  // The fast path's policy, set by the TypeScript loader (fast_path.ts owns it) before any read:
  // the largest file it reads (0: none), and the statfs f_types whose pages are always in
  // memory (tmpfs, ramfs), on which a plain read cannot wait for a device where RWF_NOWAIT is
  // refused.
  uint64_t fast_path_max = 0;
  std::vector<int64_t> memory_filesystems;

  uint8_t* Scratch() {
    if (!scratch) scratch.reset(new uint8_t[kScratchSize]);
    return scratch.get();
  }
  // Idempotent: called by the env cleanup hook and again by the instance-data finalizer.
  void Close(napi_env env) {
    scratch.reset();
    if (pool_ref != nullptr) napi_delete_reference(env, pool_ref);
    pool_ref = nullptr;
    pool_data = nullptr;
    pool_length = 0;
  }
};

}  // namespace smartread
