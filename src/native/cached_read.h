// SPDX-License-Identifier: MIT
// The cache-hit fast path: a whole-file read that succeeds only if it cannot block.
#pragma once

#include <napi.h>

#include "instance.h"

namespace smartread {

// cachedRead(target: string | Buffer, flags: number, poolOffset: number)
//   -> Buffer | bytes read into the pool | {errno, syscall} | null
// openat2(RESOLVE_CACHED) then preadv2(RWF_NOWAIT), on the calling thread: both succeed only
// when the path's dentries and the file's pages are in memory, and fail with EAGAIN instead
// of waiting for a disk. On the filesystems setFastPath names as memory-backed, where the kernel
// refuses RWF_NOWAIT (tmpfs), a plain read, which cannot wait there either. null means "not a
// hit" (not cached, not a regular file, over setFastPath's maxSize, or a kernel without these
// calls): nothing was left open and the caller reads it another way. An error the path
// resolution or the file gives for certain is returned as such. Pooling as readFileSync's.
Napi::Value CachedRead(const Napi::CallbackInfo& info, Instance& instance);

}  // namespace smartread
