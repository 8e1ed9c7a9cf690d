// SPDX-License-Identifier: MIT
// The fast path where the kernel will not say whether a read would wait (overlayfs, FUSE, NFS).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../common/file_io.h"

namespace smartread {

// Overlayfs and FUSE (and NFS, SMB, 9p...) refuse preadv2(RWF_NOWAIT) with EOPNOTSUPP, so the
// fast path cannot ask the kernel whether a read would wait for a device or a server; io_uring
// cannot either, and hands every read to an io-wq worker (a thread hop, ~85 us on overlay here,
// where fs.readFileSync of a cached 4 KiB file takes ~7 us). There the fast path judges from
// earlier reads instead:
//   - a file (device, inode, size, mtime) not read in the last kRecentNs, or changed since, goes
//     to the engines, which read it into memory, and is remembered;
//   - one read lately, unchanged, is read on the calling thread and timed; from kResidencyFrom
//     bytes a sample of its pages is first looked at through a mapping (mincore: overlayfs maps
//     the layer's file, whose pages the read would copy), a few microseconds, a small part of
//     such a read and far less than a wait for the device, and the look holds for
//     kResidentLookNs;
//   - a read on the calling thread that took longer than the fast path's budget allows for its
//     size was misjudged (its pages had gone, or the filesystem answers slowly), unless it was of
//     kSleepLookFrom bytes or more and its thread did not sleep while it read (SleepWatch): then
//     it waited for no device nor server, and was only preempted. A misjudged read is counted,
//     the file goes back to the engines until they have read it again, and kStrikes such reads
//     within kStrikeWindow reads of one filesystem stop its reads on the calling thread for a
//     while (1 s, doubled each time up to 64 s, back to 1 s after kForgiveAfter good reads). One
//     slow read is no proof: this VM stalls a thread for ~3 ms now and then, whatever it does, and
//     a run of 2,000 reads met 45 such stalls (two strikes within 16 had cooled overlay for a
//     second at a time).
// A misjudged read costs the calling thread at most the one read of the file it misjudged.
// Thread-safe: the JS thread's fast path and readMany's runs on pool threads share it.
//
// A file is known by its name where the read is not confined (the hash the fast path's hints
// keep, so that a name read before is judged without an fstat, as it is read without one), and
// by its device and inode under a root (names there are relative to it).
class BlindReads {
 public:
  // How a read on such a filesystem was decided.
  enum class Judgement : uint8_t {
    kFirstRead,    // not read lately, or changed since: for the engines, and remembered
    kRecentRead,   // read lately, unchanged: read on the calling thread, timed
    kResident,     // as kRecentRead, and large: its pages were all in memory (mincore)
    kNotResident,  // as kResident, but some page was not: for the engines
    kCooling,      // reads of its filesystem on the calling thread waited too often lately
  };
  static constexpr size_t kJudgements = 5;
  static bool ReadsInline(Judgement j) { return j == Judgement::kRecentRead || j == Judgement::kResident; }

  struct Stats {
    uint64_t judged[kJudgements] = {};
    // Reads on the calling thread that took longer than their budget.
    uint64_t misjudged = 0;
  };

  // What explain() says of a file's filesystem.
  struct Peek {
    std::string filesystem;
    Judgement judgement = Judgement::kFirstRead;
    int64_t cooling_ms = 0;
  };

  // Whether `dev` is a filesystem found to refuse RWF_NOWAIT that is not memory (tmpfs and
  // ramfs refuse it too): for kKnownNs after it was last found so, as a device number freed by an
  // unmount may be given to another filesystem (then, at worst, its first reads go to the
  // engines), and for as long as it cools (no read there asks the kernel meanwhile).
  bool Known(dev_t dev) const;
  // Whether any filesystem was found to refuse RWF_NOWAIT (else the callers need not time opens).
  bool Any() const { return any_.load(std::memory_order_relaxed); }
  // Whether an open on `dev` may wait for a server: a filesystem found to refuse RWF_NOWAIT in
  // the last kOpensMayWaitNs, other than overlayfs, which opens its layer's file (FUSE and NFS
  // ask their server on open); or, not found so yet, one the mount table names as a FUSE, NFS,
  // SMB... mount (OpensAskServer).
  bool OpensMayWait(dev_t dev) const;
  // `fd`'s filesystem (device `dev`) refused RWF_NOWAIT and is not memory.
  void Learn(dev_t dev, int fd, int64_t now_ns);
  // Learns `dev` from the mount table alone where it is a filesystem whose opens ask a server
  // (FUSE, NFS and the like: OpensAskServer), before anything on it is opened here: the first
  // open would otherwise wait for the server on the calling thread, only to find that out.
  void LearnIfServerMount(dev_t dev);
  // A file as the judgements know it: a name's hash (unconfined reads), or device and inode.
  struct File {
    uint64_t key;
    dev_t dev;
    off_t size;
    // -1 where it is not known (a name read before, judged without fstat).
    int64_t mtime_ns;
  };
  static File Named(uint64_t name_hash, const struct stat& st);
  static File Inode(const struct stat& st);

