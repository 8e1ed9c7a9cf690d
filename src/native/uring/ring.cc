// SPDX-License-Identifier: MIT
// One io_uring per Node environment: setup ladder, batched submission, completion dispatch on
// the environment's loop, and teardown that waits until the kernel is done with every buffer.
#ifdef HAVE_LIBURING

#include "ring.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "../common/args.h"
#include "../common/file_io.h"
#include "../read/mount_table.h"
#include "beneath_op.h"
#include "positional_read.h"
#include "read_file.h"

namespace smartread {
namespace uring {

namespace {

constexpr unsigned kSqEntries = 256;
// io-wq's bounded workers (see Setup): as many as readMany keeps reads in flight by default.
constexpr unsigned kBoundedWorkers = 64;
// The longest chain that must go in one submission (a read's OPENAT and its two READs; the
// kernel ends a link at the end of a submission) fits in the smallest SQ, with room to spare.
constexpr unsigned kMinSqEntries = 4;
static_assert(kSqEntries >= kMinSqEntries);
constexpr unsigned kCqEntries = 16384;
constexpr unsigned kSlots = 1024;
// How often Drive() goes round (submit, reap, continue) before leaving the rest to the next
// loop turn, so that a flood of completions cannot hold the loop.
constexpr int kDrivePasses = 8;

struct SetupAttempt {
  unsigned flags;
};

// Best first. COOP_TASKRUN runs completion work when this thread next enters the kernel instead
// of interrupting it; with TASKRUN_FLAG the kernel also says in the SQ ring's flags when such
// work waits, so that Drive() enters the kernel for it only then. Both came in 5.19, as did the
// sparse file table the ring needs anyway. EINVAL means "this kernel does not know a flag": the
// next attempt drops them. DEFER_TASKRUN is deliberately not used: measured on 6.18, one enter
// runs only a capped batch of deferred completions and the eventfd is signalled only when that
// list goes from empty to non-empty, so with 100 reads in flight the rest waited forever for a
// signal.
constexpr SetupAttempt kAttempts[] = {
    {IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG},
    {0},
};

// Test-only switches, read from the environment at setup (documented in RELIABILITY.md; never
// set them in production):
//   SMARTREAD_TEST_URING_SETUP_ERRNO=ENOSYS|EINVAL|EPERM|ENOMEM  io_uring_setup "fails" with it,
//     so that tests can see every API fall back as on a kernel or sandbox without io_uring.
//   SMARTREAD_TEST_URING_ENTRIES=N  a ring of 2N CQ entries (N >= 2) and N SQ entries, but at
//     least kMinSqEntries, instead of the default, so that tests can run far more ops than the
//     completion queue holds.
int TestSetupErrno() {
  const char* name = getenv("SMARTREAD_TEST_URING_SETUP_ERRNO");
  if (name == nullptr) return 0;
  const std::string value(name);
  if (value == "ENOSYS") return ENOSYS;
  if (value == "EINVAL") return EINVAL;
  if (value == "EPERM") return EPERM;
  if (value == "ENOMEM") return ENOMEM;
  return 0;
}

unsigned TestRingEntries() {
  const char* value = getenv("SMARTREAD_TEST_URING_ENTRIES");
  if (value == nullptr) return 0;
  const long n = strtol(value, nullptr, 10);
  return n >= 2 && n <= static_cast<long>(kSqEntries) ? static_cast<unsigned>(n) : 0;
}

}  // namespace

Ring* Ring::Create(napi_env env, Instance* instance, std::string* why) {
  Ring* ring = new Ring(env, instance);
  if (!ring->Setup(why)) {
    delete ring;
    return nullptr;
  }
  return ring;
}

bool Ring::Setup(std::string* why) {
  int err = -EINVAL;
  const int test_errno = TestSetupErrno();
  const unsigned test_entries = TestRingEntries();
  for (const SetupAttempt& attempt : kAttempts) {
    if (test_errno != 0) {
      err = -test_errno;
      if (err != -EINVAL) break;
      continue;
    }
    io_uring_params params{};
    params.flags = attempt.flags | IORING_SETUP_CQSIZE;
    const unsigned sq_entries = test_entries != 0 ? std::max(test_entries, kMinSqEntries) : kSqEntries;
    params.cq_entries = test_entries != 0 ? std::max(2 * test_entries, sq_entries) : kCqEntries;
    err = io_uring_queue_init_params(sq_entries, &ring_, &params);
    if (err == 0) {
      cq_capacity_ = params.cq_entries;
      sq_entries_ = params.sq_entries;
      break;
    }
    if (err != -EINVAL) break;
  }
  if (err != 0) {
    // EPERM: seccomp (Docker's default profile) or kernel.io_uring_disabled; ENOSYS: no
    // io_uring in this kernel; anything else: not usable either.
    *why = std::string("io_uring_setup failed: ") + strerror(-err);
    return false;
  }
  ring_ready_ = true;
  auto fail = [&](const char* what, int code) {
    *why = std::string(what) + ": " + strerror(code < 0 ? -code : code);
    io_uring_queue_exit(&ring_);
    ring_ready_ = false;
    if (eventfd_ >= 0) close(eventfd_);
    eventfd_ = -1;
    return false;
  };
  io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
  if (probe == nullptr) return fail("io_uring probe failed", ENOSYS);
  const bool ops_ok = io_uring_opcode_supported(probe, IORING_OP_OPENAT) &&
                      io_uring_opcode_supported(probe, IORING_OP_STATX) &&
                      io_uring_opcode_supported(probe, IORING_OP_READ) &&
                      io_uring_opcode_supported(probe, IORING_OP_CLOSE) &&
                      io_uring_opcode_supported(probe, IORING_OP_ASYNC_CANCEL);
  // Lookups and opens beneath a root are made here only where OPENAT2 is (5.6, as OPENAT);
  // else on libuv's pool.
  can_look_up_ = io_uring_opcode_supported(probe, IORING_OP_OPENAT2);
  io_uring_free_probe(probe);
  if (!ops_ok) return fail("io_uring lacks OPENAT, STATX, READ, CLOSE or ASYNC_CANCEL", EOPNOTSUPP);
  // Direct descriptors (5.15) in a sparse table (5.19): opened files never enter the process's
  // fd table, so they count against no RLIMIT_NOFILE and no child can inherit them.
  // The kernel refuses a table larger than RLIMIT_NOFILE (EMFILE), though direct descriptors
  // never enter the fd table: under a low limit (ulimit -n 64) the table is made that small
  // instead of losing io_uring altogether; reads then wait for a free slot.
  unsigned slots = kSlots;
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < slots) {
    slots = static_cast<unsigned>(nofile.rlim_cur);
  }
  if (slots == 0) return fail("io_uring sparse file table", EMFILE);
  int res = io_uring_register_files_sparse(&ring_, slots);
  if (res < 0) return fail("io_uring sparse file table", res);
  // io-wq runs what the kernel cannot issue without blocking (every read and open on overlayfs,
  // FUSE and NFS, which refuse non-blocking I/O; cold opens anywhere) on "bounded" workers, at
  // most min(SQ entries, 4 x CPUs) of them by default: 8 here, so a filesystem that answers each
  // request in a millisecond got no more than 8 in flight however many reads were submitted
  // (readMany's default is 64). Workers are started only as work waits for them. Linux 5.15;
  // an older kernel refuses the call and keeps its default.
  unsigned max_workers[2] = {kBoundedWorkers, 0};  // 0: the unbounded workers' limit is kept
  io_uring_register_iowq_max_workers(&ring_, max_workers);
  eventfd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (eventfd_ < 0) return fail("eventfd", errno);
  // Every completion signals it, inline ones too (their wake-up then finds nothing to do).
  res = io_uring_register_eventfd(&ring_, eventfd_);
  if (res < 0) return fail("io_uring eventfd", res);

  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env_, &loop) != napi_ok) return fail("no event loop", EINVAL);
  poll_ = new uv_poll_t;
  poll_->data = this;
  if (uv_poll_init(loop, poll_, eventfd_) != 0 || uv_poll_start(poll_, UV_READABLE, &Ring::OnPoll) != 0) {
    delete poll_;
    poll_ = nullptr;
    return fail("uv_poll on the eventfd", EINVAL);
  }
  // The watcher keeps the process alive only while reads are in flight.
  uv_unref(reinterpret_cast<uv_handle_t*>(poll_));

  napi_value resource, name;
  napi_create_object(env_, &resource);
  napi_create_reference(env_, resource, 1, &resource_);
  napi_create_string_utf8(env_, "smartread:uring", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env_, resource, name, &async_context_);
  napi_add_async_cleanup_hook(env_, &Ring::OnTeardown, this, &cleanup_);

  // Room in the completion queue is kept for single ops (two completions each at most: the op
  // and a cancel), but never more than half of a small (test-sized) queue.
  const size_t singles_room = std::min<size_t>(2 * kMaxSingles, cq_capacity_ / 2);
  max_singles_ = std::max<size_t>(1, singles_room / 2);
  max_active_ = (cq_capacity_ - singles_room) / (2 * FileRead::kMaxOps);
  if (max_active_ > slots) max_active_ = slots;
  // A completion queue smaller than one read's worst case (only a test-sized ring) still runs
  // one read at a time: completions beyond its capacity wait in the kernel's overflow list
  // (IORING_FEAT_NODROP, 5.5) and are flushed by the next enter.
  if (max_active_ == 0) max_active_ = 1;
  free_slots_.reserve(slots);
  for (int slot = static_cast<int>(slots) - 1; slot >= 0; slot--) free_slots_.push_back(slot);
  return true;
}

