// SPDX-License-Identifier: MIT
// The mmap engine: a Buffer over a private mapping of a file, unmapped by its finalizer or close.
#pragma once

#include <napi.h>

#include "instance.h"

namespace smartread {

// mapFile(path: string | Buffer, flags: number, offset: number, length: number (-1: to the end),
//         advice: number, populate: boolean)
//   -> { buffer: Buffer, mapping?: External } | {errno, syscall} | {errno: 0, reason, size}
// Opens the path (O_CLOEXEC | O_NONBLOCK, so that a FIFO never blocks), fstats it, maps the
// window [offset, offset + length) MAP_PRIVATE with PROT_READ | PROT_WRITE (writes into the
// Buffer are copy-on-write and never reach the file), closes the fd and returns a Buffer over
// the mapping. `advice` is an index into normal, sequential, random, willneed, hugepage
// (madvise); `populate` faults the pages in now with MADV_POPULATE_READ. `mapping` is the handle
// unmap() takes; without it the Buffer is a copy (an empty window, or a runtime that forbids
// external buffers). Non-regular files fail: EISDIR for a directory, ENODEV for the others;
// a window past the end fails with reason 'window' and the file's size.
Napi::Value MapFile(const Napi::CallbackInfo& info, Instance& instance);

// unmap(mapping: External, buffer: Buffer) -> boolean
// Detaches the Buffer's ArrayBuffer, so that no JS can reach the memory any more, then unmaps
// it. False (nothing done) when it was unmapped before; the Buffer's finalizer then only frees
// the bookkeeping.
Napi::Value Unmap(const Napi::CallbackInfo& info);

}  // namespace smartread
