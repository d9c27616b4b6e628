// The element-wise ops on the GPU: binary ops with numpy broadcasting
// (planned on the host by BinaryBroadcast, as on the CPU), Equal, unary ops,
// the gradient helpers and AddN. Same checks and messages as the CPU kernels
// (kernels/math/cwise_*.cc, relu_ops.cc, add_n_op.cc); the arithmetic is
// cwise_ops.cu.cc. Registered for the dtypes TensorFlow's GPU kernels cover
// in device memory (int32 arithmetic stays on the host, as in TensorFlow).
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/cwise_ops.cu.h"
#include "kernels/math/broadcast.h"

namespace tensorgrid {
namespace gpu {
namespace {

BroadcastLoop SameShapeLoop(int64_t n) {
  BroadcastLoop loop;
  loop.rank = 1;
  loop.dims[0] = n;
  loop.x_strides[0] = loop.y_strides[0] = 1;
  return loop;
}

absl::StatusOr<BroadcastLoop> LoopOf(const math::BinaryBroadcast& bcast) {
  const auto& dims = bcast.dims();
  if (dims.size() > static_cast<size_t>(kMaxBroadcastDims)) {
    return errors::Unimplemented("broadcasting ", dims.size(),
                                 " distinct dimensions on the GPU (at most ", kMaxBroadcastDims,
                                 "), output shape ", bcast.output_shape().DebugString());
  }
  BroadcastLoop loop;
  loop.rank = static_cast<int>(dims.size());
  for (int d = 0; d < loop.rank; ++d) {
    loop.dims[d] = dims[d];
    loop.x_strides[d] = bcast.x_strides()[d];
    loop.y_strides[d] = bcast.y_strides()[d];
  }
  return loop;
}

// Reuses x's or y's buffer when nobody else holds it and it is not
// broadcast (then z[i] reads only element i of it), as the CPU kernel does.
absl::Status ForwardOrAllocate(OpKernelContext& ctx, const TensorShape& shape, Tensor** z) {
  auto is_free = [&](int i) {
    return ctx.input(i).NumElements() == shape.num_elements() && ctx.input_ref(i) == nullptr &&
           ctx.input(i).RefCountIsOne();
  };
  return ctx.forward_input_or_allocate_output(is_free(0) || !is_free(1) ? 0 : 1, 0, shape, z);
}

template <typename T, BinaryFn kFn>
class BinaryGpuOp final : public OpKernel {
 public:
  explicit BinaryGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    TensorShape shape;
    BroadcastLoop loop;
    if (x.shape() == y.shape()) {
      shape = x.shape();
      loop = SameShapeLoop(x.NumElements());
    } else {
      TG_ASSIGN_OR_RETURN(math::BinaryBroadcast bcast,
                          math::BinaryBroadcast::Make(x.shape(), y.shape()));
      TG_ASSIGN_OR_RETURN(loop, LoopOf(bcast));
      shape = bcast.output_shape();
    }
    Tensor* z;
    TG_RETURN_IF_ERROR(ForwardOrAllocate(ctx, shape, &z));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchBinary<T>(kFn, x.data<T>(), y.data<T>(), z->data<T>(), z->NumElements(),
                                      loop, gpu->multiprocessors(), gpu->stream()),
                      type_string());
  }
};

template <typename T>
class EqualGpuOp final : public OpKernel {
 public:
  explicit EqualGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    if (HasNodeAttr(ctx.def(), "incompatible_shape_error")) {
      TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    GpuDevice* gpu = GpuDevice::From(ctx);
    TensorShape shape;
    BroadcastLoop loop;
    if (x.shape() == y.shape()) {
      shape = x.shape();
      loop = SameShapeLoop(x.NumElements());
    } else {
      absl::StatusOr<math::BinaryBroadcast> bcast =
          math::BinaryBroadcast::Make(x.shape(), y.shape());
      if (!bcast.ok()) {
        if (incompatible_shape_error_) return bcast.status();
        Tensor* z;  // incompatible shapes compare unequal
        TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape(), &z));
        return CudaStatus(LaunchFillScalar<bool>(false, z->data<bool>(), 1, gpu->multiprocessors(),
                                                 gpu->stream()),
                          "Equal");
      }
      TG_ASSIGN_OR_RETURN(loop, LoopOf(*bcast));
      shape = bcast->output_shape();
    }
    Tensor* z;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &z));
    return CudaStatus(LaunchEqual<T>(x.data<T>(), y.data<T>(), z->data<bool>(), z->NumElements(),
                                     loop, gpu->multiprocessors(), gpu->stream()),
                      "Equal");
  }

 private:
  bool incompatible_shape_error_ = true;
};