io_uring_sqe* Ring::Sqe(Op* op) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  ops_in_flight_++;
  io_uring_sqe_set_data(sqe, op);
  return sqe;
}

namespace {

// A regular file opened without waiting: its path's dentries must be in memory
// (RESOLVE_CACHED), and anything else than a regular file is closed again (O_NONBLOCK only for
// the open, so that a FIFO put in its place cannot hold the thread). -1 when it cannot be.
int OpenCachedRegular(const std::string& path, int flags, const Confinement& confinement) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NONBLOCK);
  how.resolve = RESOLVE_CACHED | confinement.resolve;
  const int dirfd = confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD;
  const int fd = static_cast<int>(syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how));
  if (fd < 0) return -1;
  struct stat st;
  // io_uring would hand a nonblocking file's reads back with EAGAIN instead of waiting.
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

napi_value Ring::Read(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int flags = info[1].As<Napi::Number>().Int32Value();
  const bool stat_user_fd = info[2].As<Napi::Boolean>().Value();
  const uint32_t id = info[3].As<Napi::Number>().Uint32Value();
  ReadTarget target = ReadTargetFromJs(info[0]);
  const Confinement confinement = ConfinementFromJs(info, 4);
  napi_deferred deferred;
  napi_value promise = nullptr;
  // Fails once a worker is being terminated (V8 makes no more objects): nothing is started, and
  // the call returns nothing, never an uninitialised handle (N-API would dereference it).
  if (napi_create_promise(env, &deferred, &promise) != napi_ok) return nullptr;
  // A large file whose path the fast path found cached (info[6]) is opened here, so that its
  // chunks go out in this submission, sized by fstat, rather than after an OPENAT, a first
  // READ and a STATX (which the kernel always runs on a worker: a thread hop). Where it cannot
  // be opened so, it is read as any path is.
  int fd = target.fd;
  bool owns_fd = false;
  // A name last read on a filesystem whose opens ask a server (FUSE, NFS: BlindReads) is opened
  // by an io-wq worker: the kernel runs an OPENAT inline, in this thread's io_uring_enter,
  // whenever the name's lookup is cached, and FUSE's open then waits there for its daemon (one
  // submission of 51 reads on a 1 ms FUSE mount held the loop 33 ms). Nor is it opened here.
  // A name the fast path has not read (strategy 'uring', a reader with no fast path) is asked
  // of the mount table, by the device its cached name leads to, or where the name is not
  // cached (io_uring's worker looks it up, but the READs after the open would still run inline)
  // the nearest cached directory's: 200 files on a 1 ms FUSE mount held the loop 62 ms before.
  // So is every confined name (the hints keep none: names there are relative to a root), as
  // its open will resolve it.
  uint64_t known_size = 0;
  dev_t known_dev = 0;
  const bool known = fd < 0 && !confinement.confined() &&
                     instance_->fast_path.KnownSize(target.path.c_str(), &known_size, &known_dev) && known_dev != 0;
  dev_t dev = known_dev;
  if (!known && fd < 0) {
    dev = CachedNameDevice(target.path.c_str(), confinement.dirfd >= 0 ? confinement.dirfd : AT_FDCWD, confinement.resolve);
  }
  const bool open_may_wait = dev != 0 && instance_->blind->OpensMayWait(dev);
  if (!known) known_size = 0;
  if (fd < 0 && ArgIsTrue(info, 6) && !open_may_wait) {
    fd = OpenCachedRegular(target.path, flags, confinement);
    owns_fd = fd >= 0;
  }
  FileRead* read = new FileRead(this, id, deferred, std::move(target.path), fd, owns_fd, flags,
                                stat_user_fd, confinement, open_may_wait, open_may_wait ? known_size : 0);
  reads_[id] = read;
  waiting_.push_back(read);
  StartWaiting();
  return promise;
}

