// SPDX-License-Identifier: MIT
// mkdir -p of many paths on the ring: each path's missing levels as one hardlinked chain of
// MKDIRATs, every directory a batch needs made once.
#pragma once

#ifdef HAVE_LIBURING

#include <napi.h>

#include <memory>

#include "../write/known_dirs.h"
#include "ring.h"

namespace smartread {
namespace uring {

// uringMkdirMany(paths: Array<string | Buffer>, mode, concurrency, id)
//   -> Promise<Array<first directory made's byte length | -1 | {errno, syscall: 'mkdir', at?}>>
// Each result is fs.mkdir(path, { recursive: true })'s; a level two paths need is claimed by the
// first admitted (in list order), so that the results are mostly those of making the paths in
// turn. At most `concurrency` paths have ops in flight.
//
// A path is walked top-down, from below the deepest level known to exist (the environment's
// KnownDirs, or what this batch made or found), or from its first level when none is: its
// levels go to the kernel as one chain of MKDIRATs, hard-linked so that a level that exists
// (EEXIST) does not stop the ones below it. A failure of any other kind fails the levels below
// it too (their parent is missing), so the chain never makes what a walk one level at a time
// would not. The results are then read in order as node's walk reads its own: the first level
// made is the result; EEXIST on the path itself, or an error node looks into, costs a STATX;
// ENOENT on the first level below a known ancestor means the ancestor has gone, which is then
// forgotten and the path walked again from higher up. A level that another path's chain is
// making is waited for rather than made twice: each missing directory of a batch is made once.
// A cancelled batch (uringCancel(id)) fails what it had not finished with ECANCELED. A path that
// fails after levels were made fails where node's walk would have (it would have made them too),
// and its failure says at which level ({errno, syscall, at}); one that made nothing is for the
// caller to walk again as node does (threadpoolMkdirMany) on the tree, unchanged, for node's
// error in every detail: a chain from above may have failed higher up than node's walk, which
// starts at the path itself.
napi_value StartMkdirBatch(Ring* ring, const Napi::CallbackInfo& info, const std::shared_ptr<KnownDirs>& known);

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
