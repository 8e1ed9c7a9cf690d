// SPDX-License-Identifier: MIT
// One io_uring per Node environment: whole-file reads as linked chains on direct descriptors,
// positional reads of files kept open, lookups and opens, submitted in batches, completed on the
// environment's own loop through an eventfd.
#pragma once

#ifdef HAVE_LIBURING

#include <liburing.h>
#include <napi.h>
#include <uv.h>

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../read/instance.h"

namespace smartread {
namespace uring {

class FileRead;
class Ring;
struct Op;

// What ops belong to: a whole-file read, or a single op (a positional read of an open file, a
// lookup, an open). Completions are dispatched to it on the JS thread.
class OpOwner {
 public:
  virtual void OnCompletion(Op* op, int res) = 0;

 protected:
  ~OpOwner() = default;
};

// Work that submits ops of its own on the ring besides reads (writeMany's and mkdirMany's
// batches). While registered (Ring::AddClient .. RemoveClient) it keeps the loop alive; Drive()
// gives it a chance to go on after every pass (a descriptor slot may have come free); the
// environment's teardown cancels it, waits for its ops (it may queue more, a CLOSE or an
// UNLINK), and deletes it.
class RingClient {
 public:
  virtual ~RingClient() = default;
  // Whom uringCancel-style calls name.
  virtual uint32_t id() const = 0;
  // Asks the kernel to cancel every op in flight; the client then ends as its ops come back.
  virtual void Cancel() = 0;
  // Starts what waited for a free descriptor slot.
  virtual void Continue() = 0;
};

// What an SQE is for: its user_data points at one of these (nullptr for cancel requests,
// whose completions carry nothing to dispatch).
struct Op {
  OpOwner* owner = nullptr;
  uint16_t kind = 0;
  bool busy = false;
  // For a READ: the part of the file it asked for.
  uint64_t offset = 0;
  uint64_t length = 0;
};

// A request of one op in flight at a time (and at most one cancel of it), settled with one
// promise: a positional read (PositionalRead), a lookup or an open (BeneathOp). Lifecycle: made
// on the JS thread and handed to Ring::StartSingle(), which starts it once the completion queue
// has room for it; its last completion calls Ring::FinishSingle(), which settles it (unless the
// environment is going away) and deletes it. At teardown the ring cancels it, waits for its
// completions, and deletes it unsettled.
class SingleOp : public OpOwner {
 public:
  explicit SingleOp(Ring* ring) : ring_(ring) { op_.owner = this; }
  virtual ~SingleOp() = default;
  // Queues its first op (no syscall).
  virtual void Start() = 0;
  // Settles the promise; called once, on the JS thread.
  virtual void Settle(napi_env env) = 0;
  // Asks the kernel to cancel its op if one is in flight; the completion still comes.
  void Cancel();

 protected:
  // The SQE of its next op, of `kind` (no syscall).
  io_uring_sqe* QueueOp(uint16_t kind);

  Ring* const ring_;
  Op op_;
};

// The lifecycle of a ring:
//   Create()    on the first io_uring read of an environment, on its JS thread. Any setup error
//               means "not available" and is reported as a reason, never thrown.
//   Read()      queues a read (no syscall), as ReadAt() queues a positional read of a file a
//               reader keeps in a fixed-file slot (RegisterFile() .. UnregisterFile()) and
//               LookUp() and OpenBeneath() a lookup and an open; Submit(), from a microtask,
//               submits the batch (every kind together) and handles what completed inline;
//               later completions wake the loop's uv_poll on the eventfd and are handled there,
//               with promises settled in a callback scope.
//   teardown    the environment's async cleanup hook cancels every read, waits until the kernel
//               has finished with every buffer, closes the ring, closes the poll handle, and
//               the ring deletes itself in the handle's close callback.
class Ring {
 public:
  // A ring for this environment, or nullptr with `why` set.
  static Ring* Create(napi_env env, Instance* instance, std::string* why);

  // readFile contract of the sync engine, as a promise; `id` names the read for Cancel().
  napi_value Read(const Napi::CallbackInfo& info);
  void Submit();
  void Cancel(uint32_t id);

