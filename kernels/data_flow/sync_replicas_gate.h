// SyncReplicasGate: the resource behind the SyncReplicasGate* ops — decides
// which replicas' gradients count toward each step of synchronous training
// (SyncReplicasOptimizer, docs/sync_replicas.md) and lets the chief wait,
// without taking anything, until a step has all the gradients it needs.
//
//   auto gate = std::make_shared<SyncReplicasGate>("gate", /*replicas_to_aggregate=*/2,
//                                                  /*one_per_replica=*/true);
//   gate->Open(/*step=*/0);                                   // the chief, at start
//   gate->Admit(/*replica=*/1, /*local_step=*/0, &cancellation,
//               [](absl::Status s, int64_t step) { ... });   // 0: counted, -1: not
//   gate->Take(&cancellation, [](absl::Status s, int64_t step) { ... });  // step 0 is full
//
// The gate counts admissions for its current step. Admit admits a gradient
// computed at `local_step` when local_step >= step (it is not stale), fewer
// than replicas_to_aggregate have been admitted for the step (the first N
// count, whoever sent them), and, with one_per_replica, `replica` has not
// been admitted for this step yet. It answers the step (admitted) or -1 (not
// counted): the replica applies its gradients with that local step, so the
// accumulators, whose global step is the gate's, drop the ones not counted.
// Take waits until replicas_to_aggregate are admitted, then completes the
// step: the gate moves to step + 1 with nothing admitted, and the taker gets
// the completed step.
//
// A new gate is closed to admissions: Admit waits until Open(step), which the
// chief runs once it has set the accumulators' global step to `step`. Open on
// the step the gate is at keeps what was admitted; another step starts it
// afresh. Close(status) fails waiting and later admissions and takes with
// `status` (the first one given wins) until the next Open.
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
  // The answer of Admit (the step, or kNotCounted) and of Take (the step completed).
  using StepCallback = std::function<void(absl::Status, int64_t step)>;
  static constexpr int64_t kNotCounted = -1;

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
             StepCallback done);
  void Take(CancellationManager* cancellation, StepCallback done);
  void Open(int64_t step);
  // `reason` must not be OK.
  void Close(absl::Status reason);

  struct State {
    bool open = false;
    int64_t step = 0;
    // Admitted for `step`, and the replicas they came from (ascending).
    int64_t admitted = 0;
    std::vector<int64_t> replicas;
    absl::Status closed;  // OK unless closed
    int64_t pending_admits = 0;
    int64_t pending_takes = 0;
  };
  State state() const;

 private:
  struct Waiter;
  using Completion = std::function<void()>;

  // Answers `replica`'s admission on an open gate: the step or kNotCounted.
  int64_t AdmitLocked(int64_t replica, int64_t local_step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Completes what can complete: waiting admissions once open, takes once full.
  void FlushLocked(std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues `waiter` (registering it for cancellation) unless it completed.
  void Wait(std::unique_ptr<Waiter> waiter, CancellationManager* cancellation,
            std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancel(int64_t id);
  static Completion Finish(std::unique_ptr<Waiter> waiter, absl::Status status, int64_t step);

  const std::string name_;
  const int64_t replicas_to_aggregate_;
  const bool one_per_replica_;

  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t admitted_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<int64_t> replicas_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::unique_ptr<Waiter>> admits_ ABSL_GUARDED_BY(mu_);  // waiting for Open
  std::deque<std::unique_ptr<Waiter>> takes_ ABSL_GUARDED_BY(mu_);   // waiting for a full step
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_DATA_FLOW_SYNC_REPLICAS_GATE_H_
