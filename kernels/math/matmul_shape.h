// The shape checks MatMul's kernels share (CPU and GPU).
#ifndef TENSORGRID_KERNELS_MATH_MATMUL_SHAPE_H_
#define TENSORGRID_KERNELS_MATH_MATMUL_SHAPE_H_

#include "absl/status/statusor.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace math {

// The product's shape; InvalidArgument, as TensorFlow words it, for inputs
// that are not matrices or whose inner dimensions differ.
absl::StatusOr<TensorShape> MatMulOutputShape(const TensorShape& a, const TensorShape& b,
                                              bool transpose_a, bool transpose_b);

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_MATMUL_SHAPE_H_
