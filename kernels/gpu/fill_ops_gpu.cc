// Tensors made on the GPU: Const (its value copied into device memory once,
// when the kernel is built), Fill, ZerosLike, OnesLike and Cast. Checks and
// messages are the CPU kernels' (kernels/array/basic_ops.cc, fill_ops.cc,
// kernels/math/cast_op.cc). HostMemory arguments as in TensorFlow's GPU
// registrations: Fill's dims; an int32 Const's output.
#include "core/framework/device_context.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/array/array_shapes.h"
#include "kernels/gpu/cwise_ops.cu.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace gpu {
namespace {

class ConstGpuOp final : public OpKernel {
 public:
  explicit ConstGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    Tensor host;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("value", &host));
    DataType dtype;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("dtype", &dtype));
    if (host.dtype() != dtype) {
      ctx.SetStatus(errors::InvalidArgument("value is ", DataTypeString(host.dtype()),
                                            " but attr dtype is ", DataTypeString(dtype)));
      return;
    }
    // Once per kernel: every step then hands out the same device buffer.
    absl::StatusOr<Tensor> value =
        EnsureMemory(host, output_memory_type(0), ctx.device()->GetAllocator(DEVICE_MEMORY));
    TG_REQUIRES_OK_CTOR(ctx, value.status());
    value_ = *std::move(value);
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    ctx.set_output(0, value_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor value_;
};

template <typename T>
class FillGpuOp final : public OpKernel {
 public:
  explicit FillGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(1);
    TG_ASSIGN_OR_RETURN(TensorShape shape, FillShape(ctx.input(0), value));  // dims: host memory
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchFill<T>(value.data<T>(), out->data<T>(), out->NumElements(),
                                    gpu->multiprocessors(), gpu->stream()),
                      "Fill");
  }
};

// ZerosLike (kValue = 0) and OnesLike (kValue = 1): x's shape, filled.
template <typename T, int kValue>
class ConstantLikeGpuOp final : public OpKernel {
 public:
  explicit ConstantLikeGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, ctx.input(0).shape(), &out));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchFillScalar<T>(static_cast<T>(kValue), out->data<T>(), out->NumElements(),
                            gpu->multiprocessors(), gpu->stream()),
        type_string());
  }
};

template <typename Src, typename Dst>
class CastGpuOp final : public OpKernel {
 public:
  explicit CastGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("Truncate", &truncate_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if constexpr (std::is_same<Src, Dst>::value) {
      ctx.set_output(0, x);
      return absl::OkStatus();
    } else {
      Tensor* y;
      TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, x.shape(), &y));
      GpuDevice* gpu = GpuDevice::From(ctx);
      return CudaStatus(LaunchCast<Src, Dst>(x.data<Src>(), y->data<Dst>(), x.NumElements(),
                                             truncate_, gpu->multiprocessors(), gpu->stream()),
                        "Cast");
    }
  }

 private:
  bool truncate_ = false;
};

#define TG_REGISTER_CONST_(T)                                                                 \
  TG_REGISTER_KERNEL(KernelDefBuilder("Const").Device(DEVICE_GPU).TypeConstraint<T>("dtype"), \
                     ConstGpuOp)
TG_REGISTER_CONST_(float);
TG_REGISTER_CONST_(double);
TG_REGISTER_CONST_(int64_t);
TG_REGISTER_CONST_(bool);
TG_REGISTER_KERNEL(KernelDefBuilder("Const")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("dtype")
                       .HostMemory("output"),
                   ConstGpuOp);

#define TG_REGISTER_FILL_(T)                                                                  \
  TG_REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("Fill").Device(DEVICE_GPU).TypeConstraint<T>("T").HostMemory("dims"),  \
      FillGpuOp<T>);                                                                          \
  TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(DEVICE_GPU).TypeConstraint<T>("T"), \
                     ConstantLikeGpuOp<T, 0>);                                                \
  TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(DEVICE_GPU).TypeConstraint<T>("T"),  \
                     ConstantLikeGpuOp<T, 1>)
TG_REGISTER_FILL_(float);
TG_REGISTER_FILL_(double);
TG_REGISTER_FILL_(int64_t);
TG_REGISTER_FILL_(bool);

#define TG_REGISTER_CAST_(S, D)                      \
  TG_REGISTER_KERNEL(KernelDefBuilder("Cast")        \
                         .Device(DEVICE_GPU)         \
                         .TypeConstraint<S>("SrcT")  \
                         .TypeConstraint<D>("DstT"), \
                     CastGpuOp<S, D>)
#define TG_REGISTER_CAST_FROM_(S) \
  TG_REGISTER_CAST_(S, float);    \
  TG_REGISTER_CAST_(S, double);   \
  TG_REGISTER_CAST_(S, int32_t);  \
  TG_REGISTER_CAST_(S, int64_t);  \
  TG_REGISTER_CAST_(S, bool)
TG_REGISTER_CAST_FROM_(float);
TG_REGISTER_CAST_FROM_(double);
TG_REGISTER_CAST_FROM_(int32_t);
TG_REGISTER_CAST_FROM_(int64_t);
TG_REGISTER_CAST_FROM_(bool);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
