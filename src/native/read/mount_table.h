// SPDX-License-Identifier: MIT
// Which devices are filesystems whose opens ask a server, from the process's mount table.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstdint>

#include <string>

namespace smartread {

// Whether a file on `dev` is on a filesystem whose open(2) asks a server or a daemon (FUSE and
// virtiofs, NFS, SMB, Ceph, 9p, AFS and the like), as /proc/self/mountinfo names the filesystem
// mounted from that device; false where it cannot tell. Read once, and again (at most once a
// second) when a device is not in it, so that a mount made since is found. Any thread.
bool OpensAskServer(dev_t dev);

// The name BlindReads gives the filesystem mounted from `dev` (FilesystemName's: "overlay",
// "fuse", "nfs", "smb2", "cifs", "ceph", "9p", "afs", "gpfs", "lustre"), from the mount table
// rather than from statfs(2), which on FUSE and NFS asks the server; "" where the table does
// not name one of those.
std::string MountedFilesystemName(dev_t dev);

// The device of the file `path` names, without asking its filesystem anything (openat2 O_PATH
// with RESOLVE_CACHED, which opens nothing, and statx with AT_STATX_DONT_SYNC, which takes
// cached attributes): where its name is not all in the dentry cache (a cold disk, a FUSE or NFS
// mount whose entries lapsed), the device of the nearest directory on its way that is, up to
// `dirfd` or "/" (a mount met beyond it is not seen); 0 where it cannot tell. A confined read
// gives its root's descriptor and RESOLVE_* flags, so that the name is resolved as its open will.
dev_t CachedNameDevice(const char* path, int dirfd = AT_FDCWD, uint64_t resolve = 0);

// The device of the open file `fd`, from its cached attributes (statx AT_STATX_DONT_SYNC,
// which asks its filesystem nothing); 0 where it cannot tell.
dev_t CachedDevice(int fd);

}  // namespace smartread
