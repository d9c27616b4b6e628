// SyncReplicasGate: the resource behind the SyncReplicasGate* ops — decides
// which replicas' gradients count toward each step of synchronous training
// (SyncReplicasOptimizer, docs/sync_replicas.md) and lets the chief wait,
// without taking anything, until a step has all the gradients it needs.
//
//   auto gate = std::make_shared<SyncReplicasGate>("gate", /*replicas_to_aggregate=*/2,
//                                                  /*one_per_replica=*/true);
//   gate->Open(/*step=*/0);                                   // the chief, at start
//   gate->Admit(/*replica=*/1, /*local_step=*/0, &cancellation,
//               [](absl::Status s, SyncReplicasGate::Admission a) { ... });  // a ticket
//   ... the replica applies its gradients to every accumulator with a.step, a.ticket ...
//   gate->Commit(a.ticket);                                   // delivered: it counts
//   gate->Take(&cancellation, [](absl::Status s, int64_t step) { ... });  // step 0 is full
//   gate->taken();                                            // step 0 and its tickets
//   gate->Release(/*step=*/1);  // the chief applied step 0: the global step is 1
//   gate->Await(/*local_step=*/0, &cancellation, ...);        // a replica's wait: 1
//
// A gradient counts in two phases, so that only gradients that were
// delivered count. Admit hands out a ticket for a gradient computed at
// `local_step` when local_step >= step (it is not stale), fewer than
// replicas_to_aggregate have been committed for the step, and, with
// one_per_replica, `replica` has not committed for this step yet; otherwise
// it answers kNotCounted (the replica applies its gradients with that local
// step, so the accumulators, whose global step is the gate's, drop them).
// Admission is not limited: a replica that was admitted and then died holds
// no place, so a backup replica can fill the step. Once the replica's
// gradients are in every accumulator it commits the ticket: the first
// replicas_to_aggregate commits of a step count (with one_per_replica, one
// per replica); later ones, and tickets of a step that is over, do not.
// Take waits until replicas_to_aggregate are committed, then completes the
// step: the gate moves to step + 1 with nothing admitted, and remembers the
// completed step's tickets (taken()), which name the gradients the chief
// takes from the accumulators.
//
// A new gate is closed to admissions: Admit waits until Open(step), which the
// chief runs once it has set the accumulators' global step to `step`. Open on
// the step the gate is at keeps what was admitted and committed; another
// step starts it afresh. Close(status) fails waiting and later admissions,
// commits, takes and awaits with `status` (the first one given wins) until
// the next Open.
//
// With one_per_replica, a replica waits for the chief's update at the gate
// rather than for a token (a token taken by a faster replica would leave it
// stuck): Await(local_step) waits until the gate is open and the chief has
// released a global step after local_step, and answers it. Release(step)
// records that the chief's update made the global step `step` (Release only
// raises it). Open(step) sets the released step to `step` and answers every
// waiting Await with it, so a replica whose gradient the Open dropped (a
// chief that failed between its take and its release) sends it again.
//
// Waiting calls register with their step's CancellationManager and fail
// Cancelled when it fires, leaving the gate as if they had not been made.
// Callbacks run without the lock held, on the thread that completed them.
// Thread-safe.
#ifndef TENSORGRID_KERNELS_DATA_FLOW_SYNC_REPLICAS_GATE_H_
#define TENSORGRID_KERNELS_DATA_FLOW_SYNC_REPLICAS_GATE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/cancellation.h"
#include "core/framework/resource_mgr.h"

