// SPDX-License-Identifier: MIT
// mkdir -p of many paths on the ring: each path's missing levels as one hardlinked chain of
// MKDIRATs, every directory a batch needs made once.
#ifdef HAVE_LIBURING

#include "mkdir_many.h"

#include <fcntl.h>
#include <linux/stat.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../common/args.h"
#include "../common/errors.h"
#include "../write/mkdir_all.h"
#include "../write/write_file.h"

namespace smartread {
namespace uring {

namespace {

// The longest chain of MKDIRATs submitted at once (fewer on a test-sized ring): deeper paths
// go on in further chains, each after the one above it has completed.
constexpr size_t kMaxChain = 16;

class MkdirBatch;

// One path, from its admission until its chain has ended (or it waits for a level another path
// is making): the run of levels in flight and what their results say.
class PathWalk final : public OpOwner {
 public:
  enum class Outcome { kSubmitted, kWaiting, kEnded };

  PathWalk(MkdirBatch* batch, size_t index, int replans);
  // Decides what comes next: a chain submitted, a wait for a level another path is making
  // (waiting_on() names it), or the end (result()).
  Outcome Plan();
  void OnCompletion(Op* op, int res) override;
  void Cancel();

  size_t index() const { return index_; }
  int replans() const { return replans_; }
  std::string_view waiting_on() const { return waiting_on_; }
  // The first level made's length, -1, or -(errno + 2).
  int64_t result() const { return error_ != 0 ? -static_cast<int64_t>(error_) - 2 : first_; }
  // For a failure after levels were made, the length of the level it names (node's walk would
  // have made those levels too and failed at the same one); -1 when nothing was made, and the
  // caller walks the path again as node does (mkdir_many.h).
  int64_t failed_at() const {
    return error_ != 0 && first_ >= 0 && !levels_.empty() ? static_cast<int64_t>(levels_[failed_level_]) : -1;
  }

 private:
  enum Kind : uint16_t { kMkdir, kStat };
  // A level of the path: a view into the batch's copy of it, which lives as long as the batch.
  std::string_view Level(size_t level) const { return std::string_view(path_).substr(0, levels_[level]); }
  void SubmitSegment();
  void QueueStat(size_t level, int original);
  // Reads the results from cursor_ down; returns what the walk does next.
  Outcome Consume();
  Outcome OnStat(int res);
  // Ends at the level the walk is at (the level a failure names).
  Outcome End(int err, size_t level);
  // The walk's claims on the levels of its run are dropped, and it plans again from scratch.
  Outcome Replan();
  void Finish(Outcome outcome);

  MkdirBatch* const batch_;
  const size_t index_;
  const std::string& path_;
  const std::vector<size_t> levels_;
  int replans_;
  bool target_checked_ = false;
  // The run: levels run_hi_ down to 0. The chain in flight: from cursor_ (the next level whose
  // result is read) down to seg_lo_.
  size_t run_hi_ = 0;
  size_t seg_lo_ = 0;
  size_t cursor_ = 0;
  std::vector<int> results_;
  int stat_original_ = 0;
  size_t stat_level_ = 0;
  bool stat_of_known_target_ = false;
  struct statx statx_ {};
  unsigned in_flight_ = 0;
  bool cancelled_ = false;
  int64_t first_ = -1;
  int error_ = 0;
  size_t failed_level_ = 0;
  int stat_result_ = 0;
  std::string_view waiting_on_;
  std::vector<std::string_view> claims_;
  Op ops_[kMaxChain + 1];
  std::string op_paths_[kMaxChain + 1];
};

class MkdirBatch final : public RingClient {
 public:
  MkdirBatch(Ring* ring, uint32_t id, std::shared_ptr<KnownDirs> known)
      : ring_(ring), id_(id), known_(std::move(known)) {}

  uint32_t id() const override { return id_; }
  void Cancel() override {
    // Paths not started yet end at the next Continue(): see WriteBatch::Cancel.
    if (cancelled_) return;
    cancelled_ = true;
    for (auto& entry : active_) entry.second->Cancel();
  }
  void Continue() override { Admit(); }

  void Admit();
  // The walk's run has ended: its outcome is taken and the walk deleted (inside its own call).
  void Ended(PathWalk* walk, PathWalk::Outcome outcome);

