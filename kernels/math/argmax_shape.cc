#include "kernels/math/argmax_shape.h"

#include "core/platform/status.h"

namespace tensorgrid {
namespace math {

absl::StatusOr<int> ArgMaxAxis(const TensorShape& input, const Tensor& dimension) {
  if (dimension.dims() != 0) {
    return errors::InvalidArgument("dimension must be a scalar, got shape ",
                                   dimension.shape().DebugString());
  }
  const int64_t axis =
      dimension.dtype() == DT_INT32 ? dimension.scalar<int32_t>() : dimension.scalar<int64_t>();
  const int rank = input.dims();
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                   "), but got ", axis);
  }
  const int d = static_cast<int>(axis < 0 ? axis + rank : axis);
  if (input.dim_size(d) == 0) {
    return errors::InvalidArgument("Reduction axis ", axis, " is empty in shape ",
                                   input.DebugString());
  }
  return d;
}

}  // namespace math
}  // namespace tensorgrid
