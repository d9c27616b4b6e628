// FusedBatchNormV3 and FusedBatchNormGradV3 on the GPU (float), with the CPU
// kernels' semantics (kernels/nn/batch_norm_ops.cc): in training, y is
// normalized with the batch's mean and biased variance, which go out as
// reserve_space_1 and _2, and batch_mean / batch_variance are TensorFlow's
// moving statistics; in inference, `mean` and `variance` are used and passed
// through. The CUDA kernels are in batch_norm.cu.cc.
#include <limits>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/batch_norm.cu.h"
#include "kernels/gpu/cwise_ops.cu.h"
#include "kernels/nn/batch_norm_args.h"

namespace tensorgrid {
namespace gpu {
namespace {

using nn::BatchNormAttrs;

ChannelLayout LayoutOf(const std::array<int64_t, 4>& nchw, DataFormat format) {
  const int64_t n = nchw[0], c = nchw[1], hw = nchw[2] * nchw[3];
  return format == DataFormat::kNHWC ? ChannelLayout{n * hw, c, 1} : ChannelLayout{n, c, hw};
}

// Scratch for the per-channel double sums.
absl::StatusOr<Tensor> Sums(OpKernelContext& ctx, int64_t channels) {
  return Tensor::Allocate(ctx.device()->GetAllocator(DEVICE_MEMORY), DT_DOUBLE,
                          TensorShape({2 * channels}));
}

absl::Status Copy(GpuDevice* gpu, const Tensor& from, Tensor* to) {
  return CudaStatus(cudaMemcpyAsync(to->raw_data(), from.raw_data(), from.TotalBytes(),
                                    cudaMemcpyDeviceToDevice, gpu->stream()),
                    "copying batch norm statistics");
}

class FusedBatchNormGpuOp final : public OpKernel {
 public:
  explicit FusedBatchNormGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, nn::ReadBatchNormAttrs(ctx, &attrs_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    TG_ASSIGN_OR_RETURN(const auto dims, nn::NchwOf(x, "x", attrs_.format));
    const int64_t c = dims[1];
    TG_RETURN_IF_ERROR(nn::CheckBatchNormInputs(ctx, attrs_, c));
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, x.shape(), &y));
    std::array<Tensor*, 4> stats;  // batch_mean, batch_variance, reserve_space_1, _2
    for (int i = 0; i < 4; ++i) TG_RETURN_IF_ERROR(ctx.allocate_output(i + 1, {c}, &stats[i]));
    Tensor* reserve3;
    TG_RETURN_IF_ERROR(ctx.allocate_output(5, {0}, &reserve3));
    if (c == 0) return absl::OkStatus();
    GpuDevice* gpu = GpuDevice::From(ctx);
    const ChannelLayout l = LayoutOf(dims, attrs_.format);
    if (!attrs_.is_training) {
      for (int i = 0; i < 4; ++i)
        TG_RETURN_IF_ERROR(Copy(gpu, ctx.input(i % 2 == 0 ? 3 : 4), stats[i]));
      return CudaStatus(LaunchBatchNormalize(
                            x.data<float>(), ctx.input(1).data<float>(), ctx.input(2).data<float>(),
                            stats[2]->data<float>(), stats[3]->data<float>(), attrs_.epsilon, l,
                            y->data<float>(), gpu->multiprocessors(), gpu->stream()),
                        "FusedBatchNormV3");
    }
    if (x.NumElements() == 0) {  // no examples: TensorFlow's statistics are NaN
      for (Tensor* t : stats) {
        TG_RETURN_IF_ERROR(
            CudaStatus(LaunchFillScalar(std::numeric_limits<float>::quiet_NaN(), t->data<float>(),
                                        c, gpu->multiprocessors(), gpu->stream()),
                       "FusedBatchNormV3"));
      }
      return absl::OkStatus();
    }
    TG_ASSIGN_OR_RETURN(Tensor sums, Sums(ctx, c));
    float* mean = stats[2]->data<float>();
    float* variance = stats[3]->data<float>();
    TG_RETURN_IF_ERROR(
        CudaStatus(LaunchBatchMoments(x.data<float>(), l, sums.data<double>(), mean, variance,
                                      gpu->multiprocessors(), gpu->stream()),
                   "FusedBatchNormV3's batch statistics"));
    TG_RETURN_IF_ERROR(
        CudaStatus(LaunchBatchNormalize(x.data<float>(), ctx.input(1).data<float>(),
                                        ctx.input(2).data<float>(), mean, variance, attrs_.epsilon,
                                        l, y->data<float>(), gpu->multiprocessors(), gpu->stream()),
                   "FusedBatchNormV3"));
    const bool blend = attrs_.exponential_avg_factor != 1.f;
    return CudaStatus(
        LaunchMovingStats(mean, variance, blend ? ctx.input(3).data<float>() : nullptr,
                          blend ? ctx.input(4).data<float>() : nullptr,
                          attrs_.exponential_avg_factor, l.per_channel(), c,
                          stats[0]->data<float>(), stats[1]->data<float>(), gpu->stream()),
        "FusedBatchNormV3's moving statistics");
  }

 private:
  BatchNormAttrs attrs_;
};

class FusedBatchNormGradGpuOp final : public OpKernel {
 public:
  explicit FusedBatchNormGradGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, nn::ReadBatchNormAttrs(ctx, &attrs_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& dy = ctx.input(0);
    const Tensor& x = ctx.input(1);
    TG_ASSIGN_OR_RETURN(const auto dims, nn::NchwOf(x, "x", attrs_.format));
    const int64_t c = dims[1];
    TG_RETURN_IF_ERROR(nn::CheckBatchNormGradInputs(ctx, c));
    Tensor *dx, *dscale, *doffset, *unused;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, x.shape(), &dx));
    TG_RETURN_IF_ERROR(ctx.allocate_output(1, {c}, &dscale));
    TG_RETURN_IF_ERROR(ctx.allocate_output(2, {c}, &doffset));
    TG_RETURN_IF_ERROR(ctx.allocate_output(3, {0}, &unused));
    TG_RETURN_IF_ERROR(ctx.allocate_output(4, {0}, &unused));
    if (c == 0) return absl::OkStatus();
    GpuDevice* gpu = GpuDevice::From(ctx);
    TG_ASSIGN_OR_RETURN(Tensor sums, Sums(ctx, c));
    // With no examples the sums are 0, and so are dscale and doffset.
    return CudaStatus(
        LaunchBatchNormGrad(dy.data<float>(), x.data<float>(), ctx.input(2).data<float>(),
                            ctx.input(3).data<float>(), ctx.input(4).data<float>(), attrs_.epsilon,
                            attrs_.is_training, LayoutOf(dims, attrs_.format), sums.data<double>(),
                            dx->data<float>(), dscale->data<float>(), doffset->data<float>(),
                            gpu->multiprocessors(), gpu->stream()),
        "FusedBatchNormGradV3");
  }

 private:
  BatchNormAttrs attrs_;
};

TG_REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormV3")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .TypeConstraint<float>("U"),
                   FusedBatchNormGpuOp);
TG_REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormGradV3")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .TypeConstraint<float>("U"),
                   FusedBatchNormGradGpuOp);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