  // What the walks share.
  Ring* ring() const { return ring_; }
  KnownDirs* known() const { return known_.get(); }
  bool cancelled() const { return cancelled_; }
  size_t max_chain() const { return std::min<size_t>(kMaxChain, std::max<size_t>(1, ring_->sq_entries())); }
  // A level this batch made or found (any kind of file: a level that is not a directory fails
  // the levels below it, as it does node's walk). Only what a later batch can start from goes
  // to the environment's KnownDirs (PathWalk::End).
  bool Seen(std::string_view level) const { return seen_.count(level) != 0; }
  void See(std::string_view level) { seen_.insert(level); }
  void Unsee(std::string_view level) {
    seen_.erase(level);
    known_->Forget(level);
  }
  // The walk making `level` right now, or null.
  PathWalk* Claimer(std::string_view level) const {
    auto it = claims_.find(level);
    return it == claims_.end() ? nullptr : it->second;
  }
  void Claim(std::string_view level, PathWalk* walk) { claims_[level] = walk; }
  void Release(std::string_view level);

  std::vector<std::string> paths_;
  mode_t mode_ = 0777;
  size_t concurrency_ = 64;
  napi_deferred deferred_ = nullptr;
  std::vector<int64_t> results_;
  std::vector<int64_t> failed_at_;
  std::vector<int> replans_;

 private:
  void Settle();

