// SPDX-License-Identifier: MIT
// Read loops over a file descriptor, shared by the engines that read on a thread of their own.
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include <napi.h>

#include "errors.h"

namespace smartread {

// Where a path is resolved: from the working directory, or, for confined reads, beneath a
// directory the caller holds open, with openat2's RESOLVE_* flags (BENEATH, NO_MAGICLINKS,
// NO_SYMLINKS) enforced by the kernel.
struct Confinement {
  int dirfd = -1;
  uint64_t resolve = 0;
  bool confined() const { return dirfd >= 0 || resolve != 0; }
};

// Confinement from JS arguments info[index] (dirfd, or undefined) and info[index + 1]
// (RESOLVE_* flags, or undefined).
Confinement ConfinementFromJs(const Napi::CallbackInfo& info, size_t index);

// Whether open flags may create a file, the only opens openat2(2) takes a mode for (EINVAL
// otherwise). O_TMPFILE is __O_TMPFILE | O_DIRECTORY: testing any of its bits would take a plain
// O_DIRECTORY open for one.
inline bool OpenMayCreate(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

// open(2) with O_CLOEXEC (mode 0666 when creating), or openat2(2) under a confinement.
// Returns the fd, or -1 with errno set.
int OpenForRead(const char* path, int flags, const Confinement& confinement);

// How often a confined open is tried while the kernel answers EAGAIN (see OpenAt2), and which
// opens are: those confined by RESOLVE_BENEATH or RESOLVE_IN_ROOT, but not RESOLVE_CACHED ones.
constexpr int kScopedOpenAttempts = 64;
inline bool RetriesOnEagain(uint64_t resolve) {
  return (resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) != 0 && (resolve & RESOLVE_CACHED) == 0;
}

// openat2(2). A lookup confined by RESOLVE_BENEATH or RESOLVE_IN_ROOT that walks through ".."
// fails with EAGAIN whenever any rename or mount anywhere on the system raced with it, as the
// kernel cannot then be sure that ".." stayed inside (openat2(2): "the caller may choose to
// retry"): 3% of such opens here while another process renamed a file back and forth. It is
// tried again, up to kScopedOpenAttempts times in all; with RESOLVE_CACHED, EAGAIN means "not in
// memory" and is returned at once. Returns the fd, or -1 with errno set.
int OpenAt2(int dirfd, const char* path, const open_how* how);

// A name that held a regular file of `size` bytes when last read, read as if it still did, with
// no fstat: one preadv2 (with `rwf_flags`) at offset 0 of `size` bytes into `data` and one byte
// more aside. True when it gave exactly `size` bytes and nothing past them: the whole file, as
// fstat and a read would have found it. Anything else (another size, an error, a FIFO, socket or
// terminal put in its place: ESPIPE, nothing consumed) is false, with nothing read that counts:
// the caller reads the fd from the start, as for a name it does not know. `*error`, when given,
// is preadv2's errno where it failed (EAGAIN with RWF_NOWAIT: the start of the file is not in
// memory), else 0.
bool ReadAsBefore(int fd, uint8_t* data, size_t size, int rwf_flags, int* error = nullptr);
// The largest file smartReadSync and the fast path read so: past it, the fstat saved is nothing
// next to the copy.
constexpr uint64_t kReadAsBeforeMax = uint64_t{1} << 20;

// Reads until `length` bytes or EOF, from `offset` (-1: the fd's position, which advances, as
// read(2) does) with preadv2 flags (RWF_NOWAIT: fail with EAGAIN rather than wait); returns the
// count, or -errno.
ssize_t ReadFully(int fd, uint8_t* data, size_t length, int64_t offset = -1, int rwf_flags = 0);

// What a read without waiting got: `done` bytes, then `error`: 0 at EOF or with all of them,
// EAGAIN where the rest is not in memory, or why the read failed.
struct NoWaitRead {
  size_t done = 0;
  int error = 0;
};

// Reads up to `length` bytes from `offset` without waiting for a device: preadv2 with RWF_NOWAIT,
// or a plain read on tmpfs and ramfs, which refuse RWF_NOWAIT although their pages are memory.
// `*in_memory` true skips the RWF_NOWAIT try; it is set when the file is found to be on one.
NoWaitRead ReadWithoutWaiting(int fd, uint8_t* data, size_t length, uint64_t offset, bool* in_memory);

// Whether `fd` is a file of tmpfs or ramfs, which refuse RWF_NOWAIT (EOPNOTSUPP, still on 6.18)
// although their pages are memory: a plain read of them never waits for a device (with no swap;
// see the README's limits).
bool InMemoryFilesystem(int fd);

// Fills `data` with the file's first `length` bytes; returns how many it held (fewer when it
// shrank meanwhile), or -errno. A large file opened for this read (own_fd: its position is ours
// to ignore) is read by the calling thread and one helper at once.
ssize_t FillFromFile(int fd, uint8_t* data, size_t length, bool own_fd);

// Reads the rest of the fd to EOF after the `*length` bytes already in the malloc'd `*block`
// of `*capacity` bytes, doubling the block as needed; the total is never allowed past
// max_length (TooLarge). On failure the block is still the caller's to free.
Failure ReadRestToEof(int fd, uint64_t max_length, uint8_t** block, size_t* length,
                      size_t* capacity);

}  // namespace smartread
