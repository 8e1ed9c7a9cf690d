// SPDX-License-Identifier: MIT
// mkdir -p on the calling thread, with node's results and errors, in fewer syscalls.
#pragma once

#include <napi.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "../common/file_io.h"
#include "known_dirs.h"

namespace smartread {

// The two syscalls a walk makes: plainly, or beneath a root (a confined walk opens each level's
// parent with openat2 and the confinement's RESOLVE_* flags, then mkdirat's the last part).
class DirSyscalls {
 public:
  explicit DirSyscalls(const Confinement& confinement) : confinement_(confinement) {}
  // 0, or the errno.
  int Mkdir(const std::string& path, mode_t mode) const;
  // 0 with *is_dir set (symbolic links followed, as stat(2)), or the errno.
  int Stat(const std::string& path, bool* is_dir) const;

 private:
  Confinement confinement_;
};

// fs.mkdirSync(path, { recursive: true, mode }): 0 or a positive errno, which node reports with
// syscall 'mkdir' and, from its synchronous walk, the whole path, from its asynchronous one
// (fs.mkdir) the level it failed at: *failed_length is that level's length. *first_length is
// the length of the first directory made (node returns that prefix of the path), or -1.
//
// Node walks up from the path with a failing mkdir per missing level, then down again, and pays
// a stat for every level that exists. With `known` (absolute paths only), the walk starts right
// below the deepest ancestor known to exist, and a path known to be a directory costs one stat.
// Every decision is still made by a syscall on the path itself, so an entry that has gone stale
// costs an extra syscall: a mkdir under a removed directory fails with ENOENT, the entry is
// forgotten, and the walk goes up as node's does. A walk from knowledge that fails without
// having made anything is walked again as node walks (see the .cc), so that the error is node's
// in every detail (which level it names). Two deliberate differences:
// where node would walk up and down forever (a directory under which mkdir fails with ENOENT
// though it exists, as in /proc), this fails with ENOENT; and a walk that has gone up and down
// more often than any path of its depth needs (the tree removed under it again and again) fails
// with ENOENT.
//
// node's asynchronous walk differs from its synchronous one in two more places: a level above
// the path that exists but cannot be stat'ed (a dangling symbolic link) fails it with ENOTDIR
// instead of the stat's error, and a level that gives an error other than EEXIST but turns out
// to be a directory ends it without one. `async_errors` gives that flavour.
int MkdirAll(const std::string& path, mode_t mode, KnownDirs* known, const DirSyscalls& syscalls,
             bool async_errors, int64_t* first_length, int64_t* failed_length);

// The failure of a walk as the addon returns it: {errno, syscall: 'mkdir', at: failed_length}.
napi_value MkdirFailureToJs(napi_env env, int err, int64_t failed_length);

// mkdirAllSync(path: string | Buffer, mode: number, asyncErrors: boolean, rootFd?, resolve?)
//   -> first directory made, as its byte length in the path | -1 | {errno, syscall: 'mkdir', at}
//      | {errno: 0, reason: 'null-bytes'}
// `known` is null under a confinement (its paths are relative to the root).
Napi::Value MkdirAllSync(const Napi::CallbackInfo& info, const std::shared_ptr<KnownDirs>& known);

// dirsKnown(paths: Array<string | Buffer>, out: Uint8Array): out[i] = 1 where paths[i] is a
// directory the environment made or saw (a hint, see KnownDirs). forgetDirs(paths) drops them.
Napi::Value DirsKnown(const Napi::CallbackInfo& info, KnownDirs& known);
Napi::Value ForgetDirs(const Napi::CallbackInfo& info, KnownDirs& known);

}  // namespace smartread
