// ConditionalAccumulator: the resource behind ResourceConditionalAccumulator —
// sums gradients for one variable until a taker asks for their mean (or sum),
// dropping gradients computed against an older global step. This is how
// SyncReplicasOptimizer aggregates replicas' gradients (docs/queues.md).
//
//   auto acc = std::make_shared<ConditionalAccumulator>("g", DT_FLOAT, PartialTensorShape({2}),
//                                                       ConditionalAccumulator::Reduction::kMean);
//   acc->ApplyGradient(/*local_step=*/0, grad);          // counted
//   acc->TakeGradient(2, &cancellation, [](absl::Status s, Tensor mean) { ... });
//
// Semantics are TensorFlow's: a gradient whose local_step is below the
// accumulator's global step is dropped; a take waits until at least
// num_required gradients are in, then returns their mean (reduction MEAN) or
// sum (SUM), empties the accumulator and increments its global step;
// SetGlobalStep sets the global step (also to a smaller value). Pending takes
// are served in order, complete on the thread whose ApplyGradient made them
// possible, and fail Cancelled when their step is cancelled, leaving the
// accumulated gradients in place.
//
// SyncReplicasOptimizer keeps gradients apart instead, each under the ticket
// its SyncReplicasGate gave it, so that the chief averages exactly the
// gradients the gate counted, the same ones for every variable:
//
//   acc->ApplyTicketedGradient(/*local_step=*/0, /*ticket=*/7, grad);  // kept
//   acc->TakeTicketedGradients(/*step=*/0, {7, 9});                    // their mean
//
// A ticketed take averages the listed tickets' gradients of that step,
// drops every other ticketed gradient of that step or older (a replica that
// was admitted but whose gradient did not count, or did not arrive
// everywhere) and sets the global step to step + 1. Thread-safe.
#ifndef TENSORGRID_KERNELS_DATA_FLOW_CONDITIONAL_ACCUMULATOR_H_
#define TENSORGRID_KERNELS_DATA_FLOW_CONDITIONAL_ACCUMULATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "core/framework/cancellation.h"
#include "core/framework/resource_mgr.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

class ConditionalAccumulator final : public ResourceBase,
                                     public std::enable_shared_from_this<ConditionalAccumulator> {
 public:
  enum class Reduction { kMean, kSum };
  using TakeCallback = std::function<void(absl::Status, Tensor)>;

  // `dtype` is float, double, int32 or int64 (see IsSupported).
  ConditionalAccumulator(std::string name, DataType dtype, PartialTensorShape shape,
                         Reduction reduction);
  ~ConditionalAccumulator() override;
  static bool IsSupported(DataType dtype);
  // "MEAN" or "SUM"; InvalidArgument otherwise.
  static absl::StatusOr<Reduction> ParseReduction(const std::string& name);

  std::string TypeName() const override { return "ConditionalAccumulator"; }
  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }

  // InvalidArgument unless a node asking for an accumulator with these
  // attributes may share this one.
  absl::Status MatchesRequest(DataType dtype, const PartialTensorShape& shape,
                              Reduction reduction) const;

  // Adds `gradient`, or drops it (returning OK) when local_step is below the
  // global step. InvalidArgument naming the accumulator for a gradient of
  // another dtype, of a shape the declared one does not admit, or of another
  // shape than the gradients accumulated so far.
  absl::Status ApplyGradient(int64_t local_step, const Tensor& gradient);
  // See the top of this file. InvalidArgument if num_required < 1;
  // Cancelled if `cancellation` (may be null) fires first.
  void TakeGradient(int64_t num_required, CancellationManager* cancellation, TakeCallback done);
  // Keeps `gradient` under `ticket` for global step `local_step` (replacing
  // one kept under the same ticket), or drops it (returning OK) when
  // local_step is below the global step or ticket is negative (not counted).
  // InvalidArgument as ApplyGradient.
  absl::Status ApplyTicketedGradient(int64_t local_step, int64_t ticket, const Tensor& gradient);
  // See the top of this file; returns at once. FailedPrecondition, naming
  // the accumulator, if `step` is below the global step (taken already) or
  // a ticket has no gradient for `step` (the accumulator lost it, e.g. its
  // task restarted); InvalidArgument for no tickets or a repeated one.
  absl::StatusOr<Tensor> TakeTicketedGradients(int64_t step, absl::Span<const int64_t> tickets);
  // Also drops ticketed gradients of a step below `step`.
  void SetGlobalStep(int64_t step);

  // Gradients in: accumulated and ticketed.
  int64_t num_accumulated() const;
  int64_t global_step() const;
  // Takes waiting: for tests and diagnostics.
  int64_t num_pending_takes() const;

 private:
  struct Take;
  using Completion = std::function<void()>;

  void Cancel(int64_t id);
  void CancelLocked(int64_t id, std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Serves pending takes in order while enough gradients are in.
  void FlushLocked(std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ValidateGradientLocked(const Tensor& gradient) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops ticketed gradients of a step below `step`.
  void DropTicketedBeforeLocked(int64_t step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const DataType dtype_;
  const PartialTensorShape shape_;
  const Reduction reduction_;

  mutable absl::Mutex mu_;
  Tensor sum_ ABSL_GUARDED_BY(mu_);  // owned alone; valid when count_ > 0
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  struct Ticketed {
    int64_t step = 0;
    Tensor gradient;  // owned alone
  };
  std::map<int64_t, Ticketed> ticketed_ ABSL_GUARDED_BY(mu_);  // by ticket
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_take_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::unique_ptr<Take>> takes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_DATA_FLOW_CONDITIONAL_ACCUMULATOR_H_
