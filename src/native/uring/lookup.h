// SPDX-License-Identifier: MIT
// A lookup on the ring: statBeneath or statAt made by io-wq's workers instead of libuv's pool.
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

// What serveStatic asks where a stat may wait (a cold disk's lookup, any stat on a FUSE or NFS
// mount): libuv's 4 threads made 4 such stats at a time, each a round trip to the server, and
// set the pace of a site whose attributes lapse (a FUSE mount that keeps names 0 ms, 1 ms a
// request: 580 requests/s of the precompressed mix, 2,650 with 64 threads). io-wq runs as many
// as the ring's workers allow (Setup raises them to 64).
//
// A single op (ring.h, SingleOp), settled with statBeneath's Float64Array or {errno, syscall:
// 'stat'}:
//   confined    OPENAT2 (O_PATH, the confinement's RESOLVE_* flags: resolved as a confined read
//               would be, nothing opened for reading), then a STATX of the descriptor it gave,
//               which the JS thread closes (an O_PATH descriptor asks no server when closed).
//   unconfined  one STATX of the path from the directory, as fstatat(2) (statAt: whether a
//               name still names the file a confined lookup found).
// Each op goes to a worker (IOSQE_ASYNC; STATX always does): tried inline in io_uring_enter, a
// lookup would wait there for the server. EAGAIN of a confined OPENAT2 (a rename raced with
// "..") is tried again, as OpenAt2() does.
class Lookup final : public SingleOp {
 public:
  Lookup(Ring* ring, napi_deferred deferred, const char* path, const Confinement& confinement, bool confined);
  ~Lookup() override;

  void Start() override;
  void OnCompletion(Op* op, int res) override;
  void Cancel() override;
  void Settle(napi_env env) override;

 private:
  void QueueOpen();
  void QueueStatx(int dirfd, const char* path, int flags);

  Ring* const ring_;
  const napi_deferred deferred_;
  const std::string path_;
  const int dirfd_;
  const bool confined_;
  open_how how_{};
  struct statx stx_ {};
  // The O_PATH descriptor OPENAT2 gave, until the STATX of it has come back.
  int fd_ = -1;
  int open_attempts_ = 0;
  Op op_;
  // 0 once the STATX succeeded, else the errno that ended the lookup.
  int error_ = 0;
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
