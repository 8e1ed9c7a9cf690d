// SPDX-License-Identifier: MIT
// Whole-file writes on the ring: linked OPENAT → WRITE → (FSYNC) → CLOSE chains on direct
// descriptors, and for atomic writes a temporary file renamed over the target.
#pragma once

#ifdef HAVE_LIBURING

#include <napi.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../common/args.h"
#include "../common/errors.h"
#include "../write/write_file.h"
#include "ring.h"

namespace smartread {
namespace uring {

// What this kernel's io_uring can do for writes (probed once per process): plain writes need
// OPENAT, WRITE, FSYNC and CLOSE (5.6); atomic ones RENAMEAT and UNLINKAT too (5.11); mkdirs
// MKDIRAT (5.15) and STATX. What it cannot do goes to the thread pool.
struct WriteSupport {
  bool writes = false;
  bool atomic = false;
  bool mkdir = false;
  // Why the probe itself failed (it sets up a small ring of its own), or empty.
  std::string probe_failure;
};
// Probed on first use: the environment's ring setup asks first, while descriptors are to be had.
const WriteSupport& ProbeWriteSupport();

// uringWriteFiles(targets: Array<string | Buffer | fd>, datas: Array<Uint8Array>,
//                 modes: Uint32Array, flags, flush, atomic, concurrency, id)
//   -> Promise<undefined | Array<undefined | {errno, syscall}>>
// At most `concurrency` files in flight, each a chain submitted with the ring's next batch:
//   a path:  OPENAT (into a direct descriptor) → WRITE → FSYNC (flush) → CLOSE, linked, so that a
//            failed step cancels the rest; a short WRITE (a file past 2 GiB is written a part at a
//            time) is continued, then the rest of the chain queued again. Whatever ends a chain
//            early closes the descriptor.
//   atomic:  the same into a temporary file beside the target (O_EXCL; TemporaryName), then
//            RENAMEAT over the target → with flush, OPENAT → FSYNC → CLOSE of its directory. A
//            write that fails or is cancelled unlinks its temporary file.
//   an fd:   WRITE at its position (→ FSYNC), left open.
// Undefined when every write succeeded; a cancelled batch (uringCancel(id)) fails what it had
// not finished with ECANCELED. The datas are held until the batch is done.
class WriteBatch;
napi_value StartWriteBatch(Ring* ring, const Napi::CallbackInfo& info);

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