void Ring::StartWaiting() {
  while (!waiting_.empty() && active_ < max_active_) {
    FileRead* read = waiting_.front();
    if (read->needs_slot() && free_slots_.empty()) return;
    waiting_.pop_front();
    Start(read);
  }
}

void Ring::Start(FileRead* read) {
  active_++;
  int slot = -1;
  if (read->needs_slot()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  read->Start(slot);
}

void Ring::Cancel(uint32_t id) {
  auto it = reads_.find(id);
  if (it == reads_.end()) return;
  FileRead* read = it->second;
  for (auto w = waiting_.begin(); w != waiting_.end(); ++w) {
    if (*w != read) continue;
    // Not started: nothing in the kernel to wait for.
    waiting_.erase(w);
    read->Cancel();
    active_++;
    Finish(read);
    return;
  }
  read->Cancel();
  Drive();
}

void Ring::Finish(FileRead* read) {
  active_--;
  reads_.erase(read->id());
  if (!closing_) {
    napi_value result = read->Result(env_);
    if (result == nullptr) {
      napi_get_and_clear_last_exception(env_, &result);
      napi_reject_deferred(env_, read->deferred(), result);
    } else {
      napi_resolve_deferred(env_, read->deferred(), result);
    }
  }
  delete read;
}

int Ring::RegisterFile(int fd) {
  if (free_slots_.empty()) return -1;
  const int slot = free_slots_.back();
  if (io_uring_register_files_update(&ring_, static_cast<unsigned>(slot), &fd, 1) != 1) return -1;
  free_slots_.pop_back();
  return slot;
}

void Ring::UnregisterFile(int slot) {
  // -1 empties the slot; the table's reference to the file is dropped with it.
  int none = -1;
  io_uring_register_files_update(&ring_, static_cast<unsigned>(slot), &none, 1);
  free_slots_.push_back(slot);
  // A whole-file read or a client may have been waiting for a slot: start it, and submit it now,
  // as no other call may come to submit it.
  if (!waiting_.empty() || !clients_.empty()) Drive();
}

napi_value Ring::ReadAt(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  uint8_t* data;
  size_t byte_length;
  if (!ViewBytes(env, info[2], &data, &byte_length)) {
    napi_throw_type_error(env, nullptr, "buffer must be an ArrayBufferView");
    return nullptr;
  }
  napi_deferred deferred;
  napi_value promise = nullptr;
  napi_ref view_ref = nullptr;
  // As in Read(): under a worker's termination, nothing is started.
  if (napi_create_promise(env, &deferred, &promise) != napi_ok) return nullptr;
  if (napi_create_reference(env, info[2], 1, &view_ref) != napi_ok) {
    napi_value undefined = nullptr;
    if (napi_get_undefined(env, &undefined) == napi_ok) napi_reject_deferred(env, deferred, undefined);
    return nullptr;
  }
  PositionalRead* read = new PositionalRead(
      this, deferred, view_ref, data + static_cast<size_t>(info[3].As<Napi::Number>().Int64Value()),
      info[4].As<Napi::Number>().Uint32Value(), static_cast<uint64_t>(info[5].As<Napi::Number>().Int64Value()),
      info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Boolean>().Value(),
      info[6].IsBoolean() && info[6].As<Napi::Boolean>().Value());
  StartSingle(read);
  return promise;
}

napi_value Ring::StartBeneath(const Napi::CallbackInfo& info, int kind, int flags, size_t confinement_at) {
  napi_env env = info.Env();
  Failure failure;
  PathArg path;
  if (!path.From(env, info[0], &failure)) return FailureToJs(Napi::Env(env), failure);
  napi_deferred deferred;
  napi_value promise = nullptr;
  // As in Read(): under a worker's termination, nothing is started.
  if (napi_create_promise(env, &deferred, &promise) != napi_ok) return nullptr;
  StartSingle(new BeneathOp(this, deferred, static_cast<BeneathOp::Kind>(kind), path.c_str(), flags,
                            ConfinementFromJs(info, confinement_at)));
  return promise;
}

napi_value Ring::LookUp(const Napi::CallbackInfo& info) {
  return StartBeneath(info, info[3].ToBoolean().Value() ? BeneathOp::kLookUp : BeneathOp::kCheck, 0, 1);
}

napi_value Ring::OpenBeneath(const Napi::CallbackInfo& info) {
  return StartBeneath(info, BeneathOp::kOpen, info[1].As<Napi::Number>().Int32Value(), 2);
}

void SingleOp::Cancel() {
  if (!op_.busy) return;
  io_uring_prep_cancel64(ring_->Sqe(nullptr), reinterpret_cast<uint64_t>(&op_), 0);
}

io_uring_sqe* SingleOp::QueueOp(uint16_t kind) {
  op_.busy = true;
  op_.kind = kind;
  return ring_->Sqe(&op_);
}

void Ring::StartSingle(SingleOp* single) {
  singles_waiting_.push_back(single);
  StartWaitingSingles();
}

void Ring::StartWaitingSingles() {
  while (!singles_waiting_.empty() && singles_.size() < max_singles_) {
    SingleOp* single = singles_waiting_.front();
    singles_waiting_.pop_front();
    singles_.insert(single);
    single->Start();
  }
}

void Ring::FinishSingle(SingleOp* single) {
  singles_.erase(single);
  if (!closing_) single->Settle(env_);
  delete single;
}

void Ring::AddClient(RingClient* client) {
  clients_.insert(client);
  UpdateLoopRef();
}

void Ring::RemoveClient(RingClient* client) {
  clients_.erase(client);
  UpdateLoopRef();
}

void Ring::CancelClient(uint32_t id) {
  for (RingClient* client : clients_) {
    if (client->id() != id) continue;
    client->Cancel();
    Drive();
    return;
  }
}

int Ring::AcquireSlot() {
  if (free_slots_.empty()) return -1;
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

void Ring::Submit() { Drive(); }

void Ring::Drive() {
  if (driving_ || !ring_ready_) return;
  driving_ = true;
  for (int pass = 0; pass < kDrivePasses; pass++) {
    // Entering the kernel also runs the completion work COOP_TASKRUN left for this thread; with
    // nothing to submit and completions posted already (the eventfd's signal), they are taken
    // without it. With none posted either, it is entered only where completions may wait.
    if (io_uring_sq_ready(&ring_) > 0 || (io_uring_cq_ready(&ring_) == 0 && CompletionsMayWait())) {
      io_uring_submit_and_get_events(&ring_);
    }
    const unsigned reaped = ReapReady();
    StartWaiting();
    StartWaitingSingles();
    // A client may end (and unregister itself) in Continue(): iterate over a copy.
    if (!clients_.empty()) {
      const std::vector<RingClient*> clients(clients_.begin(), clients_.end());
      for (RingClient* client : clients) {
        if (clients_.count(client) != 0) client->Continue();
      }
    }
    // Done once nothing is queued and nothing more is posted. Completion work left for this
    // thread after that runs as it next leaves any syscall (the loop's epoll_wait returns for
    // it), posts its completions, and signals the eventfd.
    if (io_uring_sq_ready(&ring_) == 0 && (reaped == 0 || io_uring_cq_ready(&ring_) == 0)) {
      driving_ = false;
      UpdateLoopRef();
      return;
    }
  }
  // Out of passes with work left: hand what is queued to the kernel, and come back on the next
  // loop turn (other callbacks run in between) for whatever is ready already.
  io_uring_submit(&ring_);
  eventfd_write(eventfd_, 1);
  driving_ = false;
  UpdateLoopRef();
}

bool Ring::CompletionsMayWait() const {
  // Where the kernel does not say (no TASKRUN_FLAG), always. Where it does, only when completion
  // work waits for this thread or the CQ overflowed: a loop turn woken by completions this thread
  // had already taken (cached files complete inline as they are submitted, and their posting
  // still signals the eventfd) entered the kernel for nothing, once a turn (about one
  // io_uring_enter in five of a readMany of cached files with strategy 'uring').
  if ((ring_.flags & IORING_SETUP_TASKRUN_FLAG) == 0) return true;
  return (IO_URING_READ_ONCE(*ring_.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)) != 0;
}

unsigned Ring::ReapReady() {
  io_uring_cqe* cqes[64];
  unsigned total = 0;
  for (;;) {
    const unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, 64);
    if (n == 0) return total;
    for (unsigned i = 0; i < n; i++) {
      Op* op = static_cast<Op*>(io_uring_cqe_get_data(cqes[i]));
      const int res = cqes[i]->res;
      ops_in_flight_--;
      // Marked seen before dispatch: the handler may queue and submit new ops.
      io_uring_cqe_seen(&ring_, cqes[i]);
      if (op != nullptr) op->owner->OnCompletion(op, res);
    }
    total += n;
  }
}

void Ring::UpdateLoopRef() {
  if (poll_ == nullptr || closing_) return;
  if (reads_.empty() && singles_.empty() && singles_waiting_.empty() && clients_.empty()) {
    uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
  } else {
    uv_ref(reinterpret_cast<uv_handle_t*>(poll_));
  }
}

void Ring::OnPoll(uv_poll_t* handle, int status, int) {
  Ring* self = static_cast<Ring*>(handle->data);
  uint64_t count;
  while (read(self->eventfd_, &count, sizeof count) > 0) {
  }
  napi_env env = self->env_;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value resource = nullptr;
  napi_get_reference_value(env, self->resource_, &resource);
  // Settling promises here, outside any call from JS: the callback scope runs the microtasks
  // (and so the awaiting code) when it closes.
  napi_callback_scope callback_scope;
  napi_open_callback_scope(env, resource, self->async_context_, &callback_scope);
  napi_handle_scope results;
  napi_open_handle_scope(env, &results);
  self->Drive();
  napi_close_handle_scope(env, results);
  napi_close_callback_scope(env, callback_scope);
  napi_close_handle_scope(env, scope);
}

void Ring::OnTeardown(napi_async_cleanup_hook_handle, void* arg) {
  Ring* self = static_cast<Ring*>(arg);
  self->closing_ = true;
  // Cancel everything, then wait until every op has completed: until then the kernel may still
  // write into buffers that the environment is about to free.
  for (auto& entry : self->reads_) entry.second->Cancel();
  for (SingleOp* single : self->singles_) single->Cancel();
  for (RingClient* client : self->clients_) client->Cancel();
  while (self->ops_in_flight_ > 0) {
    io_uring_submit(&self->ring_);
    io_uring_cqe* cqe = nullptr;
    if (io_uring_wait_cqe(&self->ring_, &cqe) < 0) break;
    self->ReapReady();
  }
  for (auto& entry : self->reads_) delete entry.second;
  self->reads_.clear();
  self->waiting_.clear();
  for (SingleOp* single : self->singles_) delete single;
  for (SingleOp* single : self->singles_waiting_) delete single;
  self->singles_.clear();
  self->singles_waiting_.clear();
  // A client that ended during the wait has unregistered and deleted itself.
  const std::vector<RingClient*> clients(self->clients_.begin(), self->clients_.end());
  self->clients_.clear();
  for (RingClient* client : clients) delete client;
  // Closing the ring closes every direct descriptor still registered.
  io_uring_queue_exit(&self->ring_);
  self->ring_ready_ = false;
  napi_async_destroy(self->env_, self->async_context_);
  napi_delete_reference(self->env_, self->resource_);
  uv_poll_stop(self->poll_);
  uv_close(reinterpret_cast<uv_handle_t*>(self->poll_), &Ring::OnPollClosed);
}

void Ring::OnPollClosed(uv_handle_t* handle) {
  Ring* self = static_cast<Ring*>(handle->data);
  delete reinterpret_cast<uv_poll_t*>(handle);
  close(self->eventfd_);
  napi_remove_async_cleanup_hook(self->cleanup_);
  delete self;
}

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
