// BiasAddGrad: the gradient of BiasAdd with respect to its bias, i.e.
// out_backprop summed over every dimension but the channel one (the last
// for "NHWC", dimension 1 for "NCHW").
#define EIGEN_USE_THREADS

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/bias_add_shape.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
class BiasAddGradOp final : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    std::string data_format;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("data_format", &data_format));
    channels_first_ = data_format == "NCHW";
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(0);
    TG_ASSIGN_OR_RETURN(const int channel_dim,
                        BiasAddGradChannelDim(grad.shape(), channels_first_));
    const int64_t channels = grad.dim_size(channel_dim);
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({channels}), &output));
    T* out = output->data<T>();
    for (int64_t c = 0; c < channels; ++c) out[c] = T(0);
    if (grad.NumElements() == 0) return absl::OkStatus();
    // The gradient as [outer, channels, inner]; NHWC has inner == 1.
    const int64_t outer = channels_first_ ? grad.dim_size(0) : grad.NumElements() / channels;
    const int64_t inner = grad.NumElements() / (outer * channels);
    const T* in = grad.data<T>();
    Array sums(out, channels);
    for (int64_t o = 0; o < outer; ++o) {
      const T* block = in + o * channels * inner;
      if (inner == 1) {
        sums += ConstArray(block, channels);
      } else {
        for (int64_t c = 0; c < channels; ++c) out[c] += ConstArray(block + c * inner, inner).sum();
      }
    }
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  bool channels_first_ = false;
};

TG_REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   BiasAddGradOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   BiasAddGradOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   BiasAddGradOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   BiasAddGradOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
