// The checks BiasAdd's and BiasAddGrad's kernels share (CPU and GPU), with
// TensorFlow's wording.
#ifndef TENSORGRID_KERNELS_MATH_BIAS_ADD_SHAPE_H_
#define TENSORGRID_KERNELS_MATH_BIAS_ADD_SHAPE_H_

#include "absl/status/statusor.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace math {

// BiasAdd: the channel dimension of `value` (1 with channels_first, else
// the last); InvalidArgument unless value is at least 2-D and bias is a
// vector of that dimension's size.
absl::StatusOr<int> BiasAddChannelDim(const TensorShape& value, const TensorShape& bias,
                                      bool channels_first);

// BiasAddGrad: the same for the incoming gradient alone.
absl::StatusOr<int> BiasAddGradChannelDim(const TensorShape& grad, bool channels_first);

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_BIAS_ADD_SHAPE_H_
