// SPDX-License-Identifier: MIT
// The fast path where the kernel will not say whether a read would wait: judged from earlier reads.
#include "blind_reads.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "mount_table.h"

namespace smartread {

namespace {

constexpr size_t kPage = 4096;

int64_t MtimeNs(const struct stat& st) { return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec; }

}  // namespace

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t ReadBudget::CopyNs(size_t size) const {
  return copy_rate_mb_per_s == 0 ? 0 : static_cast<int64_t>(size * 1000 / copy_rate_mb_per_s);
}

int64_t ReadBudget::SlowNs(size_t size) const { return static_cast<int64_t>(budget_us) * 1000 + 2 * CopyNs(size); }

std::string FilesystemName(int64_t type) {
  // linux/magic.h, and the network filesystems' own headers (not all of them in magic.h).
  switch (static_cast<uint32_t>(type)) {
    case 0x794c7630: return "overlay";
    case 0x65735546: return "fuse";
    case 0x6969: return "nfs";
    case 0xfe534d42: return "smb2";
    case 0xff534d42: return "cifs";
    case 0x00c36400: return "ceph";
    case 0x01021997: return "9p";
    case 0x5346414f: return "afs";
    case 0x47504653: return "gpfs";
    case 0x0bd00bd0: return "lustre";
    default: {
      char hex[32];
      snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(static_cast<uint32_t>(type)));
      return hex;
    }
  }
}

BlindReads::Filesystem* BlindReads::FindLocked(dev_t dev) {
  for (Filesystem& fs : filesystems_) {
    if (fs.dev == dev) return &fs;
  }
  return nullptr;
}

const BlindReads::Filesystem* BlindReads::FindLocked(dev_t dev) const {
  for (const Filesystem& fs : filesystems_) {
    if (fs.dev == dev) return &fs;
  }
  return nullptr;
}

bool BlindReads::Known(dev_t dev) const {
  if (!any_.load(std::memory_order_relaxed)) return false;
  const int64_t now_ns = MonotonicNs();
  std::lock_guard<std::mutex> lock(mutex_);
  return KnownAt(FindLocked(dev), now_ns);
}

bool BlindReads::OpensMayWait(dev_t dev) const {
  if (any_.load(std::memory_order_relaxed)) {
    const int64_t now_ns = MonotonicNs();
    std::lock_guard<std::mutex> lock(mutex_);
    if (OpensMayWaitAt(FindLocked(dev), now_ns)) return true;
  }
  return OpensAskServer(dev);
}

bool BlindReads::OpensMayWaitAt(const Filesystem* fs, int64_t now_ns) {
  return fs != nullptr && fs->name != "overlay" &&
         (KnownAt(fs, now_ns) || now_ns < fs->known_until_ns - kKnownNs + kOpensMayWaitNs);
}

void BlindReads::Learn(dev_t dev, int fd, int64_t now_ns) {
  // The mount table names the filesystem without statfs(2), which on FUSE and NFS asks the
  // server (a round trip on the calling thread, each time what was learnt lapses).
  std::string name = MountedFilesystemName(dev);
  struct statfs sf {};
  if (name.empty()) name = fd >= 0 && fstatfs(fd, &sf) == 0 ? FilesystemName(sf.f_type) : "unknown";
  std::lock_guard<std::mutex> lock(mutex_);
  Filesystem* fs = FindLocked(dev);
  if (fs == nullptr) {
    if (filesystems_.size() >= kMaxFilesystems) filesystems_.erase(filesystems_.begin());
    filesystems_.push_back(Filesystem{dev, 0, name});
    fs = &filesystems_.back();
  } else if (fs->name != name) {
    // Another filesystem under a device number freed by an unmount: nothing learnt holds.
    *fs = Filesystem{dev, 0, name};
  }
  fs->known_until_ns = now_ns + kKnownNs;
  any_.store(true, std::memory_order_relaxed);
}

void BlindReads::LearnIfServerMount(dev_t dev) {
  if (Known(dev) || !OpensAskServer(dev)) return;
  Learn(dev, -1, MonotonicNs());
}