template <typename T, UnaryFn kFn>
class UnaryGpuOp final : public OpKernel {
 public:
  explicit UnaryGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, x.shape(), &y));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchUnary<T>(kFn, x.data<T>(), y->data<T>(), x.NumElements(),
                                     gpu->multiprocessors(), gpu->stream()),
                      type_string());
  }
};

// SigmoidGrad, TanhGrad, SqrtGrad: z = f(y, dy), y and dy of one shape.
template <typename T, BinaryFn kFn>
class CwiseGradGpuOp final : public OpKernel {
 public:
  explicit CwiseGradGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& y = ctx.input(0);
    const Tensor& dy = ctx.input(1);
    if (y.shape() != dy.shape()) {
      return errors::InvalidArgument(type_string(), " (node '", name(),
                                     "'): y and dy must have the same shape, got ",
                                     y.shape().DebugString(), " and ", dy.shape().DebugString());
    }
    Tensor* z;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(1, 0, y.shape(), &z));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchBinary<T>(kFn, y.data<T>(), dy.data<T>(), z->data<T>(), y.NumElements(),
                        SameShapeLoop(y.NumElements()), gpu->multiprocessors(), gpu->stream()),
        type_string());
  }
};

// ReluGrad: backprops = gradients where features > 0, else 0; Relu6Grad:
// where 0 < features < 6.
template <typename T, BinaryFn kFn>
class ReluGradGpuOp final : public OpKernel {
 public:
  explicit ReluGradGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& gradients = ctx.input(0);
    const Tensor& features = ctx.input(1);
    if (gradients.shape() != features.shape()) {
      return errors::InvalidArgument("gradients and features must have the same shape, got ",
                                     gradients.shape().DebugString(), " and ",
                                     features.shape().DebugString());
    }
    Tensor* backprops;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, gradients.shape(), &backprops));
    GpuDevice* gpu = GpuDevice::From(ctx);
    const int64_t n = gradients.NumElements();
    return CudaStatus(LaunchBinary<T>(kFn, gradients.data<T>(), features.data<T>(),
                                      backprops->data<T>(), n, SameShapeLoop(n),
                                      gpu->multiprocessors(), gpu->stream()),
                      type_string());
  }
};

// sum = inputs[0] + ... + inputs[N-1], one pass per input after the first.
template <typename T>
class AddNGpuOp final : public OpKernel {
 public:
  explicit AddNGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs();
    const TensorShape& shape = ctx.input(0).shape();
    for (int i = 1; i < n; ++i) {
      if (ctx.input(i).shape() != shape) {
        return errors::InvalidArgument(
            "AddN (node '", name(), "'): inputs must have the same shape, but input 0 is ",
            shape.DebugString(), " and input ", i, " is ", ctx.input(i).shape().DebugString());
      }
    }
    if (n == 1) {
      ctx.set_output(0, ctx.input(0));
      return absl::OkStatus();
    }
    Tensor* sum;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, shape, &sum));
    GpuDevice* gpu = GpuDevice::From(ctx);
    const int64_t elements = shape.num_elements();
    const BroadcastLoop loop = SameShapeLoop(elements);
    // sum = in0 + in1, then sum += in_i: each pass reads element i of sum
    // only to write element i, so running in place is safe.
    const T* acc = ctx.input(0).data<T>();
    for (int i = 1; i < n; ++i) {
      TG_RETURN_IF_ERROR(
          CudaStatus(LaunchBinary<T>(BinaryFn::kAdd, acc, ctx.input(i).data<T>(), sum->data<T>(),
                                     elements, loop, gpu->multiprocessors(), gpu->stream()),
                     "AddN"));
      acc = sum->data<T>();
    }
    return absl::OkStatus();
  }
};