  // Positional reads of a file kept open (openReader). RegisterFile() puts the fd in a slot of
  // the fixed-file table and returns the slot, or -1 when none is free (reads then name the fd
  // itself); UnregisterFile() empties the slot once no read of it is left in flight.
  int RegisterFile(int fd);
  void UnregisterFile(int slot);
  // readAt(fdOrSlot, fixed, view, offset, length, position, onWorkers?)
  //   -> Promise<bytes read | failure>;
  // queued like Read() until Submit(). onWorkers: the file is on a server's mount
  // (fileAsksServer), and its READ goes to io-wq's workers.
  napi_value ReadAt(const Napi::CallbackInfo& info);
  // lookUp(path, dirfd, resolve, confined) -> Promise<Float64Array | failure>: statBeneath
  // (confined) or statAt; openBeneath(path, flags, dirfd, resolve) -> Promise<fd | failure>;
  // made by io-wq's workers (beneath_op.h), queued like Read().
  napi_value LookUp(const Napi::CallbackInfo& info);
  napi_value OpenBeneath(const Napi::CallbackInfo& info);
  // Whether the kernel's io_uring can make lookups and opens beneath a root (OPENAT2, 5.6).
  bool can_look_up() const { return can_look_up_; }
  // Queues a single op's request, started once there is room for it.
  void StartSingle(SingleOp* single);
  // The single op's request is done: settle its promise and delete it.
  void FinishSingle(SingleOp* single);

  // Clients other than reads (see RingClient).
  void AddClient(RingClient* client);
  void RemoveClient(RingClient* client);
  // Cancels the client with this id, if it is still registered.
  void CancelClient(uint32_t id);
  // A free direct-descriptor slot for a client's file, or -1 (it then waits for Continue()).
  int AcquireSlot();
  // The SQ's size: the longest chain that can go in one submission.
  unsigned sq_entries() const { return sq_entries_; }

  // Used by FileRead.
  napi_env env() const { return env_; }
  uint64_t max_length() const { return instance_->max_length; }
  const Tuning& tuning() const { return instance_->tuning; }
  Instance& instance() const { return *instance_; }
  // An SQE whose completion goes to `op` (nullptr: a cancel request); submits to make room
  // when the SQ is full.
  io_uring_sqe* Sqe(Op* op);
  // Makes room for `count` SQEs in the SQ, submitting what is queued if needed, so that a
  // linked chain is never split across two submissions (the kernel would run the halves apart).
  void Reserve(unsigned count) {
    if (io_uring_sq_space_left(&ring_) < count) io_uring_submit(&ring_);
  }
  // Hands the SQEs queued so far to the kernel now, without handling completions: for a read
  // whose workers should start before the JS thread copies a part of it itself.
  void SubmitQueued() { io_uring_submit(&ring_); }
  bool closing() const { return closing_; }
  void ReleaseSlot(int slot) { free_slots_.push_back(slot); }
  // The read has nothing left in the kernel: settle its promise and delete it.
  void Finish(FileRead* read);

 private:
  Ring(napi_env env, Instance* instance) : env_(env), instance_(instance) {}
  bool Setup(std::string* why);

  void Start(FileRead* read);
  void StartWaiting();
  void StartWaitingSingles();
  // A BeneathOp of `kind` for info[0]'s path, its confinement from info[confinement_at] on.
  napi_value StartBeneath(const Napi::CallbackInfo& info, int kind, int flags, size_t confinement_at);
  // Submits what is queued and handles every completion that is ready, repeatedly, so that
  // continuations of inline completions go out in the same turn.
  void Drive();
  // Whether entering the kernel with nothing to submit may find completions (see Drive()).
  bool CompletionsMayWait() const;
  unsigned ReapReady();
  void UpdateLoopRef();

  static void OnPoll(uv_poll_t* handle, int status, int events);
  static void OnTeardown(napi_async_cleanup_hook_handle handle, void* self);
  static void OnPollClosed(uv_handle_t* handle);

  napi_env env_;
  Instance* instance_;
  io_uring ring_{};
  bool ring_ready_ = false;
  int eventfd_ = -1;
  uv_poll_t* poll_ = nullptr;
  napi_async_cleanup_hook_handle cleanup_ = nullptr;
  napi_ref resource_ = nullptr;
  napi_async_context async_context_ = nullptr;
  unsigned cq_capacity_ = 0;
  // SQEs handed out whose CQE has not been reaped: never more than the CQ holds, so that no
  // completion can overflow it.
  unsigned ops_in_flight_ = 0;
  // Reads admitted at once: each may have up to FileRead::kMaxOps ops (and as many cancels)
  // with completions pending.
  size_t max_active_ = 0;
  size_t active_ = 0;
  std::vector<int> free_slots_;
  std::unordered_map<uint32_t, FileRead*> reads_;
  std::deque<FileRead*> waiting_;
  // Single ops have a budget of CQ entries of their own (one op and at most one cancel each),
  // set apart from that of whole-file reads: at most this many in flight (fewer on a
  // test-sized ring, see Setup).
  static constexpr size_t kMaxSingles = 1024;
  size_t max_singles_ = kMaxSingles;
  std::unordered_set<SingleOp*> singles_;
  std::deque<SingleOp*> singles_waiting_;
  bool can_look_up_ = false;
  std::unordered_set<RingClient*> clients_;
  unsigned sq_entries_ = 0;
  bool driving_ = false;
  bool closing_ = false;
};

}  // namespace uring
}  // namespace smartread

#endif  // HAVE_LIBURING
