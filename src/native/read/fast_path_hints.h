// SPDX-License-Identifier: MIT
// What the cache-hit fast path remembers between reads, to spare syscalls on the next ones.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace smartread {

class FastPathHints {
 public:
  // Names that named a small regular file when last read, with its size then: the next read
  // of one opens it directly instead of looking first (a FIFO or a device is never opened on
  // the event loop; a name that changed kind meanwhile is caught by fstat after the open, which
  // is nonblocking so that even then nothing waits), and readMany reads the small ones in one
  // batch where their filesystem can be asked not to wait (tmpfs cannot). Kept as 64-bit
  // hashes; a collision only skips the look.
  // Also its size, and whether BatchableSize would give it, in the one lookup.
  // And the device it was on (0 where the reader did not know), which lets a read be refused
  // before its open where that device's reads are not to be opened on the calling thread.
  bool KnownRegular(const char* path, uint64_t* size, bool* batchable, dev_t* dev) const {
    const auto found = regular_.find(Hash(path));
    if (found == regular_.end()) return false;
    *size = found->second.size;
    *batchable = found->second.batchable;
    *dev = found->second.dev;
    return true;
  }
  // The size of a name the fast path last read as a regular file on a filesystem that honours
  // RWF_NOWAIT: readMany batches it, and the fast path reads it without fstat (not one found on
  // tmpfs or ramfs: what the name is now, perhaps a file on a filesystem that waits for a
  // device, only fstat would tell). False for any other (NoteSize does not know the filesystem).
  bool BatchableSize(const char* path, uint64_t* size) const {
    const auto found = regular_.find(Hash(path));
    if (found == regular_.end() || !found->second.batchable) return false;
    *size = found->second.size;
    return true;
  }
  void SetRegular(const char* path, uint64_t size, bool batchable, dev_t dev = 0) {
    if (regular_.size() >= kMaxRegular) regular_.clear();
    regular_[Hash(path)] = Known{size, batchable, dev};
  }
  void Forget(const char* path) { regular_.erase(Hash(path)); }
  // The size a name had when last read, by any reader (smartReadSync reads it as before).
  bool KnownSize(const char* path, uint64_t* size, dev_t* dev = nullptr) const {
    const auto found = regular_.find(Hash(path));
    if (found == regular_.end()) return false;
    *size = found->second.size;
    if (dev != nullptr) *dev = found->second.dev;
    return true;
  }
  // A regular file of `size` read by a reader that does not know its filesystem: whether
  // readMany may batch it stays as the fast path found it (not, until the fast path reads it).
  // Its device too, so that the fast path asks BlindReads about the name before it opens it
  // (on FUSE or NFS an open alone waits for the server).
  void NoteSize(const char* path, uint64_t size, dev_t dev) {
    const auto found = regular_.find(Hash(path));
    if (found != regular_.end()) {
      found->second.size = size;
      found->second.dev = dev;
      return;
    }
    SetRegular(path, size, false, dev);
  }

  // Devices found to be tmpfs or ramfs, which refuse RWF_NOWAIT and need no waiting: for a
  // second at a time, so that a device number freed by an unmount and given to another
  // filesystem is soon looked at again.
  bool InMemory(dev_t dev) const {
    const int64_t now = NowNs();
    for (const auto& [known, until] : memory_devs_) {
      if (known == dev && now < until) return true;
    }
    return false;
  }
  void SetInMemory(dev_t dev) {
    const int64_t until = NowNs() + kMemoryDevTtlNs;
    for (auto& [known, expiry] : memory_devs_) {
      if (known == dev) {
        expiry = until;
        return;
      }
    }
    if (memory_devs_.size() >= kMaxMemoryDevs) memory_devs_.erase(memory_devs_.begin());
    memory_devs_.emplace_back(dev, until);
  }

 private:
  static constexpr size_t kMaxRegular = 16384;
  static constexpr size_t kMaxMemoryDevs = 16;
  static constexpr int64_t kMemoryDevTtlNs = 1000000000;

  // FNV-1a: short paths, few cycles. Also the name BlindReads knows an unconfined read's file by.
 public:
  static uint64_t Hash(const char* path) {
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char* p = reinterpret_cast<const unsigned char*>(path); *p != 0; p++) {
      h = (h ^ *p) * 1099511628211ULL;
    }
    return h;
  }

 private:
  static int64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  }

  struct Known {
    uint64_t size;
    bool batchable;
    dev_t dev;
  };
  std::unordered_map<uint64_t, Known> regular_;
  std::vector<std::pair<dev_t, int64_t>> memory_devs_;
};

}  // namespace smartread
