// Folding ops on the GPU: Sum, Mean and Max over axes (planned on the host by
// ReductionPlan, as on the CPU), ArgMax, BiasAdd and BiasAddGrad. Checks and
// messages are the CPU kernels' (kernels/math/reduction_ops.cc,
// argmax_shape.h, bias_add_shape.h). HostMemory as in
// TensorFlow: the axes (reduction_indices, dimension).
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/reduction_ops.cu.h"
#include "kernels/math/argmax_shape.h"
#include "kernels/math/bias_add_shape.h"
#include "kernels/math/reduction_plan.h"

namespace tensorgrid {
namespace gpu {
namespace {

// Row-major dimensions, each kept or reduced, as the kernel's loop.
absl::StatusOr<ReduceLoop> LoopOf(absl::Span<const math::ReductionPlan::Group> groups) {
  ReduceLoop loop;
  int64_t stride = 1;
  int kept = 0, reduced = 0;
  for (const auto& g : groups) (g.reduced ? reduced : kept)++;
  if (kept > kMaxReduceDims || reduced > kMaxReduceDims) {
    return errors::Unimplemented("a reduction over more than ", kMaxReduceDims,
                                 " separate groups of dimensions on the GPU");
  }
  loop.num_kept = kept;
  loop.num_reduced = reduced;
  // Walk from the innermost group, filling each list from its end.
  for (int i = static_cast<int>(groups.size()) - 1; i >= 0; --i) {
    const auto& g = groups[i];
    if (g.reduced) {
      --reduced;
      loop.reduced_sizes[reduced] = g.size;
      loop.reduced_strides[reduced] = stride;
      loop.reduced_count *= g.size;
    } else {
      --kept;
      loop.kept_sizes[kept] = g.size;
      loop.kept_strides[kept] = stride;
      loop.num_outputs *= g.size;
    }
    stride *= g.size;
  }
  return loop;
}

template <typename T, ReduceFn kFn>
class ReductionGpuOp final : public OpKernel {
 public:
  explicit ReductionGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("keep_dims", &keep_dims_));
    any_rank_axes_ = ctx.graph_def_version() < kFirstProducerWithVectorReductionIndices;
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(math::ReductionPlan plan, math::PlanReduction(input.shape(), ctx.input(1),
                                                                      keep_dims_, any_rank_axes_));
    bool folds = false;
    for (const math::ReductionPlan::Group& g : plan.groups) folds |= g.reduced;
    if (!folds && input.NumElements() > 0) {  // only size-1 axes: a reshape
      ctx.set_output(0, input.Reshaped(plan.output_shape));
      return absl::OkStatus();
    }
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, plan.output_shape, &output));
    ReduceLoop loop;
    if (input.NumElements() > 0) {
      TG_ASSIGN_OR_RETURN(loop, LoopOf(plan.groups));
    } else {
      loop.reduced_count = 0;  // each output folds nothing: 0, NaN (a float mean) or lowest
    }
    loop.num_outputs = output->NumElements();
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchReduce<T>(kFn, input.data<T>(), output->data<T>(), loop, gpu->stream()),
                      type_string());
  }

 private:
  bool keep_dims_ = false;
  bool any_rank_axes_ = false;  // a graph of a producer before 21
};

template <typename T, typename Tout>
class ArgMaxGpuOp final : public OpKernel {
 public:
  explicit ArgMaxGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& dimension = ctx.input(1);  // host memory
    TG_ASSIGN_OR_RETURN(const int d, math::ArgMaxAxis(input.shape(), dimension));
    const int rank = input.dims();
    TensorShape out_shape = input.shape();
    out_shape.RemoveDim(d);
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &output));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; ++i) outer *= input.dim_size(i);
    for (int i = d + 1; i < rank; ++i) inner *= input.dim_size(i);
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchArgMax<T, Tout>(input.data<T>(), output->data<Tout>(), outer, input.dim_size(d),
                              inner, gpu->multiprocessors(), gpu->stream()),
        "ArgMax");
  }
};

