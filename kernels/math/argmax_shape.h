// The checks ArgMax's kernels share (CPU and GPU), with TensorFlow's wording.
#ifndef TENSORGRID_KERNELS_MATH_ARGMAX_SHAPE_H_
#define TENSORGRID_KERNELS_MATH_ARGMAX_SHAPE_H_

#include "absl/status/statusor.h"
#include "core/framework/tensor.h"

namespace tensorgrid {
namespace math {

// The axis (in [0, rank)) that `dimension` (a host int32 or int64 scalar,
// negative counting from the end) names in `input`; InvalidArgument when it
// is not a scalar, out of range, or names an empty dimension.
absl::StatusOr<int> ArgMaxAxis(const TensorShape& input, const Tensor& dimension);

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_ARGMAX_SHAPE_H_