  Ring* const ring_;
  const uint32_t id_;
  std::shared_ptr<KnownDirs> known_;
  bool cancelled_ = false;
  bool admitting_ = false;
  size_t done_ = 0;
  std::deque<size_t> ready_;
  size_t next_ = 0;
  std::unordered_map<size_t, std::unique_ptr<PathWalk>> active_;
  // Keys view the paths in paths_, which do not change once the batch has started.
  std::unordered_set<std::string_view> seen_;
  std::unordered_map<std::string_view, PathWalk*> claims_;
  // Paths waiting for a level that a walk is making, by level.
  std::unordered_map<std::string_view, std::vector<size_t>> waiters_;
};

PathWalk::PathWalk(MkdirBatch* batch, size_t index, int replans)
    : batch_(batch), index_(index), path_(batch->paths_[index]), levels_(MkdirPrefixes(path_)), replans_(replans) {
  results_.assign(levels_.size(), 0);
  for (Op& op : ops_) op.owner = this;
}

PathWalk::Outcome PathWalk::Plan() {
  // Node's mkdir('') fails with ENOENT, and so does its stat.
  if (levels_.empty()) return End(ENOENT, 0);
  if (batch_->cancelled()) return End(ECANCELED, 0);
  // Every replan forgets a level: more than the path has means it keeps being removed.
  if (replans_ > static_cast<int>(levels_.size()) + 2) return End(ENOENT, 0);
  const std::string_view target = Level(0);
  if (!target_checked_ && batch_->Claimer(target) == nullptr &&
      (batch_->Seen(target) || batch_->known()->Contains(target))) {
    // Known to be there: a stat says whether it still is, and a directory.
    target_checked_ = true;
    stat_of_known_target_ = true;
    QueueStat(0, EEXIST);
    return Outcome::kSubmitted;
  }
  run_hi_ = levels_.size() - 1;
  for (size_t level = 0; level < levels_.size(); level++) {
    const std::string_view prefix = Level(level);
    PathWalk* claimer = batch_->Claimer(prefix);
    if (claimer != nullptr && claimer != this) {
      waiting_on_ = prefix;
      return Outcome::kWaiting;
    }
    if (level == 0) continue;
    // Made or seen by this batch, or known to the environment: taken as there (a chain below a
    // level that has gone fails with ENOENT at once, and the walk plans again without it).
    if (batch_->Seen(prefix) || batch_->known()->Contains(prefix)) {
      run_hi_ = level - 1;
      break;
    }
  }
  for (size_t level = 0; level <= run_hi_; level++) {
    claims_.push_back(Level(level));
    batch_->Claim(claims_.back(), this);
  }
  cursor_ = run_hi_;
  SubmitSegment();
  return Outcome::kSubmitted;
}

void PathWalk::SubmitSegment() {
  const size_t count = std::min(batch_->max_chain(), cursor_ + 1);
  seg_lo_ = cursor_ + 1 - count;
  Ring* ring = batch_->ring();
  ring->Reserve(static_cast<unsigned>(count));
  for (size_t k = 0; k < count; k++) {
    const size_t level = cursor_ - k;
    Op* op = &ops_[k];
    op->kind = kMkdir;
    op->offset = level;
    op->busy = true;
    in_flight_++;
    // The kernel reads the path at submission: it lives in the walk until then.
    op_paths_[k].assign(Level(level));
    io_uring_sqe* sqe = ring->Sqe(op);
    io_uring_prep_mkdirat(sqe, AT_FDCWD, op_paths_[k].c_str(), batch_->mode_);
    // A level that exists, or fails, does not cancel the next: its result says what it means.
    if (k + 1 < count) sqe->flags |= IOSQE_IO_HARDLINK;
  }
}

void PathWalk::QueueStat(size_t level, int original) {
  stat_level_ = level;
  stat_original_ = original;
  Op* op = &ops_[kMaxChain];
  op->kind = kStat;
  op->busy = true;
  in_flight_++;
  op_paths_[kMaxChain].assign(Level(level));
  // Symbolic links followed, as node's stat.
  io_uring_prep_statx(batch_->ring()->Sqe(op), AT_FDCWD, op_paths_[kMaxChain].c_str(), 0, STATX_TYPE, &statx_);
}

void PathWalk::OnCompletion(Op* op, int res) {
  op->busy = false;
  in_flight_--;
  if (op->kind == kMkdir) {
    results_[op->offset] = res;
  } else {
    stat_result_ = res;
  }
  if (in_flight_ > 0) return;
  Outcome outcome;
  if (cancelled_ || batch_->ring()->closing()) {
    outcome = End(ECANCELED, 0);
  } else if (op->kind == kStat) {
    outcome = OnStat(stat_result_);
  } else {
    outcome = Consume();
  }
  if (outcome != Outcome::kSubmitted) Finish(outcome);
}

PathWalk::Outcome PathWalk::Consume() {
  for (;;) {
    if (cursor_ < seg_lo_) {
      // This chain's levels are all read, and deeper ones remain.
      SubmitSegment();
      return Outcome::kSubmitted;
    }
    const size_t level = cursor_;
    const int res = results_[level];
    if (res == 0) {
      if (first_ < 0) first_ = static_cast<int64_t>(levels_[level]);
      batch_->See(Level(level));
      if (level == 0) return End(0, 0);
      cursor_--;
      continue;
    }
    const int err = -res;
    if (err == EEXIST) {
      // The path itself: a stat says whether it is a directory. Above it: the next level's
      // result says whether this one can hold it.
      if (level == 0) {
        QueueStat(0, EEXIST);
        return Outcome::kSubmitted;
      }
      batch_->See(Level(level));
      cursor_--;
      continue;
    }
    if (err == ENOENT) {
      // The first level of the run: the level above, taken for existing, has gone.
      if (level == run_hi_ && level + 1 < levels_.size()) return Replan();
      // Below a level that exists but is no directory one can go through (a dangling symbolic
      // link): node's asynchronous walk, whose results these are, says ENOTDIR.
      if (level < run_hi_ && results_[level + 1] == -EEXIST) return End(ENOTDIR, level + 1);
      return End(ENOENT, level);
    }
    if (err == EACCES || err == ENOSPC || err == ENOTDIR || err == EPERM || err == ECANCELED) return End(err, level);
    // Anything else: node looks at what is there.
    QueueStat(level, err);
    return Outcome::kSubmitted;
  }
}

PathWalk::Outcome PathWalk::OnStat(int res) {
  const bool is_dir = res == 0 && S_ISDIR(statx_.stx_mode);
  if (stat_of_known_target_) {
    stat_of_known_target_ = false;
    if (is_dir) return End(0, 0);
    batch_->Unsee(Level(0));
    return Plan();
  }
  if (res < 0) return End(-res, stat_level_);
  if (!is_dir) return End(EEXIST, stat_level_);
  batch_->See(Level(stat_level_));
  // A directory there: the path's own EEXIST ends the walk; so does, in node's asynchronous
  // walk, another error at a directory.
  if (stat_level_ == 0 || stat_original_ != EEXIST) return End(0, 0);
  cursor_ = stat_level_ - 1;
  return Consume();
}

PathWalk::Outcome PathWalk::Replan() {
  const size_t above = run_hi_ + 1;
  batch_->Unsee(Level(above));
  for (std::string_view level : claims_) batch_->Release(level);
  claims_.clear();
  replans_++;
  return Plan();
}

PathWalk::Outcome PathWalk::End(int err, size_t level) {
  error_ = err;
  failed_level_ = level;
  if (err == 0) {
    // What a later walk can start from: the path, and the directory its new levels hang from.
    batch_->known()->Add(Level(0));
    if (first_ >= 0) {
      for (size_t l = 0; l + 1 < levels_.size(); l++) {
        if (static_cast<int64_t>(levels_[l]) != first_) continue;
        batch_->known()->Add(Level(l + 1));
        break;
      }
    }
  }
  return Outcome::kEnded;
}

void PathWalk::Finish(Outcome outcome) {
  for (std::string_view level : claims_) batch_->Release(level);
  claims_.clear();
  // Deletes the walk: nothing of it is touched after this.
  batch_->Ended(this, outcome);
}

void PathWalk::Cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  for (Op& op : ops_) {
    if (op.busy) io_uring_prep_cancel64(batch_->ring()->Sqe(nullptr), reinterpret_cast<uint64_t>(&op), 0);
  }
}

void MkdirBatch::Release(std::string_view level) {
  auto claim = claims_.find(level);
  if (claim == claims_.end()) return;
  claims_.erase(claim);
  auto waiting = waiters_.find(level);
  if (waiting == waiters_.end()) return;
  for (size_t index : waiting->second) ready_.push_back(index);
  waiters_.erase(waiting);
}

void MkdirBatch::Admit() {
  if (admitting_) return;
  admitting_ = true;
  for (;;) {
    if (!cancelled_ && active_.size() >= concurrency_) break;
    // Paths woken from a wait first: they come before the rest of the list.
    size_t index;
    if (!ready_.empty()) {
      index = ready_.front();
      ready_.pop_front();
    } else if (next_ < paths_.size()) {
      index = next_++;
    } else {
      break;
    }
    if (cancelled_) {
      results_[index] = -static_cast<int64_t>(ECANCELED) - 2;
      done_++;
      continue;
    }
    auto walk = std::make_unique<PathWalk>(this, index, replans_[index]);
    PathWalk* started = walk.get();
    active_.emplace(index, std::move(walk));
    const PathWalk::Outcome outcome = started->Plan();
    if (outcome != PathWalk::Outcome::kSubmitted) Ended(started, outcome);
  }
  admitting_ = false;
  // Deletes the batch.
  if (done_ == paths_.size()) Settle();
}

void MkdirBatch::Ended(PathWalk* walk, PathWalk::Outcome outcome) {
  const size_t index = walk->index();
  if (outcome == PathWalk::Outcome::kWaiting) {
    replans_[index] = walk->replans();
    waiters_[walk->waiting_on()].push_back(index);
  } else {
    results_[index] = walk->result();
    failed_at_[index] = walk->failed_at();
    done_++;
  }
  active_.erase(index);
  Admit();
}

void MkdirBatch::Settle() {
  ring_->RemoveClient(this);
  if (!ring_->closing()) {
    napi_env env = ring_->env();
    napi_value out = nullptr;
    if (napi_create_array_with_length(env, results_.size(), &out) == napi_ok) {
      for (size_t i = 0; i < results_.size(); i++) {
        napi_value value = nullptr;
        if (results_[i] >= -1) {
          napi_create_double(env, static_cast<double>(results_[i]), &value);
        } else if (failed_at_[i] >= 0) {
          value = MkdirFailureToJs(env, static_cast<int>(-(results_[i] + 2)), failed_at_[i]);
        } else {
          value = FailureToJs(Napi::Env(env), Failure::Errno(static_cast<int>(-(results_[i] + 2)), Syscall::kMkdir));
        }
        if (value != nullptr) napi_set_element(env, out, static_cast<uint32_t>(i), value);
      }
      napi_resolve_deferred(env, deferred_, out);
    }
  }
  delete this;
}

}  // namespace

napi_value StartMkdirBatch(Ring* ring, const Napi::CallbackInfo& info, const std::shared_ptr<KnownDirs>& known) {
  napi_env env = info.Env();
  napi_value paths = info[0];
  uint32_t count = 0;
  // Raw N-API throughout (WriteTargetFromJs): under a worker's termination, nothing starts.
  if (!ArrayLength(env, paths, &count)) return nullptr;
  auto batch = std::make_unique<MkdirBatch>(ring, info[3].As<Napi::Number>().Uint32Value(), known);
  batch->paths_.resize(count);
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    ReadTarget target;
    if (!ArrayElement(env, paths, i, &element) || !WriteTargetFromJs(env, element, &target)) return nullptr;
    batch->paths_[i] = std::move(target.path);
  }
  batch->results_.assign(batch->paths_.size(), -1);
  batch->failed_at_.assign(batch->paths_.size(), -1);
  batch->replans_.assign(batch->paths_.size(), 0);
  batch->mode_ = static_cast<mode_t>(info[1].As<Napi::Number>().Uint32Value());
  batch->concurrency_ = std::max<size_t>(1, info[2].As<Napi::Number>().Uint32Value());
  napi_value promise = nullptr;
  // As in Ring::Read(): under a worker's termination, nothing is started.
  if (napi_create_promise(env, &batch->deferred_, &promise) != napi_ok) return nullptr;
  MkdirBatch* started = batch.release();
  ring->AddClient(started);
  started->Admit();
  return promise;
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
