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

// What a mounted filesystem is to the readers: the name BlindReads gives it (FilesystemName's,
// "" where that is not one of them) and whether its opens ask a server.
struct MountKind {
  const char* name = "";
  bool asks_server = false;
};

// A type as /proc/self/mountinfo names it ("fuse.sshfs", "nfs4", ...), classified once, when
// the table is read.
MountKind KindOfType(const std::string& type) {
  if (type == "overlay") return {"overlay", false};
  if (type == "fuse" || type == "fuseblk" || type == "virtiofs" || type.rfind("fuse.", 0) == 0) return {"fuse", true};
  static const struct {
    const char* type;
    MountKind kind;
  } kServers[] = {{"nfs", {"nfs", true}},     {"nfs4", {"nfs", true}},   {"smb3", {"smb2", true}},
                  {"smbfs", {"smb2", true}},  {"cifs", {"cifs", true}},  {"ceph", {"ceph", true}},
                  {"9p", {"9p", true}},       {"afs", {"afs", true}},    {"gpfs", {"gpfs", true}},
                  {"lustre", {"lustre", true}}, {"beegfs", {"", true}}, {"orangefs", {"", true}}};
  for (const auto& server : kServers) {
    if (type == server.type) return server.kind;
  }
  return {};
}

// The devices of /proc/self/mountinfo and what each one's filesystem is; process-wide (mounts
// are the process's, whatever its environments).
class MountTable {
 public:
  // What the filesystem mounted from `dev` is; nothing known where none is. A device the table
  // lacks (a mount made since, or one whose files report another device, as btrfs subvolumes
  // do) has the table read again, at most once a second; one still missing from the table just
  // read is remembered as missing until the table is read again (for another device).
  MountKind Kind(dev_t dev) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = devices_.find(dev);
    if (found != devices_.end()) return found->second;
    if (NowNs() - read_ns_ < kRereadNs) return MountKind{};
    ReadLocked();
    found = devices_.find(dev);
    if (found == devices_.end()) found = devices_.emplace(dev, MountKind{}).first;
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
      devices_[makedev(major_number, minor_number)] = KindOfType(std::string(type, strcspn(type, " \n")));
    }
    free(line);
    fclose(file);
  }

  std::mutex mutex_;
  std::unordered_map<dev_t, MountKind> devices_;
  int64_t read_ns_ = -kRereadNs;
};

MountTable& Table() {
  static MountTable* table = new MountTable();  // never destroyed: pool threads may ask at exit
  return *table;
}

}  // namespace

bool OpensAskServer(dev_t dev) { return Table().Kind(dev).asks_server; }

std::string MountedFilesystemName(dev_t dev) { return Table().Kind(dev).name; }

dev_t CachedNameDevice(const char* path, int dirfd, uint64_t resolve) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_CACHED | resolve;
  std::string name(path);
  for (;;) {
    const int fd = static_cast<int>(syscall(SYS_openat2, dirfd, name.c_str(), &how, sizeof how));
    if (fd >= 0) {
      const dev_t dev = CachedDevice(fd);
      close(fd);
      return dev;
    }
    if (errno != EAGAIN) return 0;
    // Not all cached: the directory it is in, up to where the lookup starts ("/", or `dirfd`).
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) {
      if (name == ".") return CachedDevice(dirfd);
      name = ".";
    } else if (name == "/") {
      return 0;
    } else {
      name.resize(slash == 0 ? 1 : slash);
    }
  }
}

dev_t CachedDevice(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) != 0) return 0;
  return makedev(stx.stx_dev_major, stx.stx_dev_minor);
}

}  // namespace smartread
