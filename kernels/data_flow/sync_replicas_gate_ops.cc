// Ops over a SyncReplicasGate resource (sync_replicas_gate.h), which
// SyncReplicasOptimizer places beside the global step (docs/sync_replicas.md).
// TensorFlow has no such ops; they are this runtime's own.
//
//   SyncReplicasGate                   creates (or finds, by container and
//                                      shared_name) the gate; outputs its handle
//   SyncReplicasGateAdmit(h, replica, local_step) -> (step, ticket)
//                                      the local step to apply a replica's
//                                      gradients with and their ticket: the
//                                      gate's step if they may count, -1 (and
//                                      ticket -1) if not; waits until the gate opens
//   SyncReplicasGateCommit(h, ticket) -> step
//                                      the ticket's gradients are in every
//                                      accumulator: they count (the step) or
//                                      not (-1; also on a closed gate)
//   SyncReplicasGateTake(h) -> step    waits until the step is full, completes it
//   SyncReplicasGateTaken(h) -> (step, tickets)
//                                      the step the last take completed and the
//                                      tickets it counted
//   SyncReplicasGateAwait(h, local_step) -> step
//                                      waits until a global step after
//                                      local_step is released; that step
//   SyncReplicasGateRelease(h, step)   the chief's update made the global step `step`
//   SyncReplicasGateOpen(h, step) -> epoch
//                                      opens the gate at `step` (and releases it)
//   SyncReplicasGateClose(h, code, message, epoch) -> closed
//                                      fails admissions, takes and awaits with
//                                      that status; commits count nothing;
//                                      ignored (false) for an earlier epoch
//   SyncReplicasGateState(h) -> (step, committed, replicas, uncommitted_replicas, awaiting)
//
// Admit, Take and Await are asynchronous kernels: they wait without holding a thread
// and fail Cancelled when their step is cancelled.
//
// A worker's local step (the global step its last token carried) lives in a
// SyncReplicasLocalStep resource on the worker, not in a variable: it reads
// -1 until first set (a gradient admitted with it is stale, not an error),
// and neither a Saver nor ReportUninitializedVariables sees it.
//
//   SyncReplicasLocalStep              creates (or finds) it; outputs its handle
//   SyncReplicasLocalStepRead(h) -> step
//   SyncReplicasLocalStepAssign(h, step)
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/data_flow/lookup_resource.h"
#include "kernels/data_flow/sync_replicas_gate.h"

namespace tensorgrid {

namespace {

constexpr char kGate[] = "SyncReplicasGate";
constexpr char kLocalStep[] = "SyncReplicasLocalStep";

// One int64, -1 until set.
class LocalStep final : public ResourceBase {
 public:
  std::string TypeName() const override { return kLocalStep; }
  int64_t Get() const { return step_.load(std::memory_order_acquire); }
  void Set(int64_t step) { step_.store(step, std::memory_order_release); }

 private:
  std::atomic<int64_t> step_{-1};
};

class GateOp final : public OpKernel {
 public:
  explicit GateOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    ResourceHandle h;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("replicas_to_aggregate", &replicas_to_aggregate_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("one_per_replica", &one_per_replica_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("container", &h.container));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shared_name", &h.name));
    if (h.name.empty()) h.name = name();  // as queues and accumulators
    h.device = ctx.device()->name();
    h.type_name = kGate;
    handle_ = Tensor::Scalar<ResourceHandle>(h);
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const ResourceHandle& h = handle_.scalar<ResourceHandle>();
    TG_ASSIGN_OR_RETURN(
        std::shared_ptr<SyncReplicasGate> gate,
        ctx.resource_manager()->LookupOrCreate<SyncReplicasGate>(h.container, h.name, [&] {
          return std::make_shared<SyncReplicasGate>(h.name, replicas_to_aggregate_,
                                                    one_per_replica_);
        }));
    TG_RETURN_IF_ERROR(gate->MatchesRequest(replicas_to_aggregate_, one_per_replica_));
    ctx.set_output(0, handle_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  int64_t replicas_to_aggregate_ = 1;
  bool one_per_replica_ = false;
  Tensor handle_;
};

// A callback that sets output 0 to the step and finishes the kernel.
SyncReplicasGate::StepCallback SetStep(OpKernelContext& ctx, AsyncOpKernel::DoneCallback done) {
  return [&ctx, done = std::move(done)](absl::Status s, int64_t step) {
    if (s.ok()) ctx.set_output(0, Tensor::Scalar<int64_t>(step));
    done(s);
  };
}

// An int32 vector of `values`.
Tensor Int32Vector(const std::vector<int64_t>& values) {
  std::vector<int32_t> v(values.begin(), values.end());
  return Tensor::FromVector<int32_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

class AdmitOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto gate = LookupResource<SyncReplicasGate>(ctx, 0, kGate);
    if (!gate.ok()) return done(gate.status());
    auto replica = ScalarInput<int32_t>(ctx, 1, "replica");
    if (!replica.ok()) return done(replica.status());
    auto local_step = ScalarInput<int64_t>(ctx, 2, "local_step");
    if (!local_step.ok()) return done(local_step.status());
    (*gate)->Admit(
        *replica, *local_step, ctx.cancellation(),
        [&ctx, done = std::move(done)](absl::Status s, SyncReplicasGate::Admission admission) {
          if (s.ok()) {
            ctx.set_output(0, Tensor::Scalar<int64_t>(admission.step));
            ctx.set_output(1, Tensor::Scalar<int64_t>(admission.ticket));
          }
          done(s);
        });
  }
  bool IsExpensive() const override { return false; }
};

class CommitOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto gate, LookupResource<SyncReplicasGate>(ctx, 0, kGate));
    TG_ASSIGN_OR_RETURN(int64_t ticket, ScalarInput<int64_t>(ctx, 1, "ticket"));
    ctx.set_output(0, Tensor::Scalar<int64_t>(gate->Commit(ticket)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class TakenOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto gate, LookupResource<SyncReplicasGate>(ctx, 0, kGate));
    const SyncReplicasGate::Taken taken = gate->taken();
    ctx.set_output(0, Tensor::Scalar<int64_t>(taken.step));
    ctx.set_output(
        1, Tensor::FromVector<int64_t>(taken.tickets,
                                       TensorShape({static_cast<int64_t>(taken.tickets.size())})));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class TakeOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto gate = LookupResource<SyncReplicasGate>(ctx, 0, kGate);
    if (!gate.ok()) return done(gate.status());
    (*gate)->Take(ctx.cancellation(), SetStep(ctx, std::move(done)));
  }
  bool IsExpensive() const override { return false; }
};

class AwaitOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto gate = LookupResource<SyncReplicasGate>(ctx, 0, kGate);
    if (!gate.ok()) return done(gate.status());
    auto local_step = ScalarInput<int64_t>(ctx, 1, "local_step");
    if (!local_step.ok()) return done(local_step.status());
    (*gate)->Await(*local_step, ctx.cancellation(), SetStep(ctx, std::move(done)));
  }
  bool IsExpensive() const override { return false; }
};

class OpenOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto gate, LookupResource<SyncReplicasGate>(ctx, 0, kGate));
    TG_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "step"));
    ctx.set_output(0, Tensor::Scalar<int64_t>(gate->Open(step)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ReleaseOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto gate, LookupResource<SyncReplicasGate>(ctx, 0, kGate));
    TG_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "step"));
    gate->Release(step);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class CloseOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto gate, LookupResource<SyncReplicasGate>(ctx, 0, kGate));
    TG_ASSIGN_OR_RETURN(int32_t code, ScalarInput<int32_t>(ctx, 1, "code"));
    TG_ASSIGN_OR_RETURN(std::string message, ScalarInput<std::string>(ctx, 2, "message"));
    TG_ASSIGN_OR_RETURN(int64_t epoch, ScalarInput<int64_t>(ctx, 3, "epoch"));
    // absl's codes run from 1 (Cancelled) to 16 (Unauthenticated); 0 is OK.
    if (code < 1 || code > 16) {
      return errors::InvalidArgument("closing SyncReplicasGate '", gate->name(),
                                     "' needs an error code from 1 to 16, got ", code);
    }
    ctx.set_output(0, Tensor::Scalar<bool>(gate->Close(
                          absl::Status(static_cast<absl::StatusCode>(code), message), epoch)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class StateOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto gate, LookupResource<SyncReplicasGate>(ctx, 0, kGate));
    const SyncReplicasGate::State state = gate->state();
    ctx.set_output(0, Tensor::Scalar<int64_t>(state.step));
    ctx.set_output(1, Tensor::Scalar<int32_t>(static_cast<int32_t>(state.committed)));
    ctx.set_output(2, Int32Vector(state.replicas));
    ctx.set_output(3, Int32Vector(state.uncommitted_replicas));
    ctx.set_output(4, Tensor::Scalar<int32_t>(static_cast<int32_t>(state.pending_awaits)));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class LocalStepOp final : public OpKernel {
 public:
  explicit LocalStepOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    ResourceHandle h;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("container", &h.container));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shared_name", &h.name));
    if (h.name.empty()) h.name = name();
    h.device = ctx.device()->name();
    h.type_name = kLocalStep;
    handle_ = Tensor::Scalar<ResourceHandle>(h);
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const ResourceHandle& h = handle_.scalar<ResourceHandle>();
    TG_RETURN_IF_ERROR(ctx.resource_manager()
                           ->LookupOrCreate<LocalStep>(h.container, h.name,
                                                       [] { return std::make_shared<LocalStep>(); })
                           .status());
    ctx.set_output(0, handle_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor handle_;
};

class LocalStepReadOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto step, LookupResource<LocalStep>(ctx, 0, kLocalStep));
    ctx.set_output(0, Tensor::Scalar<int64_t>(step->Get()));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class LocalStepAssignOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto step, LookupResource<LocalStep>(ctx, 0, kLocalStep));
    TG_ASSIGN_OR_RETURN(int64_t value, ScalarInput<int64_t>(ctx, 1, "step"));
    step->Set(value);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGate").Device(DEVICE_CPU), GateOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateAdmit").Device(DEVICE_CPU), AdmitOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateCommit").Device(DEVICE_CPU), CommitOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateTake").Device(DEVICE_CPU), TakeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateTaken").Device(DEVICE_CPU), TakenOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateAwait").Device(DEVICE_CPU), AwaitOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateRelease").Device(DEVICE_CPU), ReleaseOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateOpen").Device(DEVICE_CPU), OpenOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateClose").Device(DEVICE_CPU), CloseOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasGateState").Device(DEVICE_CPU), StateOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasLocalStep").Device(DEVICE_CPU), LocalStepOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasLocalStepRead").Device(DEVICE_CPU),
                   LocalStepReadOp);
TG_REGISTER_KERNEL(KernelDefBuilder("SyncReplicasLocalStepAssign").Device(DEVICE_CPU),
                   LocalStepAssignOp);

}  // namespace tensorgrid
