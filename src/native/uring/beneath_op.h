// SPDX-License-Identifier: MIT
// Lookups and opens under a confinement on the ring, made by io-wq's workers instead of libuv's
// pool: what read/beneath.h's statBeneathAsync, statAtAsync and openBeneathAsync do there.
#pragma once

#ifdef HAVE_LIBURING

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <string>

#include "../common/file_io.h"
#include "ring.h"

namespace smartread {
namespace uring {

// What serveStatic and confined readers do where a lookup or an open may wait (a cold disk's
// lookup; any lookup, lapsed check or open on a FUSE or NFS mount). libuv's 4 threads, shared
// with every fs call of the process, made 4 such requests at a time, each a round trip to the
// server: on a FUSE mount that keeps names 0 ms, 1 ms a request, serveStatic made 580
// requests/s of the precompressed mix, 2,650 with 64 threads. io-wq runs as many as the ring's
// workers allow (Setup raises them to 64).
//
// A single op (ring.h, SingleOp), each op on a worker (IOSQE_ASYNC; STATX always is): tried
// inline in io_uring_enter, a lookup or an open would wait there for the server.
//   kLookUp  statBeneath: OPENAT2 (O_PATH, the confinement's RESOLVE_* flags: resolved as a
//            confined read would be, nothing opened for reading), then a STATX of the
//            descriptor it gave, closed when the op is deleted on the JS thread (an O_PATH
//            descriptor asks no server when closed); statBeneath's Float64Array or
//            {errno, syscall: 'stat'}.
//   kCheck   statAt: one STATX of the path from the directory, as fstatat(2).
//   kOpen    openBeneath: OPENAT2 with the caller's flags and the confinement's; the descriptor
//            (the caller's to close) or {errno, syscall: 'open'}. A descriptor no promise took
//            (the environment going away) is closed.
// EAGAIN of a confined OPENAT2 (a rename raced with "..") is tried again, as OpenAt2() does.
class BeneathOp final : public SingleOp {
 public:
  enum Kind { kLookUp, kCheck, kOpen };

  BeneathOp(Ring* ring, napi_deferred deferred, Kind kind, const char* path, int flags, const Confinement& confinement);
  ~BeneathOp() override;

  void Start() override;
  void OnCompletion(Op* op, int res) override;
  void Settle(napi_env env) override;

 private:
  void QueueOpen();
  void QueueStatx(int dirfd, const char* path, int flags);

  const napi_deferred deferred_;
  const Kind kind_;
  const std::string path_;
  const int dirfd_;
  open_how how_{};
  struct statx stx_ {};
  // The descriptor OPENAT2 gave: kLookUp's until the op is deleted, kOpen's until the promise
  // takes it.
  int fd_ = -1;
  int open_attempts_ = 0;
  // 0, or the errno that ended the request.
  int error_ = 0;
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