namespace tensorgrid {

class SyncReplicasGate final : public ResourceBase,
                               public std::enable_shared_from_this<SyncReplicasGate> {
 public:
  static constexpr int64_t kNotCounted = -1;
  static constexpr int64_t kNoTicket = -1;
  // Admit's answer: the step and a ticket, or kNotCounted and kNoTicket.
  struct Admission {
    int64_t step = kNotCounted;
    int64_t ticket = kNoTicket;
  };
  using AdmitCallback = std::function<void(absl::Status, Admission)>;
  // Take's answer: the step completed.
  using StepCallback = std::function<void(absl::Status, int64_t step)>;

  // replicas_to_aggregate >= 1.
  SyncReplicasGate(std::string name, int64_t replicas_to_aggregate, bool one_per_replica);
  ~SyncReplicasGate() override;

  std::string TypeName() const override { return "SyncReplicasGate"; }
  const std::string& name() const { return name_; }

  // InvalidArgument unless a node asking for a gate with these attributes
  // may share this one.
  absl::Status MatchesRequest(int64_t replicas_to_aggregate, bool one_per_replica) const;

  // See the top of this file. `replica` is the sender's index (any value
  // without one_per_replica; a negative one is not remembered).
  void Admit(int64_t replica, int64_t local_step, CancellationManager* cancellation,
             AdmitCallback done);
  // Counts `ticket`'s gradient: its step, or kNotCounted (kNoTicket, a
  // ticket of an earlier step or of before the last Open, the step already
  // full, its replica's second with one_per_replica, or the gate closed).
  int64_t Commit(int64_t ticket);
  void Take(CancellationManager* cancellation, StepCallback done);
  // Waits until the gate is open and has released a step > local_step; answers it.
  void Await(int64_t local_step, CancellationManager* cancellation, StepCallback done);
  // The chief's update made the global step `step` (a lower one changes nothing).
  void Release(int64_t step);
  // Returns the opening's epoch: 1 for the first Open, then one more each time.
  int64_t Open(int64_t step);
  // `reason` must not be OK. With an `epoch` (>= 0), only while the gate is
  // still at that opening: a close that a chief's old loop sent before a
  // newer chief reopened the gate (it may arrive late: a frozen task runs
  // what waited in its sockets when it resumes) is ignored. True if it
  // closed the gate (or it was closed already).
  bool Close(absl::Status reason, int64_t epoch = -1);

  // The step the last Take completed and the tickets it counted, in the
  // order they were committed; step kNotCounted before the first since Open.
  struct Taken {
    int64_t step = kNotCounted;
    std::vector<int64_t> tickets;
  };
  Taken taken() const;

  struct State {
    bool open = false;
    int64_t step = 0;
    // Committed for `step`, and the replicas they came from (ascending).
    int64_t committed = 0;
    std::vector<int64_t> replicas;
    // Admitted for `step` but not committed (yet): the replicas (ascending).
    std::vector<int64_t> uncommitted_replicas;
    int64_t released = 0;
    absl::Status closed;  // OK unless closed
    int64_t pending_admits = 0;
    int64_t pending_takes = 0;
    int64_t pending_awaits = 0;
  };
  State state() const;

 private:
  struct Waiter;
  using Completion = std::function<void()>;

  // Answers `replica`'s admission on an open gate.
  Admission AdmitLocked(int64_t replica, int64_t local_step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets what was admitted and committed for the step.
  void ClearStepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Completes what can complete: waiting admissions once open, takes once
  // full, awaits once their step is released.
  void FlushLocked(std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::deque<std::unique_ptr<Waiter>>& QueueOf(const Waiter& waiter)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues `waiter` (registering it for cancellation) unless it completed.
  void Wait(std::unique_ptr<Waiter> waiter, CancellationManager* cancellation,
            std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancel(int64_t id);
  static Completion Finish(std::unique_ptr<Waiter> waiter, absl::Status status, Admission answer);

  const std::string name_;
  const int64_t replicas_to_aggregate_;
  const bool one_per_replica_;

  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t released_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // Opens so far
  // Tickets are never reused by this gate.
  int64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int64_t, int64_t> admitted_ ABSL_GUARDED_BY(mu_);  // uncommitted ticket -> replica
  std::vector<int64_t> committed_ ABSL_GUARDED_BY(mu_);       // tickets, in commit order
  std::set<int64_t> replicas_ ABSL_GUARDED_BY(mu_);           // of the committed ones
  Taken taken_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::unique_ptr<Waiter>> admits_ ABSL_GUARDED_BY(mu_);  // waiting for Open
  std::deque<std::unique_ptr<Waiter>> takes_ ABSL_GUARDED_BY(mu_);   // waiting for a full step
  std::deque<std::unique_ptr<Waiter>> awaits_ ABSL_GUARDED_BY(mu_);  // waiting for a release
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_DATA_FLOW_SYNC_REPLICAS_GATE_H_