template <typename T>
class BiasAddGpuOp final : public OpKernel {
 public:
  explicit BiasAddGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    std::string data_format;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("data_format", &data_format));
    if (data_format == "NCHW") {
      channels_first_ = true;
    } else if (data_format != "NHWC") {
      ctx.SetStatus(errors::InvalidArgument("unknown data_format '", data_format, "'"));
    }
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    const Tensor& bias = ctx.input(1);
    TG_ASSIGN_OR_RETURN(const int channel_dim,
                        math::BiasAddChannelDim(value.shape(), bias.shape(), channels_first_));
    const int64_t channels = value.dim_size(channel_dim);
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, value.shape(), &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    const int64_t inner =
        channels_first_ ? value.NumElements() / (value.dim_size(0) * channels) : 1;
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchBiasAdd<T>(value.data<T>(), bias.data<T>(), output->data<T>(), value.NumElements(),
                         channels, inner, gpu->multiprocessors(), gpu->stream()),
        "BiasAdd");
  }

 private:
  bool channels_first_ = false;
};

// The bias gradient: out_backprop summed over every dimension but the
// channel one, a reduction of [outer, channels, inner] keeping channels.
template <typename T>
class BiasAddGradGpuOp final : public OpKernel {
 public:
  explicit BiasAddGradGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    std::string data_format;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("data_format", &data_format));
    channels_first_ = data_format == "NCHW";
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(0);
    TG_ASSIGN_OR_RETURN(const int channel_dim,
                        math::BiasAddGradChannelDim(grad.shape(), channels_first_));
    const int64_t channels = grad.dim_size(channel_dim);
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({channels}), &output));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < channel_dim; ++i) outer *= grad.dim_size(i);
    for (int i = channel_dim + 1; i < grad.dims(); ++i) inner *= grad.dim_size(i);
    const math::ReductionPlan::Group groups[] = {{outer, true}, {channels, false}, {inner, true}};
    TG_ASSIGN_OR_RETURN(ReduceLoop loop, LoopOf(groups));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchReduce<T>(ReduceFn::kSum, grad.data<T>(), output->data<T>(), loop, gpu->stream()),
        "BiasAddGrad");
  }

 private:
  bool channels_first_ = false;
};

#define TG_REGISTER_REDUCTIONS_(T)                               \
  TG_REGISTER_KERNEL(KernelDefBuilder("Sum")                     \
                         .Device(DEVICE_GPU)                     \
                         .TypeConstraint<T>("T")                 \
                         .HostMemory("reduction_indices"),       \
                     ReductionGpuOp<T, ReduceFn::kSum>);         \
  TG_REGISTER_KERNEL(KernelDefBuilder("Mean")                    \
                         .Device(DEVICE_GPU)                     \
                         .TypeConstraint<T>("T")                 \
                         .HostMemory("reduction_indices"),       \
                     ReductionGpuOp<T, ReduceFn::kMean>);        \
  TG_REGISTER_KERNEL(KernelDefBuilder("Max")                     \
                         .Device(DEVICE_GPU)                     \
                         .TypeConstraint<T>("T")                 \
                         .HostMemory("reduction_indices"),       \
                     ReductionGpuOp<T, ReduceFn::kMax>);         \
  TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")                  \
                         .Device(DEVICE_GPU)                     \
                         .TypeConstraint<T>("T")                 \
                         .TypeConstraint<int64_t>("output_type") \
                         .HostMemory("dimension"),               \
                     ArgMaxGpuOp<T, int64_t>);                   \
  TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")                  \
                         .Device(DEVICE_GPU)                     \
                         .TypeConstraint<T>("T")                 \
                         .TypeConstraint<int32_t>("output_type") \
                         .HostMemory("dimension"),               \
                     ArgMaxGpuOp<T, int32_t>)
TG_REGISTER_REDUCTIONS_(float);
TG_REGISTER_REDUCTIONS_(double);
TG_REGISTER_REDUCTIONS_(int64_t);

#define TG_REGISTER_BIAS_(T)                                                                    \
  TG_REGISTER_KERNEL(KernelDefBuilder("BiasAdd").Device(DEVICE_GPU).TypeConstraint<T>("T"),     \
                     BiasAddGpuOp<T>);                                                          \
  TG_REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(DEVICE_GPU).TypeConstraint<T>("T"), \
                     BiasAddGradGpuOp<T>)
TG_REGISTER_BIAS_(float);
TG_REGISTER_BIAS_(double);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