bool BlindReads::Resident(int fd, size_t size) {
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return false;
  // A sample of the pages (see kResidencyFrom), the first and the last among them: pages leave
  // the cache by ranges, not one here and there. A read the sample misjudges is still timed.
  const size_t pages = (size + kPage - 1) / kPage;
  const size_t step = std::max<size_t>(1, pages / (kResidencySamples - 1));
  bool resident = true;
  for (size_t page = 0; resident; page += step) {
    const size_t at = std::min(page, pages - 1);
    unsigned char in_core = 0;
    resident = mincore(static_cast<uint8_t*>(map) + at * kPage, kPage, &in_core) == 0 && (in_core & 1) != 0;
    if (at == pages - 1) break;
  }
  munmap(map, size);
  return resident;
}

BlindReads::File BlindReads::Named(uint64_t name_hash, const struct stat& st) {
  return File{name_hash, st.st_dev, st.st_size, MtimeNs(st)};
}

BlindReads::File BlindReads::Inode(const struct stat& st) {
  // Another hash than a name's: the two kinds of key never meet in one process's reads of a file.
  const uint64_t key = (static_cast<uint64_t>(st.st_dev) * 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(st.st_ino) ^ 1;
  return File{key, st.st_dev, st.st_size, MtimeNs(st)};
}

BlindReads::Judgement BlindReads::RecordedLocked(const File& file, int64_t now_ns, const Filesystem* fs) const {
  if (fs != nullptr && now_ns < fs->cooling_until_ns) return Judgement::kCooling;
  const auto found = records_.find(file.key);
  // An mtime is compared where both are known (a name read before is judged without fstat).
  if (found == records_.end() || found->second.size != file.size ||
      (file.mtime_ns >= 0 && found->second.mtime_ns >= 0 && found->second.mtime_ns != file.mtime_ns) ||
      now_ns - found->second.seen_ns > kRecentNs) {
    return Judgement::kFirstRead;
  }
  return static_cast<size_t>(file.size) >= kResidencyFrom ? Judgement::kResident : Judgement::kRecentRead;
}

bool BlindReads::WorthOpening(const File& file, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  Judgement judgement = RecordedLocked(file, now_ns, FindLocked(file.dev));
  // A large file there would come from the server whatever became of its pages (FUSE drops a
  // file's pages at each open unless the daemon keeps them), past the budget: for the engines.
  if (ReadsInline(judgement) && static_cast<size_t>(file.size) >= kFromServerMax) judgement = Judgement::kNotResident;
  if (ReadsInline(judgement)) return true;
  if (judgement == Judgement::kFirstRead) RememberLocked(file, now_ns);
  stats_.judged[static_cast<size_t>(judgement)]++;
  return false;
}

void BlindReads::RememberLocked(const File& file, int64_t now_ns) {
  if (records_.size() >= kMaxRecords) records_.clear();
  records_[file.key] = Record{file.size, file.mtime_ns, now_ns};
}

BlindReads::Judgement BlindReads::Judge(const File& file, int fd, int64_t now_ns) {
  Judgement judgement;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    judgement = RecordedLocked(file, now_ns, FindLocked(file.dev));
    if (judgement == Judgement::kFirstRead) RememberLocked(file, now_ns);
    const auto found = judgement == Judgement::kResident ? records_.find(file.key) : records_.end();
    if (judgement != Judgement::kResident ||
        (found != records_.end() && now_ns - found->second.resident_seen_ns < kResidentLookNs)) {
      stats_.judged[static_cast<size_t>(judgement)]++;
      return judgement;
    }
  }
  // The mapping is made and looked at without the lock: pool threads judge too.
  judgement = Resident(fd, static_cast<size_t>(file.size)) ? Judgement::kResident : Judgement::kNotResident;
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.judged[static_cast<size_t>(judgement)]++;
  if (judgement == Judgement::kResident) {
    const auto found = records_.find(file.key);
    if (found != records_.end()) found->second.resident_seen_ns = now_ns;
  }
  return judgement;
}

