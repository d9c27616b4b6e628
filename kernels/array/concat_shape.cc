#include "kernels/array/concat_shape.h"

#include "core/platform/status.h"
#include "kernels/index_values.h"

namespace tensorgrid {

namespace {

// Checks that inputs [0, n) agree in all dimensions but `axis`.
absl::Status CheckConcatShapes(const OpKernelContext& ctx, int n, int axis) {
  const TensorShape& first = ctx.input(0).shape();
  for (int i = 1; i < n; ++i) {
    const TensorShape& shape = ctx.input(i).shape();
    bool compatible = shape.dims() == first.dims();
    for (int d = 0; compatible && d < first.dims(); ++d) {
      compatible = d == axis || shape.dim_size(d) == first.dim_size(d);
    }
    if (!compatible) {
      return errors::InvalidArgument("ConcatV2 input ", i, " has shape ", shape.DebugString(),
                                     ", incompatible with input 0's shape ", first.DebugString(),
                                     " (all dimensions but axis ", axis, " must match)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConcatShape> ConcatV2Shape(const OpKernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  const Tensor& axis_tensor = ctx.input(n);
  if (axis_tensor.dims() != 0) {
    return errors::InvalidArgument("axis must be a scalar, got a tensor of shape ",
                                   axis_tensor.shape().DebugString());
  }
  const int rank = ctx.input(0).dims();
  if (rank == 0) {
    return errors::InvalidArgument("ConcatV2 cannot concatenate scalars (use Pack instead)");
  }
  int64_t axis = IndexValues(axis_tensor)[0];
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument("axis ", axis, " is out of range [", -rank, ", ", rank,
                                   ") for inputs of rank ", rank);
  }
  if (axis < 0) axis += rank;
  ConcatShape shape;
  shape.axis = static_cast<int>(axis);
  TG_RETURN_IF_ERROR(CheckConcatShapes(ctx, n, shape.axis));
  shape.output = ctx.input(0).shape();
  int64_t axis_size = 0;
  for (int i = 0; i < n; ++i) axis_size += ctx.input(i).dim_size(shape.axis);
  shape.output.set_dim(shape.axis, axis_size);
  return shape;
}

}  // namespace tensorgrid
