// MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad on the GPU (float), with the
// CPU kernels' checks (kernels/nn/pool_args.h) and semantics; the CUDA
// kernels are in pooling.cu.cc. AvgPoolGrad's orig_input_shape stays in host
// memory.
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/pooling.cu.h"
#include "kernels/nn/pool_args.h"

namespace tensorgrid {
namespace gpu {
namespace {

using nn::PoolKernel;

PoolShape ShapeOf(const Pool2DGeometry& g) {
  PoolShape s;
  s.nhwc = g.format == DataFormat::kNHWC;
  s.batch = g.batch;
  s.channels = g.channels;
  s.in_rows = g.rows.input;
  s.in_cols = g.cols.input;
  s.out_rows = g.rows.output;
  s.out_cols = g.cols.output;
  s.window_rows = g.rows.window;
  s.window_cols = g.cols.window;
  s.stride_rows = g.rows.stride;
  s.stride_cols = g.cols.stride;
  s.pad_top = g.rows.pad_before;
  s.pad_left = g.cols.pad_before;
  return s;
}

template <PoolKind kKind>
class PoolGpuOp final : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(Pool2DGeometry g, nn::PoolGeometryOf(attrs_, input.shape(), "input"));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, nn::PooledShape(g), &output));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchPool(kKind, ShapeOf(g), input.data<float>(), output->data<float>(),
                                 gpu->multiprocessors(), gpu->stream()),
                      type_string());
  }
};

class MaxPoolGradGpuOp final : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& grad = ctx.input(2);
    TG_ASSIGN_OR_RETURN(Pool2DGeometry g, nn::PoolGeometryOf(attrs_, input.shape(), "orig_input"));
    TG_RETURN_IF_ERROR(nn::CheckPooledShape(ctx.input(1), "orig_output", g, input.shape()));
    TG_RETURN_IF_ERROR(nn::CheckPooledShape(grad, "grad", g, input.shape()));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, input.shape(), &output));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchMaxPoolGrad(ShapeOf(g), input.data<float>(), grad.data<float>(),
                          output->data<float>(), gpu->multiprocessors(), gpu->stream()),
        "MaxPoolGrad");
  }
};

class AvgPoolGradGpuOp final : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(1);
    TG_ASSIGN_OR_RETURN(const TensorShape shape, nn::OrigInputShape(ctx.input(0)));
    TG_ASSIGN_OR_RETURN(Pool2DGeometry g, nn::PoolGeometryOf(attrs_, shape, "orig_input_shape"));
    TG_RETURN_IF_ERROR(nn::CheckPooledShape(grad, "grad", g, shape));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &output));
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(LaunchAvgPoolGrad(ShapeOf(g), grad.data<float>(), output->data<float>(),
                                        gpu->multiprocessors(), gpu->stream()),
                      "AvgPoolGrad");
  }
};

TG_REGISTER_KERNEL(KernelDefBuilder("MaxPool").Device(DEVICE_GPU).TypeConstraint<float>("T"),
                   PoolGpuOp<PoolKind::kMax>);
TG_REGISTER_KERNEL(KernelDefBuilder("AvgPool").Device(DEVICE_GPU).TypeConstraint<float>("T"),
                   PoolGpuOp<PoolKind::kAvg>);
TG_REGISTER_KERNEL(KernelDefBuilder("MaxPoolGrad").Device(DEVICE_GPU).TypeConstraint<float>("T"),
                   MaxPoolGradGpuOp);
TG_REGISTER_KERNEL(KernelDefBuilder("AvgPoolGrad")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("orig_input_shape"),
                   AvgPoolGradGpuOp);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
