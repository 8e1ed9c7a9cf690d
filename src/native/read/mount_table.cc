// SPDX-License-Identifier: MIT
// Which devices are filesystems whose opens ask a server, from the process's mount table.
#include "mount_table.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace smartread {

namespace {

constexpr int64_t kRereadNs = 1000000000;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// The devices of /proc/self/mountinfo and their filesystems' types; process-wide (mounts are
// the process's, whatever its environments).
class MountTable {
 public:
  // The type of the filesystem mounted from `dev`, "" where none is. A device the table lacks
  // (a mount made since, or one whose files report another device, as btrfs subvolumes do) has
  // the table read again, at most once a second; one still missing from the table just read is
  // remembered as missing until the table is read again (for another device).
  std::string Type(dev_t dev) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = devices_.find(dev);
    if (found != devices_.end()) return found->second;
    if (NowNs() - read_ns_ < kRereadNs) return std::string();
    ReadLocked();
    found = devices_.find(dev);
    if (found == devices_.end()) found = devices_.emplace(dev, std::string()).first;
    return found->second;
  }

 private:
  // Each line: ID, parent ID, MAJOR:MINOR, root, mount point, options, optional fields, "-",
  // filesystem type, source, super options (proc(5)).
  void ReadLocked() {
    read_ns_ = NowNs();
    FILE* file = fopen("/proc/self/mountinfo", "re");
    if (file == nullptr) return;
    devices_.clear();
    char* line = nullptr;
    size_t capacity = 0;
    while (getline(&line, &capacity, file) > 0) {
      unsigned major_number = 0;
      unsigned minor_number = 0;
      if (sscanf(line, "%*u %*u %u:%u", &major_number, &minor_number) != 2) continue;
      const char* separator = strstr(line, " - ");
      if (separator == nullptr) continue;
      const char* type = separator + 3;
      const size_t length = strcspn(type, " \n");
      devices_[makedev(major_number, minor_number)] = std::string(type, length);
    }
    free(line);
    fclose(file);
  }

  std::mutex mutex_;
  std::unordered_map<dev_t, std::string> devices_;
  int64_t read_ns_ = -kRereadNs;
};

MountTable& Table() {
  static MountTable* table = new MountTable();  // never destroyed: pool threads may ask at exit
  return *table;
}

}  // namespace

bool OpensAskServerType(const std::string& type) {
  if (type == "fuse" || type == "fuseblk" || type.rfind("fuse.", 0) == 0) return true;
  static const char* const kNetwork[] = {"virtiofs", "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph",
                                         "9p", "afs", "lustre", "gpfs", "beegfs", "orangefs"};
  for (const char* name : kNetwork) {
    if (type == name) return true;
  }
  return false;
}

bool OpensAskServer(dev_t dev) { return OpensAskServerType(Table().Type(dev)); }

std::string MountedFilesystemName(dev_t dev) {
  const std::string type = Table().Type(dev);
  if (type == "overlay") return "overlay";
  if (type == "fuse" || type == "fuseblk" || type == "virtiofs" || type.rfind("fuse.", 0) == 0) return "fuse";
  if (type == "nfs" || type == "nfs4") return "nfs";
  if (type == "smb3" || type == "smbfs") return "smb2";
  for (const char* same : {"cifs", "ceph", "9p", "afs", "gpfs", "lustre"}) {
    if (type == same) return same;
  }
  return "";
}

dev_t CachedNameDevice(const char* path) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_CACHED;
  const int fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
  if (fd < 0) return 0;
  struct statx stx {};
  const bool known = statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) == 0;
  close(fd);
  return known ? makedev(stx.stx_dev_major, stx.stx_dev_minor) : 0;
}

}  // namespace smartread
