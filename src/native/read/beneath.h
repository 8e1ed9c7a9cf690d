// SPDX-License-Identifier: MIT
// Lookups and opens under a confinement, for what confined readers do besides whole-file reads.
#pragma once

#include <napi.h>
#include <sys/stat.h>

#include "instance.h"

namespace smartread {

// [mode, size, mtimeMs, ino, dev, ctimeMs], the layout every lookup below and the ring's
// (uring/beneath_op.h) give; nullptr where the array could not be made (in raw N-API, so that a
// pool job's Settle may use it while a worker is being terminated).
napi_value StatToJs(napi_env env, const struct stat& st);
// The fields of `stx` that StatToJs gives, as a struct stat.
struct stat StatFromStatx(const struct statx& stx);

// statBeneath(path: string | Buffer, dirfd?: number, resolve?: number)
//   -> Float64Array [mode, size, mtimeMs, ino, dev, ctimeMs] | {errno, syscall: 'stat'}
// openat2(O_PATH) with the confinement's RESOLVE_* flags, then fstat: the path is resolved by
// the same rules as a confined read, and nothing is opened for reading (a FIFO never blocks).
Napi::Value StatBeneath(const Napi::CallbackInfo& info);

// statAt(path: string | Buffer, dirfd: number)
//   -> Float64Array (statBeneath's layout) | {errno, syscall: 'stat'}
// One fstatat(2) relative to dirfd, without confinement: for checking, cheaply, that a path a
// confined lookup resolved still names the same file (same inode, same ctime). Whatever it
// finds is only compared, never opened or read.
Napi::Value StatAt(const Napi::CallbackInfo& info);

// statBeneathIfCached(path: string | Buffer, dirfd?: number, resolve?: number)
//   -> Float64Array | {errno, syscall: 'stat'} | null
// statBeneath without waiting: the name resolved only from the dentry cache (RESOLVE_CACHED),
// and stat'ed only off a server's mount. null where it cannot answer so: a name on the way is
// not cached (a cold disk would be read), or the file is on a filesystem whose stat may ask a
// server (the mount table, BlindReads: FUSE, NFS, SMB...; its device from the attributes the
// kernel holds, statx AT_STATX_DONT_SYNC).
Napi::Value StatBeneathIfCached(const Napi::CallbackInfo& info, Instance& instance);

// statAtNow(path: string | Buffer, dirfd: number, dev: number, trustHeld: boolean)
//   -> Float64Array | {errno, syscall: 'stat'} | null
// statAt where `dev` (the device the path was last found on) is no filesystem whose stat may
// ask a server. On one, with trustHeld (the caller asked the server lately), the attributes the
// kernel holds (statx AT_STATX_DONT_SYNC), the name resolved from the dentry cache alone
// (RESOLVE_CACHED); null without trustHeld, or where a name on the way is not cached.
Napi::Value StatAtNow(const Napi::CallbackInfo& info, Instance& instance);

// statBeneathAsync(path: string | Buffer, dirfd?: number, resolve?: number)
// statAtAsync(path: string | Buffer, dirfd: number)
//   -> Promise<Float64Array | {errno, syscall: 'stat'}>
// statBeneath and statAt on libuv's thread pool (`confined` tells which), for lookups that may
// wait for a disk or a server where the ring cannot make them (uring/beneath_op.h). The
// directory's descriptor must stay open until the promise settles.
Napi::Value StatAsync(const Napi::CallbackInfo& info, bool confined);

// openBeneath(path: string | Buffer, flags: number, dirfd?: number, resolve?: number)
//   -> fd | {errno, syscall: 'open'}
// The descriptor a confined read would open (O_CLOEXEC), for positional reads the caller makes
// and closes.
Napi::Value OpenBeneath(const Napi::CallbackInfo& info);

// openBeneathAsync(path: string | Buffer, flags: number, dirfd?: number, resolve?: number)
//   -> Promise<fd | {errno, syscall: 'open'}>
// openBeneath's open on libuv's thread pool, for a file whose open asks a server
// (opensWaitBeneath), where the ring cannot make it (uring/beneath_op.h). The root's descriptor
// must stay open until the promise settles. A descriptor that no promise could be resolved with
// (a worker being terminated) is closed.
Napi::Value OpenBeneathAsync(const Napi::CallbackInfo& info);

// opensWaitBeneath(path: string | Buffer, dirfd?: number, resolve?: number) -> boolean
// Whether opening `path` (resolved as openBeneath resolves it) would wait for a server: the
// device of its cached name (or of the nearest cached directory on its way, the root at last:
// CachedNameDevice) is a FUSE, NFS, SMB...
// mount (the mount table), or one where opens were found to wait (BlindReads). Asks no
// filesystem anything (openat2 O_PATH RESOLVE_CACHED, statx AT_STATX_DONT_SYNC).
Napi::Value OpensWaitBeneath(const Napi::CallbackInfo& info, Instance& instance);

// fileAsksServer(fd: number) -> boolean
// Whether the open file `fd` is on a filesystem that asks a server (opensWaitBeneath's test, on
// the descriptor's cached device): where io_uring would read it inline on the submitting
// thread, a FUSE read waits there for the daemon (pages dropped at open, or lapsed attributes
// fetched first), so its positional reads go to the ring's workers.
Napi::Value FileAsksServer(const Napi::CallbackInfo& info, Instance& instance);

}  // namespace smartread