  // How a read of `file` (open as `fd`) on such a filesystem goes, counted.
  Judgement Judge(const File& file, int fd, int64_t now_ns);
  // Before the open, where opens may wait (OpensMayWait): whether `file` is worth opening on the
  // calling thread, that is, whether it was read lately, is small (under kFromServerMax: on FUSE
  // a larger one comes from the server anyway, its pages dropped at the open) and its filesystem
  // is not cooling. A refusal is Judge()'s (counted, and a first read remembered); a yes is
  // judged after the open.
  bool WorthOpening(const File& file, int64_t now_ns);
  // A read on the calling thread, from its open (`read_inline`: Judge() had it read there; else
  // only its open and fstat, before the engines take it): `slow`, it took longer than the budget
  // allows (ReadBudget::SlowNs) and may have waited, was misjudged (on FUSE or NFS an open alone
  // waits for the server).
  void Timed(const File& file, bool slow, int64_t now_ns, bool read_inline);
  // What the callers ask of `dev` before they open a file there, in one look, as of `now_ns`
  // (when the caller started to open it; 0: not known, read here): Known(); `cooling`, whether
  // reads there are not to be opened on the calling thread for now (counted as a kCooling
  // judgement when so); and OpensMayWait().
  struct Device {
    bool known = false;
    bool cooling = false;
    bool opens_may_wait = false;
  };
  Device Before(dev_t dev, int64_t now_ns);
  // Whether `dev` cools now, asked after Before(): counting nothing.
  bool CoolingNow(dev_t dev) const;
  // The judgement a read of `file` would get now, counting and remembering nothing (no mincore:
  // kResident stands for "its pages are looked at"); false where its filesystem is not known to
  // refuse RWF_NOWAIT.
  bool Look(const File& file, int64_t now_ns, Peek* out) const;
  Stats stats() const;

  static constexpr int64_t kRecentNs = int64_t{60} * 1000000000;
  // From this size, a cold read would hold the loop near a millisecond (1.9 GB/s cold here): the
  // first, middle and last pages are looked at first. Each look costs ~1 us and the mapping ~4 us,
  // a twentieth of a warm 1 MiB read; every page of it (16.9 us) cost a quarter.
  static constexpr size_t kResidencyFrom = size_t{1} << 20;
  static constexpr size_t kResidencySamples = 3;
  // A look at a file's pages holds for this long: a loop of reads of one large file looks once
  // in this time, not at every read (the look is ~10 us of a ~100 us read on overlay here). Pages
  // just seen in memory, and read since, are the last the kernel would evict under pressure; an
  // eviction on purpose in between (fadvise, drop_caches) costs one read, timed and counted as a
  // misjudgement.
  static constexpr int64_t kResidentLookNs = 2000000;
  // Where opens ask a server, a file from this size is not opened on the calling thread: on FUSE
  // its pages come from the daemon whatever became of them (see WorthOpening).
  static constexpr size_t kFromServerMax = size_t{256} << 10;

 private:
  static constexpr int64_t kKnownNs = int64_t{10} * 1000000000;
  // How long a filesystem whose opens ask a server is taken to be one after it was last found
  // so. Nothing refreshes what is known while reads there are judged (they do not ask the kernel
  // again) or go to io_uring, and a mistake here costs only an open on a worker; taken for not
  // waiting, an open held the loop 79 ms in one readMany on a 1 ms mount.
  static constexpr int64_t kOpensMayWaitNs = int64_t{600} * 1000000000;
  static constexpr uint32_t kStrikes = 3;
  static constexpr uint64_t kStrikeWindow = 64;
  static constexpr uint32_t kForgiveAfter = 1024;
  static constexpr int64_t kFirstCoolingNs = 1000000000;
  static constexpr int64_t kLongestCoolingNs = int64_t{64} * 1000000000;
  static constexpr size_t kMaxRecords = 65536;
  static constexpr size_t kMaxFilesystems = 16;

  struct Filesystem {
    dev_t dev;
    int64_t known_until_ns;
    std::string name;
    // Reads on the calling thread, and the count at each of the last kStrikes - 1 slow ones.
    uint64_t inline_reads = 0;
    uint64_t slow_at[kStrikes - 1] = {};
    uint32_t good_streak = 0;
    int64_t cooling_until_ns = 0;
    int64_t next_cooling_ns = kFirstCoolingNs;
  };
  struct Record {
    off_t size;
    int64_t mtime_ns;
    int64_t seen_ns;
    // When mincore last saw the sampled pages in memory (0: never).
    int64_t resident_seen_ns = 0;
  };

