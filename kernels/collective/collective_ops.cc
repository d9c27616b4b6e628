// Collective ops, with TensorFlow's names and attrs: every member of a group
// (group_key, group_size devices) runs the same instance (instance_key).
// The kernels check their attrs and inputs, allocate the output and hand the
// work to the worker's CollectiveExecutor; they hold no thread while waiting
// for the other members. On a GPU the same kernels run with their input and
// output in host memory: the executor copies a member's tensor out of the
// GPU before and its result back in after, and the members exchange host
// memory as CPUs do (the group is still the GPUs). NCCL between GPUs is not
// used yet.
#include <string>
#include <vector>

#include "core/framework/collective.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

// The attrs every collective op has; `shape` too unless kReduce.
absl::Status ParamsFromAttrs(OpKernelConstruction& ctx, CollectiveType type,
                             CollectiveOpParams* p) {
  p->type = type;
  TG_RETURN_IF_ERROR(ctx.GetAttr("T", &p->dtype));
  TG_RETURN_IF_ERROR(ctx.GetAttr("group_size", &p->group_size));
  TG_RETURN_IF_ERROR(ctx.GetAttr("group_key", &p->group_key));
  TG_RETURN_IF_ERROR(ctx.GetAttr("instance_key", &p->instance_key));
  float timeout_seconds = 0;
  TG_RETURN_IF_ERROR(ctx.GetAttr("timeout_seconds", &timeout_seconds));
  if (p->group_size < 1) {
    return errors::InvalidArgument("group_size is ", p->group_size, "; it must be at least 1");
  }
  if (timeout_seconds < 0) {
    return errors::InvalidArgument("timeout_seconds is ", timeout_seconds,
                                   "; it must be 0 (the default, ",
                                   absl::FormatDuration(kDefaultCollectiveTimeout), ") or more");
  }
  p->timeout = timeout_seconds > 0 ? absl::Seconds(timeout_seconds) : kDefaultCollectiveTimeout;
  if (type == CollectiveType::kReduce) {
    TG_RETURN_IF_ERROR(ctx.GetAttr("merge_op", &p->merge_op));
    TG_RETURN_IF_ERROR(ctx.GetAttr("final_op", &p->final_op));
    if (p->final_op == "Div" && (p->dtype == DT_INT32 || p->dtype == DT_INT64)) {
      return errors::InvalidArgument("final_op Div (a mean) needs a floating-point T, not ",
                                     DataTypeString(p->dtype),
                                     "; reduce with final_op Id and divide yourself");
    }
    return absl::OkStatus();
  }
  PartialTensorShape shape;
  TG_RETURN_IF_ERROR(ctx.GetAttr("shape", &shape));
  if (!shape.IsFullyDefined()) {
    return errors::InvalidArgument("shape ", shape.DebugString(), " must be fully defined");
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
  auto full = BuildTensorShape(dims);
  if (!full.ok()) return full.status();
  p->shape = *full;
  if (type == CollectiveType::kGather && p->shape.dims() == 0) {
    return errors::InvalidArgument("CollectiveGather concatenates along dimension 0; shape ",
                                   p->shape.DebugString(), " is a scalar");
  }
  return absl::OkStatus();
}

// The output's shape given this member's input shape.
TensorShape OutputShape(const CollectiveOpParams& p, const TensorShape& input) {
  if (p.type != CollectiveType::kGather) return input;
  TensorShape out = input;
  out.set_dim(0, input.dim_size(0) * p.group_size);
  return out;
}

template <CollectiveType kType, bool kIsSource>
class CollectiveOp final : public AsyncOpKernel {
 public:
  explicit CollectiveOp(OpKernelConstruction& ctx) : AsyncOpKernel(ctx) {
    params_.is_source = kIsSource;
    TG_REQUIRES_OK_CTOR(ctx, ParamsFromAttrs(ctx, kType, &params_));
  }
  bool IsExpensive() const override { return false; }

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    CollectiveExecutor* collective = ctx.collective();
    if (collective == nullptr) {
      return done(errors::FailedPrecondition(
          "this step runs without a collective executor (collective ops run in a Worker)"));
    }
    CollectiveOpParams p = params_;
    Tensor input;
    if (ctx.num_inputs() > 0) {
      input = ctx.input(0);
      if (p.type == CollectiveType::kReduce) {
        p.shape = input.shape();
      } else if (input.shape() != p.shape) {
        return done(errors::InvalidArgument("input has shape ", input.shape().DebugString(),
                                            " but the shape attr says ", p.shape.DebugString()));
      }
    }
    Tensor* output = nullptr;
    absl::Status s = ctx.allocate_output(0, OutputShape(p, p.shape), &output);
    if (!s.ok()) return done(s);
    collective->ExecuteAsync(p, ctx.device(), input, *output, ctx.cancellation(), std::move(done));
  }

 private:
  CollectiveOpParams params_;
};

}  // namespace

using Reduce = CollectiveOp<CollectiveType::kReduce, false>;
using BcastSend = CollectiveOp<CollectiveType::kBroadcast, true>;
using BcastRecv = CollectiveOp<CollectiveType::kBroadcast, false>;
using Gather = CollectiveOp<CollectiveType::kGather, false>;

TG_REGISTER_KERNEL(KernelDefBuilder("CollectiveReduce").Device(DEVICE_CPU), Reduce);
TG_REGISTER_KERNEL(KernelDefBuilder("CollectiveBcastSend").Device(DEVICE_CPU), BcastSend);
TG_REGISTER_KERNEL(KernelDefBuilder("CollectiveBcastRecv").Device(DEVICE_CPU), BcastRecv);
TG_REGISTER_KERNEL(KernelDefBuilder("CollectiveGather").Device(DEVICE_CPU), Gather);

TG_REGISTER_KERNEL(
    KernelDefBuilder("CollectiveReduce").Device(DEVICE_GPU).HostMemory("input").HostMemory("data"),
    Reduce);
TG_REGISTER_KERNEL(KernelDefBuilder("CollectiveBcastSend")
                       .Device(DEVICE_GPU)
                       .HostMemory("input")
                       .HostMemory("data"),
                   BcastSend);
TG_REGISTER_KERNEL(KernelDefBuilder("CollectiveBcastRecv").Device(DEVICE_GPU).HostMemory("data"),
                   BcastRecv);
TG_REGISTER_KERNEL(
    KernelDefBuilder("CollectiveGather").Device(DEVICE_GPU).HostMemory("input").HostMemory("data"),
    Gather);

}  // namespace tensorgrid
