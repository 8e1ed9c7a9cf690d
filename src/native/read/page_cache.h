// SPDX-License-Identifier: MIT
// Page-cache control for benchmarks and tests: evict a file's pages, and count those resident.
#pragma once

#include <napi.h>

namespace smartread {

// evictFromPageCache(path: string | Buffer) -> undefined | {errno, syscall}
// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file: its clean pages leave the cache
// (no root needed; dirty pages stay until written back).
Napi::Value EvictFromPageCache(const Napi::CallbackInfo& info);

// pageCacheResidency(path: string | Buffer) -> {size, cached} | {errno, syscall}
// How many of the file's bytes are in the page cache (mincore over a mapping of it).
Napi::Value PageCacheResidency(const Napi::CallbackInfo& info);

}  // namespace smartread