#define TG_GPU_KERNEL_(op, T, ...) \
  TG_REGISTER_KERNEL(KernelDefBuilder(op).Device(DEVICE_GPU).TypeConstraint<T>("T"), __VA_ARGS__)

#define TG_REGISTER_ARITHMETIC_(T)                                  \
  TG_GPU_KERNEL_("Add", T, BinaryGpuOp<T, BinaryFn::kAdd>);         \
  TG_GPU_KERNEL_("AddV2", T, BinaryGpuOp<T, BinaryFn::kAdd>);       \
  TG_GPU_KERNEL_("Sub", T, BinaryGpuOp<T, BinaryFn::kSub>);         \
  TG_GPU_KERNEL_("Mul", T, BinaryGpuOp<T, BinaryFn::kMul>);         \
  TG_GPU_KERNEL_("Maximum", T, BinaryGpuOp<T, BinaryFn::kMaximum>); \
  TG_GPU_KERNEL_("Minimum", T, BinaryGpuOp<T, BinaryFn::kMinimum>); \
  TG_GPU_KERNEL_("Equal", T, EqualGpuOp<T>);                        \
  TG_GPU_KERNEL_("Neg", T, UnaryGpuOp<T, UnaryFn::kNeg>);           \
  TG_GPU_KERNEL_("Square", T, UnaryGpuOp<T, UnaryFn::kSquare>);     \
  TG_GPU_KERNEL_("AddN", T, AddNGpuOp<T>)
TG_REGISTER_ARITHMETIC_(float);
TG_REGISTER_ARITHMETIC_(double);
TG_REGISTER_ARITHMETIC_(int64_t);
TG_GPU_KERNEL_("Equal", bool, EqualGpuOp<bool>);

#define TG_REGISTER_FLOATING_(T)                                               \
  TG_GPU_KERNEL_("RealDiv", T, BinaryGpuOp<T, BinaryFn::kDiv>);                \
  TG_GPU_KERNEL_("Sqrt", T, UnaryGpuOp<T, UnaryFn::kSqrt>);                    \
  TG_GPU_KERNEL_("Rsqrt", T, UnaryGpuOp<T, UnaryFn::kRsqrt>);                  \
  TG_GPU_KERNEL_("Exp", T, UnaryGpuOp<T, UnaryFn::kExp>);                      \
  TG_GPU_KERNEL_("Log", T, UnaryGpuOp<T, UnaryFn::kLog>);                      \
  TG_GPU_KERNEL_("Tanh", T, UnaryGpuOp<T, UnaryFn::kTanh>);                    \
  TG_GPU_KERNEL_("Sigmoid", T, UnaryGpuOp<T, UnaryFn::kSigmoid>);              \
  TG_GPU_KERNEL_("Reciprocal", T, UnaryGpuOp<T, UnaryFn::kReciprocal>);        \
  TG_GPU_KERNEL_("Relu", T, UnaryGpuOp<T, UnaryFn::kRelu>);                    \
  TG_GPU_KERNEL_("ReluGrad", T, ReluGradGpuOp<T, BinaryFn::kReluGrad>);        \
  TG_GPU_KERNEL_("Relu6", T, UnaryGpuOp<T, UnaryFn::kRelu6>);                  \
  TG_GPU_KERNEL_("Relu6Grad", T, ReluGradGpuOp<T, BinaryFn::kRelu6Grad>);      \
  TG_GPU_KERNEL_("SigmoidGrad", T, CwiseGradGpuOp<T, BinaryFn::kSigmoidGrad>); \
  TG_GPU_KERNEL_("TanhGrad", T, CwiseGradGpuOp<T, BinaryFn::kTanhGrad>);       \
  TG_GPU_KERNEL_("SqrtGrad", T, CwiseGradGpuOp<T, BinaryFn::kSqrtGrad>)
TG_REGISTER_FLOATING_(float);
TG_REGISTER_FLOATING_(double);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
