// SPDX-License-Identifier: MIT
// Read loops over a file descriptor, shared by the engines that read on a thread of their own.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "errors.h"

namespace smartread {

// Reads until `length` bytes or EOF, from `offset` (-1: the fd's position, which advances, as
// read(2) does) with preadv2 flags (RWF_NOWAIT: fail with EAGAIN rather than wait); returns the
// count, or -errno.
ssize_t ReadFully(int fd, uint8_t* data, size_t length, int64_t offset = -1, int rwf_flags = 0);

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
