#include "kernels/math/bias_add_shape.h"

#include "core/platform/status.h"

namespace tensorgrid {
namespace math {

absl::StatusOr<int> BiasAddGradChannelDim(const TensorShape& grad, bool channels_first) {
  if (grad.dims() < 2) {
    return errors::InvalidArgument("Input tensor must be at least 2D: ", grad.DebugString());
  }
  return channels_first ? 1 : grad.dims() - 1;
}

absl::StatusOr<int> BiasAddChannelDim(const TensorShape& value, const TensorShape& bias,
                                      bool channels_first) {
  if (value.dims() < 2) {
    return errors::InvalidArgument("Input tensor must be at least 2D: ", value.DebugString());
  }
  if (bias.dims() != 1) {
    return errors::InvalidArgument("Biases must be 1D: ", bias.DebugString());
  }
  const int channel_dim = channels_first ? 1 : value.dims() - 1;
  if (bias.dim_size(0) != value.dim_size(channel_dim)) {
    return errors::InvalidArgument(
        "Must provide as many biases as the ", channels_first ? "channel" : "last",
        " dimension of the input tensor: ", bias.DebugString(), " vs. ", value.DebugString());
  }
  return channel_dim;
}

}  // namespace math
}  // namespace tensorgrid
