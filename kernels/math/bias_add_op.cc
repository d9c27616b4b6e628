// BiasAdd: output = value + bias along the channel dimension, which is the
// last one ("NHWC", the default) or dimension 1 ("NCHW").
#define EIGEN_USE_THREADS

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/bias_add_shape.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
class BiasAddOp final : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
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
                        BiasAddChannelDim(value.shape(), bias.shape(), channels_first_));
    const int64_t channels = value.dim_size(channel_dim);
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, value.shape(), &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    const T* in = value.data<T>();
    const T* b = bias.data<T>();
    T* out = output->data<T>();
    if (channels_first_) {
      // Rows of the spatial dimensions, one per (batch, channel) pair.
      const int64_t inner = value.NumElements() / (value.dim_size(0) * channels);
      ParallelFor(ctx, value.dim_size(0) * channels, inner,
                  ElementCost<T, T>(1, 1) * static_cast<double>(inner),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t row = begin; row < end; ++row) {
                      Array(out + row * inner, inner) =
                          ConstArray(in + row * inner, inner) + b[row % channels];
                    }
                  });
    } else {
      ParallelFor(ctx, value.NumElements() / channels, channels,
                  ElementCost<T, T>(2, 1) * static_cast<double>(channels),
                  [&](int64_t begin, int64_t end) {
                    const ConstArray bias_row(b, channels);
                    for (int64_t row = begin; row < end; ++row) {
                      Array(out + row * channels, channels) =
                          ConstArray(in + row * channels, channels) + bias_row;
                    }
                  });
    }
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  bool channels_first_ = false;
};

TG_REGISTER_KERNEL(KernelDefBuilder("BiasAdd").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   BiasAddOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("BiasAdd").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   BiasAddOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("BiasAdd").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   BiasAddOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("BiasAdd").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   BiasAddOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
