// Accumulator ops over a ConditionalAccumulator resource
// (conditional_accumulator.h), in TensorFlow's resource-handle form:
// ResourceConditionalAccumulator creates (or finds, by container and
// shared_name) the accumulator and outputs its handle;
// ResourceAccumulatorApplyGradient, ResourceAccumulatorNumAccumulated and
// ResourceAccumulatorSetGlobalStep return at once;
// ResourceAccumulatorTakeGradient is an asynchronous kernel that waits for
// num_required gradients and fails Cancelled when its step is cancelled.
// TensorFlow's Ref(string)-handle forms (ConditionalAccumulator,
// AccumulatorApplyGradient, ...) are not registered.
//
// Two ops of this runtime's own keep gradients apart by the ticket a
// SyncReplicasGate gave them (SyncReplicasOptimizer, docs/sync_replicas.md);
// both return at once:
//   ResourceAccumulatorApplyTicketedGradient(h, local_step, ticket, gradient)
//   ResourceAccumulatorTakeTicketedGradients(h, step, tickets) -> average
#include <memory>
#include <string>
#include <utility>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/data_flow/conditional_accumulator.h"
#include "kernels/data_flow/lookup_resource.h"

namespace tensorgrid {

namespace {

constexpr char kAccumulator[] = "ConditionalAccumulator";

class AccumulatorOp final : public OpKernel {
 public:
  explicit AccumulatorOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    ResourceHandle h;
    std::string reduction;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("dtype", &dtype_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shape", &shape_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("reduction_type", &reduction));
    auto parsed = ConditionalAccumulator::ParseReduction(reduction);
    TG_REQUIRES_OK_CTOR(ctx, parsed.status());
    reduction_ = *parsed;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("container", &h.container));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shared_name", &h.name));
    if (h.name.empty()) h.name = name();  // as FIFOQueueV2 and variables
    h.device = ctx.device()->name();
    h.type_name = kAccumulator;
    handle_ = Tensor::Scalar<ResourceHandle>(h);
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const ResourceHandle& h = handle_.scalar<ResourceHandle>();
    TG_ASSIGN_OR_RETURN(
        std::shared_ptr<ConditionalAccumulator> acc,
        ctx.resource_manager()->LookupOrCreate<ConditionalAccumulator>(h.container, h.name, [&] {
          return std::make_shared<ConditionalAccumulator>(h.name, dtype_, shape_, reduction_);
        }));
    TG_RETURN_IF_ERROR(acc->MatchesRequest(dtype_, shape_, reduction_));
    ctx.set_output(0, handle_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
  ConditionalAccumulator::Reduction reduction_ = ConditionalAccumulator::Reduction::kMean;
  Tensor handle_;
};

class ApplyGradientOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto acc, LookupResource<ConditionalAccumulator>(ctx, 0, kAccumulator));
    TG_ASSIGN_OR_RETURN(int64_t local_step, ScalarInput<int64_t>(ctx, 1, "local_step"));
    return acc->ApplyGradient(local_step, ctx.input(2));
  }
};

class ApplyTicketedGradientOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto acc, LookupResource<ConditionalAccumulator>(ctx, 0, kAccumulator));
    TG_ASSIGN_OR_RETURN(int64_t local_step, ScalarInput<int64_t>(ctx, 1, "local_step"));
    TG_ASSIGN_OR_RETURN(int64_t ticket, ScalarInput<int64_t>(ctx, 2, "ticket"));
    return acc->ApplyTicketedGradient(local_step, ticket, ctx.input(3));
  }
};

class TakeTicketedGradientsOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto acc, LookupResource<ConditionalAccumulator>(ctx, 0, kAccumulator));
    TG_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "step"));
    const Tensor& tickets = ctx.input(2);
    if (tickets.dtype() != DT_INT64 || tickets.dims() != 1) {
      return errors::InvalidArgument("tickets must be an int64 vector, got ",
                                     tickets.DebugString());
    }
    if (acc->dtype() != output_type(0)) {
      return errors::InvalidArgument(kAccumulator, " '", acc->name(), "' accumulates ",
                                     DataTypeString(acc->dtype()), " gradients, not ",
                                     DataTypeString(output_type(0)));
    }
    TG_ASSIGN_OR_RETURN(
        Tensor average,
        acc->TakeTicketedGradients(
            step, absl::Span<const int64_t>(tickets.data<int64_t>(), tickets.NumElements())));
    ctx.set_output(0, std::move(average));
    return absl::OkStatus();
  }
};

class NumAccumulatedOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto acc, LookupResource<ConditionalAccumulator>(ctx, 0, kAccumulator));
    ctx.set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(acc->num_accumulated())));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class SetGlobalStepOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(auto acc, LookupResource<ConditionalAccumulator>(ctx, 0, kAccumulator));
    TG_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "new_global_step"));
    acc->SetGlobalStep(step);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class TakeGradientOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto acc = LookupResource<ConditionalAccumulator>(ctx, 0, kAccumulator);
    if (!acc.ok()) return done(acc.status());
    auto num_required = ScalarInput<int32_t>(ctx, 1, "num_required");
    if (!num_required.ok()) return done(num_required.status());
    if ((*acc)->dtype() != output_type(0)) {
      return done(errors::InvalidArgument(kAccumulator, " '", (*acc)->name(), "' accumulates ",
                                          DataTypeString((*acc)->dtype()), " gradients, not ",
                                          DataTypeString(output_type(0))));
    }
    (*acc)->TakeGradient(*num_required, ctx.cancellation(),
                         [&ctx, done = std::move(done)](absl::Status s, Tensor average) {
                           if (s.ok()) ctx.set_output(0, std::move(average));
                           done(s);
                         });
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("ResourceConditionalAccumulator").Device(DEVICE_CPU),
                   AccumulatorOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorApplyGradient").Device(DEVICE_CPU),
                   ApplyGradientOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorApplyTicketedGradient").Device(DEVICE_CPU),
                   ApplyTicketedGradientOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorTakeTicketedGradients").Device(DEVICE_CPU),
                   TakeTicketedGradientsOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorNumAccumulated").Device(DEVICE_CPU),
                   NumAccumulatedOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorSetGlobalStep").Device(DEVICE_CPU),
                   SetGlobalStepOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceAccumulatorTakeGradient")
                       .Device(DEVICE_CPU)
                       .HostMemory("num_required"),
                   TakeGradientOp);

}  // namespace tensorgrid