  Filesystem* FindLocked(dev_t dev);
  const Filesystem* FindLocked(dev_t dev) const;
  static bool KnownAt(const Filesystem* fs, int64_t now_ns) {
    return fs != nullptr && (now_ns < fs->known_until_ns || now_ns < fs->cooling_until_ns);
  }
  // OpensMayWait() of `fs`, with the lock held.
  static bool OpensMayWaitAt(const Filesystem* fs, int64_t now_ns);
  // Whether every page of the file's first `size` bytes is in memory.
  static bool Resident(int fd, size_t size);

  // Whether any filesystem has been learnt: until then (ext4, tmpfs), no lock is taken.
  std::atomic<bool> any_{false};
  mutable std::mutex mutex_;
  std::vector<Filesystem> filesystems_;
  // The judgement of `file` from its record, without mincore, or counting.
  Judgement RecordedLocked(const File& file, int64_t now_ns, const Filesystem* fs) const;
  void RememberLocked(const File& file, int64_t now_ns);

  std::unordered_map<uint64_t, Record> records_;
  Stats stats_;
};

// The name of a filesystem of statfs f_type `type` (overlay, fuse, nfs...), as explain() says it.
std::string FilesystemName(int64_t type);

// The monotonic clock, in ns: when a fast-path open starts (see ReadUnlessWaiting).
int64_t MonotonicNs();

// The fast path's budget for one read, from its open: budget_us plus twice the copy of `size`
// bytes at copy_rate_mb_per_s.
struct ReadBudget {
  uint64_t budget_us;
  uint64_t copy_rate_mb_per_s;
  int64_t SlowNs(size_t size) const;
  // How long copying `size` bytes from memory takes at the copy rate.
  int64_t CopyNs(size_t size) const;
};

// Reads the whole regular file `st` (open as `fd`, `size` bytes) into `data` on the calling
// thread only where that will not wait for a device or a server: preadv2(RWF_NOWAIT) where the
// filesystem honours it, a plain read on tmpfs and ramfs (`*in_memory`, as ReadWithoutWaiting),
// and, where it refuses RWF_NOWAIT, a plain read where `blind` judges it, timed from
// `opened_ns` (when the caller started to open it, moved on by the time it took to make `data`;
// 0: not timed, as before any such filesystem was known). error EAGAIN: a miss, for the engines.
NoWaitRead ReadUnlessWaiting(BlindReads& blind, const BlindReads::File& file, int fd,
                             const struct stat& st, uint8_t* data, size_t size, bool* in_memory,
                             const ReadBudget& budget, int64_t opened_ns);

// How a name read before as a small regular file (the fast path's hints keep its size and
// device) is read again without fstat, from its open: one preadv2 at offset 0 asking for that
// size and one byte more (ReadAsBefore), which only fstat would otherwise have sized.
//   kNoWait    its filesystem honours RWF_NOWAIT: asked not to wait (a file in another place
//              now, on tmpfs or overlayfs, refuses it and is looked at);
//   kJudged    its filesystem refuses RWF_NOWAIT (BlindReads knows the device): read where
//              JudgedInline() has it read on this thread, timed from the open;
//   kInMemory  tmpfs or ramfs, where nothing waits for a device: read, and timed from the read,
//              since only fstat would tell that the name now leads elsewhere, perhaps to a disk
//              (it cost 0.4 of the 2.1 µs that open, read and close of a cached 4 KiB tmpfs file
//              take, C, this VM); a read slower than memory is looked at with fstat then;
//   kLook      none of those: fstat first.
enum class AsBefore : uint8_t { kLook, kNoWait, kJudged, kInMemory };
AsBefore AsBeforeFor(bool batchable, bool device_judged, bool device_in_memory);

// Whether a kJudged read of `named` (open as `fd`) is read on this thread now; if not, the
// refusal is timed from `opened_ns`, and *cooling says whether its filesystem cools.
bool JudgedInline(BlindReads& blind, const BlindReads::File& named, int fd, int64_t opened_ns,
                  const ReadBudget& budget, bool* cooling);

enum class AsBeforeRead : uint8_t {
  kSame,  // the file had the size it had, and is in `data`
  kMiss,  // RWF_NOWAIT's EAGAIN: the start of it is not in memory (and its readahead has begun)
  kLook,  // anything else (another size, another kind of file, another filesystem's refusal)
};
// Reads `named` (its device and size as read before) open as `fd` into `data` (room for its
// size) as `mode` says. *moved: a kInMemory read slower than memory (kInMemorySlackNs past its
// copy) found the file on another device by fstat; the name is then to be looked at afresh from
// its next read, having cost at most that one read of the filesystem that took its place.
AsBeforeRead ReadNamedAsBefore(AsBefore mode, BlindReads& blind, const BlindReads::File& named, int fd,
                               uint8_t* data, const ReadBudget& budget, int64_t opened_ns, bool* moved);

}  // namespace smartread
