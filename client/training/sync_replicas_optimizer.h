// SyncReplicasOptimizer: synchronous data-parallel training over parameter
// servers, TensorFlow 1.x's tf.train.SyncReplicasOptimizer. It wraps an
// Optimizer: every replica (worker) computes gradients on its own batch; the
// chief averages replicas_to_aggregate of them per variable, applies the
// averages once with the wrapped optimizer and moves the global step on; the
// replicas wait for that before their next step. docs/sync_replicas.md has
// the whole story.
//
//   // On every worker, the same graph:
//   training::Variable step = training::GetOrCreateGlobalStep(root);
//   training::AdamOptimizer adam(1e-4);
//   training::SyncReplicasOptimizer sync(&adam, /*replicas_to_aggregate=*/2,
//                                        /*total_num_replicas=*/3);   // one backup
//   TG_ASSIGN_OR_RETURN(Operation train, sync.Minimize(root, loss, {}, step));
//   training::MonitoredTrainingSessionOptions options;
//   options.master = "grpc://localhost:2223";
//   options.is_chief = task_index == 0;
//   training::SyncReplicasHookOptions hook;
//   hook.master = options.master;                 // the chief's aggregation session
//   options.hooks = {sync.MakeSessionRunHook(options.is_chief, hook),
//                    training::StopAtStepHook::AtStep(10000)};
//   TG_ASSIGN_OR_RETURN(auto session, training::MonitoredTrainingSession::Create(root, options));
//   while (!session->should_stop()) TG_RETURN_IF_ERROR(session->Run(feeds, {}, {train}, nullptr));
//
// What ApplyGradients builds (in every worker's graph; shared resources are
// found by shared_name, so every worker uses the same ones):
//   - per variable a ConditionalAccumulator ("<var>/grad_accum") colocated
//     with the variable, which drops gradients older than its global step;
//   - beside the global step a token queue (not with OneGradientPerWorker)
//     and a SyncReplicasGate (kernels/data_flow/sync_replicas_gate.h) that
//     counts the first replicas_to_aggregate gradients delivered for each
//     step;
//   - the train op: admit this replica's gradients at its local step (a
//     ticket), apply them to every accumulator under that ticket, commit
//     the ticket at the gate (only now does the gradient count), then
//     dequeue a token (wait for the chief's update) and set the local step
//     from it. With OneGradientPerWorker it waits at the gate instead, until
//     a step after its local step is applied: a faster worker could take
//     its token, and then neither would get one;
//   - the chief's aggregation: wait for a full step, take from every
//     accumulator the mean of exactly the gradients the gate counted, apply
//     the means with the wrapped optimizer (which adds one to the global
//     step), and enqueue total_num_replicas tokens carrying the new global
//     step (or release it at the gate);
//   - a local step on the worker, set from each token (a SyncReplicasLocalStep,
//     not a variable: neither `init`, a Saver nor the non-chief's readiness
//     check sees it; it reads -1, i.e. stale, until first set).
// The hook from MakeSessionRunHook runs what only a session can: on the chief
// the initialization and the aggregation loop on a background thread, on the
// others the local step's initialization.
//
// Semantics, as TensorFlow's: each step averages the first
// replicas_to_aggregate gradients computed against it that reached every
// accumulator, whoever sent them (with initial tokens a fast worker may send
// two); later and stale ones are dropped, and so is the gradient of a worker
// that died while sending it. total_num_replicas > replicas_to_aggregate
// gives backup workers: the slowest (or dead) are not waited for.
// OneGradientPerWorker(true) counts at most one gradient per worker (by its
// WorkerIndex) per step; a worker then never runs ahead (num_tokens must be
// -1 or 0).
//
// Errors are returned. Thread safety: build from one thread; the hook is
// driven by one MonitoredTrainingSession.
#ifndef TENSORGRID_CLIENT_TRAINING_SYNC_REPLICAS_OPTIMIZER_H_
#define TENSORGRID_CLIENT_TRAINING_SYNC_REPLICAS_OPTIMIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/output.h"
#include "client/scope.h"
#include "client/training/hooks.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "proto/config.pb.h"