BlindReads::Device BlindReads::Before(dev_t dev, int64_t now_ns) {
  Device out;
  if (!any_.load(std::memory_order_relaxed)) return out;
  // The caller's clock was not read: none was known when it began (a pool thread found one since).
  if (now_ns == 0) now_ns = MonotonicNs();
  std::lock_guard<std::mutex> lock(mutex_);
  const Filesystem* fs = FindLocked(dev);
  if (fs == nullptr) return out;
  out.known = KnownAt(fs, now_ns);
  out.cooling = now_ns < fs->cooling_until_ns;
  out.opens_may_wait = OpensMayWaitAt(fs, now_ns);
  if (out.cooling) stats_.judged[static_cast<size_t>(Judgement::kCooling)]++;
  return out;
}

bool BlindReads::CoolingNow(dev_t dev) const {
  if (!any_.load(std::memory_order_relaxed)) return false;
  const int64_t now_ns = MonotonicNs();
  std::lock_guard<std::mutex> lock(mutex_);
  const Filesystem* fs = FindLocked(dev);
  return fs != nullptr && now_ns < fs->cooling_until_ns;
}

void BlindReads::Timed(const File& file, bool slow, int64_t now_ns, bool read_inline) {
  std::lock_guard<std::mutex> lock(mutex_);
  Filesystem* fs = FindLocked(file.dev);
  auto found = records_.find(file.key);
  if (fs != nullptr) fs->inline_reads++;
  if (!slow) {
    if (!read_inline) return;
    if (found != records_.end()) found->second.seen_ns = now_ns;
    if (fs != nullptr && ++fs->good_streak >= kForgiveAfter) fs->next_cooling_ns = kFirstCoolingNs;
    return;
  }
  stats_.misjudged++;
  // Back to the engines, which read it again before the calling thread does.
  if (found != records_.end()) records_.erase(found);
  if (fs == nullptr) return;
  fs->good_streak = 0;
  // This strike and the kStrikes - 1 before it, all within the window: the filesystem cools.
  const uint64_t oldest = fs->slow_at[0];
  if (oldest != 0 && fs->inline_reads - oldest < kStrikeWindow) {
    fs->cooling_until_ns = now_ns + fs->next_cooling_ns;
    fs->next_cooling_ns = std::min(fs->next_cooling_ns * 2, kLongestCoolingNs);
    std::fill(std::begin(fs->slow_at), std::end(fs->slow_at), 0);
    return;
  }
  std::copy(std::begin(fs->slow_at) + 1, std::end(fs->slow_at), std::begin(fs->slow_at));
  fs->slow_at[kStrikes - 2] = fs->inline_reads;
}

bool BlindReads::Look(const File& file, int64_t now_ns, Peek* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Filesystem* fs = FindLocked(file.dev);
  if (!KnownAt(fs, now_ns)) return false;
  out->filesystem = fs->name;
  out->cooling_ms = fs->cooling_until_ns > now_ns ? (fs->cooling_until_ns - now_ns) / 1000000 : 0;
  out->judgement = RecordedLocked(file, now_ns, fs);
  return true;
}

BlindReads::Stats BlindReads::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

namespace {

// Reads from kSleepLookFrom bytes are judged by whether their thread slept as well as by their
// time: the two getrusage(2) calls cost ~0.5 us here, under 1% of such a copy.
constexpr size_t kSleepLookFrom = size_t{256} << 10;

// Whether the calling thread slept (a voluntary context switch) during a read of `size` bytes
// it is about to make. A read that waited for a device or a server sleeps; one that was only
// preempted (by another process, or by the process's own GC threads on a busy machine), or whose
// copy was slow, does not, and is not taken for a wait however long it took: reads of six cached
// 2-4 MiB overlay files, their process pinned to one CPU beside a busy loop, were taken for waits
// and cooled the overlay. A smaller read is judged by its time alone (Slept() is always true).
class SleepWatch {
 public:
  explicit SleepWatch(size_t size) : before_(size >= kSleepLookFrom ? VoluntarySwitches() : -1) {}
  bool Slept() const { return before_ < 0 || VoluntarySwitches() != before_; }