namespace tensorgrid {
namespace training {

// How the hook of MakeSessionRunHook runs the chief's side.
struct SyncReplicasHookOptions {
  // The master the chief's aggregation loop opens its own session on: give
  // the MonitoredTrainingSession's `master` (and `config`). Its own session
  // lets the loop outlive the MonitoredTrainingSession replacing its session
  // after a failure. "" (in-process) makes the loop share the session the
  // hook is given, since another in-process session would not see the same
  // variables; the loop then must not outlive it (in-process sessions are
  // not recreated in practice).
  std::string master;
  ConfigProto config;
  // Tokens the chief puts in the token queue when a session starts (TF's
  // num_tokens): -1 gives the fewest that let the first step complete,
  // max(0, replicas_to_aggregate - total_num_replicas). TensorFlow's default
  // is replicas_to_aggregate, which lets each worker start one step ahead.
  int num_tokens = -1;
  // How long the chief waits for one step's gradients before it fails with
  // DeadlineExceeded naming how many of how many arrived (and, with
  // WorkerIndex, the workers that sent none). 0: wait for ever.
  absl::Duration aggregation_timeout = absl::Minutes(5);
};

class SyncReplicasOptimizer {
 public:
  struct Attrs {
    // Count at most one gradient per worker per step (default false: the
    // first replicas_to_aggregate count, whoever sent them). Needs
    // WorkerIndex and total_num_replicas >= replicas_to_aggregate.
    Attrs OneGradientPerWorker(bool x) const {
      Attrs r = *this;
      r.one_gradient_per_worker_ = x;
      return r;
    }
    // This replica's index in [0, total_num_replicas): its worker task index.
    // It identifies its gradients (and names the missing workers in errors).
    Attrs WorkerIndex(int x) const {
      Attrs r = *this;
      r.worker_index_ = x;
      return r;
    }
    // The name scope of the ops and the prefix of the shared names
    // (default "sync_replicas").
    Attrs Name(const std::string& x) const {
      Attrs r = *this;
      r.name_ = x;
      return r;
    }
    bool one_gradient_per_worker_ = false;
    std::optional<int> worker_index_;
    std::optional<std::string> name_;
  };
  static Attrs OneGradientPerWorker(bool x) { return Attrs().OneGradientPerWorker(x); }
  static Attrs WorkerIndex(int x) { return Attrs().WorkerIndex(x); }
  static Attrs Name(const std::string& x) { return Attrs().Name(x); }

  // Wraps `optimizer` (not owned; it must outlive this object's
  // ApplyGradients). total_num_replicas: the workers running the train op;
  // -1 means replicas_to_aggregate. Bad values are reported by ApplyGradients.
  SyncReplicasOptimizer(Optimizer* optimizer, int replicas_to_aggregate,
                        int total_num_replicas = -1);
  SyncReplicasOptimizer(Optimizer* optimizer, int replicas_to_aggregate, int total_num_replicas,
                        const Attrs& attrs);
  ~SyncReplicasOptimizer();
  SyncReplicasOptimizer(const SyncReplicasOptimizer&) = delete;
  SyncReplicasOptimizer& operator=(const SyncReplicasOptimizer&) = delete;

  // The wrapped optimizer's.
  absl::StatusOr<std::vector<GradAndVar>> ComputeGradients(
      const Scope& scope, const Output& loss, const std::vector<Variable>& var_list = {}) const;

  // Builds everything listed at the top of this file and returns the train
  // op every worker runs. The wrapped optimizer's update ops and slots are
  // built in `scope` (so they keep their usual names, e.g. "w/Adam"), the
  // rest under Name(). Once per object: FailedPrecondition the second time.
  // InvalidArgument for bad counts or worker index, an invalid global step,
  // no valid gradient, or a gradient whose dtype is not its variable's.
  absl::StatusOr<Operation> ApplyGradients(const Scope& scope,
                                           const std::vector<GradAndVar>& grads_and_vars,
                                           const Variable& global_step);
  // ComputeGradients, then ApplyGradients.
  absl::StatusOr<Operation> Minimize(const Scope& scope, const Output& loss,
                                     const std::vector<Variable>& var_list,
                                     const Variable& global_step);

  // An op that puts `num_tokens` tokens carrying the global step into the
  // token queue (a NoOp for 0); -1 as in SyncReplicasHookOptions. The chief's
  // hook builds and runs one; for use without the hook. FailedPrecondition
  // before ApplyGradients; InvalidArgument for fewer than
  // replicas_to_aggregate - total_num_replicas, or for any with
  // OneGradientPerWorker.
  absl::StatusOr<Operation> GetInitTokensOp(int num_tokens = -1);

  // The hook for MonitoredTrainingSession (docs/sync_replicas.md). May be
  // made before ApplyGradients; its Begin fails FailedPrecondition if
  // ApplyGradients has not run by then.
  std::shared_ptr<SessionRunHook> MakeSessionRunHook(
      bool is_chief, SyncReplicasHookOptions options = SyncReplicasHookOptions());

  // Built by ApplyGradients (invalid before):
  // The chief's start-up op: sets the accumulators' global step and the
  // local step from the global step, then opens the gate.
  Operation chief_init_op() const;
  // A non-chief's start-up op: sets the local step from the global step.
  Operation local_step_init_op() const;
  // This worker's local step, read (int64; -1 until first set).
  Output local_step() const;

  int replicas_to_aggregate() const { return replicas_to_aggregate_; }
  int total_num_replicas() const { return total_num_replicas_; }

  // What ApplyGradients built, shared with the hooks (internal).
  struct Built;

 private:
  // InvalidArgument for counts or a worker index that do not fit.
  absl::Status CheckAttrs() const;

  Optimizer* const optimizer_;
  const int replicas_to_aggregate_;
  const int total_num_replicas_;
  const Attrs attrs_;
  std::shared_ptr<Built> built_;  // filled in by ApplyGradients
};

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_SYNC_REPLICAS_OPTIMIZER_H_