 private:
  static int64_t VoluntarySwitches() {
    struct rusage usage {};
    return getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_nvcsw : -1;
  }
  int64_t before_;
};

NoWaitRead ReadJudged(BlindReads& blind, const BlindReads::File& file, int fd, uint8_t* data, size_t size,
                      const ReadBudget& budget, int64_t opened_ns, int64_t now_ns) {
  if (opened_ns == 0) opened_ns = now_ns;
  const bool read_inline = BlindReads::ReadsInline(blind.Judge(file, fd, now_ns));
  ssize_t n = 0;
  const SleepWatch watch(read_inline ? size : 0);
  if (read_inline) n = ReadFully(fd, data, size, 0);
  const int64_t ended = MonotonicNs();
  blind.Timed(file, ended - opened_ns > budget.SlowNs(size) && watch.Slept(), ended, read_inline);
  if (!read_inline) return NoWaitRead{0, EAGAIN};
  if (n < 0) return NoWaitRead{0, static_cast<int>(-n)};
  return NoWaitRead{static_cast<size_t>(n), 0};
}

// Past its copy, what a read from memory may take before it is looked at (a read that waited
// for a disk or a server takes tens of µs at the least; this VM's preemptions take that too).
constexpr int64_t kInMemorySlackNs = 50000;

}  // namespace

NoWaitRead ReadUnlessWaiting(BlindReads& blind, const BlindReads::File& file, int fd,
                             const struct stat& st, uint8_t* data, size_t size, bool* in_memory,
                             const ReadBudget& budget, int64_t opened_ns) {
  // A filesystem known to refuse RWF_NOWAIT is not asked again: on overlayfs the refusal costs
  // as much as the read itself.
  if (!*in_memory && blind.Known(st.st_dev)) {
    return ReadJudged(blind, file, fd, data, size, budget, opened_ns, MonotonicNs());
  }
  const NoWaitRead read = ReadWithoutWaiting(fd, data, size, 0, in_memory);
  if (read.error != EOPNOTSUPP || *in_memory || read.done != 0) return read;
  const int64_t now = MonotonicNs();
  blind.Learn(st.st_dev, fd, now);
  return ReadJudged(blind, file, fd, data, size, budget, opened_ns, now);
}

AsBefore AsBeforeFor(bool batchable, bool device_judged, bool device_in_memory) {
  if (batchable) return AsBefore::kNoWait;
  if (device_judged) return AsBefore::kJudged;
  return device_in_memory ? AsBefore::kInMemory : AsBefore::kLook;
}

bool JudgedInline(BlindReads& blind, const BlindReads::File& named, int fd, int64_t opened_ns,
                  const ReadBudget& budget, bool* cooling) {
  // Judged as of the open: a read lately then is one now (kRecentNs is a minute).
  const BlindReads::Judgement judged = blind.Judge(named, fd, opened_ns);
  if (BlindReads::ReadsInline(judged)) return true;
  const int64_t now = MonotonicNs();
  blind.Timed(named, now - opened_ns > budget.SlowNs(static_cast<size_t>(named.size)), now, false);
  *cooling = judged == BlindReads::Judgement::kCooling;
  return false;
}

AsBeforeRead ReadNamedAsBefore(AsBefore mode, BlindReads& blind, const BlindReads::File& named, int fd,
                               uint8_t* data, const ReadBudget& budget, int64_t opened_ns, bool* moved) {
  const size_t size = static_cast<size_t>(named.size);
  int error = 0;
  const int64_t read_from = mode == AsBefore::kInMemory ? MonotonicNs() : 0;
  const SleepWatch watch(mode == AsBefore::kJudged ? size : 0);
  const bool same = ReadAsBefore(fd, data, size, mode == AsBefore::kNoWait ? RWF_NOWAIT : 0, &error);
  if (mode == AsBefore::kJudged) {
    const int64_t now = MonotonicNs();
    blind.Timed(named, now - opened_ns > budget.SlowNs(size) && watch.Slept(), now, true);
  } else if (mode == AsBefore::kInMemory && MonotonicNs() - read_from > kInMemorySlackNs + 2 * budget.CopyNs(size)) {
    struct stat st {};
    *moved = fstat(fd, &st) != 0 || st.st_dev != named.dev;
  }
  if (same) return AsBeforeRead::kSame;
  return error == EAGAIN ? AsBeforeRead::kMiss : AsBeforeRead::kLook;
}

}  // namespace smartread
