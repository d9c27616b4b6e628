#include "kernels/array/array_shapes.h"

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

absl::StatusOr<TensorShape> FillShape(const Tensor& dims, const Tensor& value) {
  if (dims.dims() != 1) {
    return errors::InvalidArgument("dims must be a vector, got a tensor of shape ",
                                   dims.shape().DebugString());
  }
  if (value.dims() != 0) {
    return errors::InvalidArgument("value must be a scalar, got a tensor of shape ",
                                   value.shape().DebugString());
  }
  return BuildTensorShape(IndexValues(dims));
}

absl::StatusOr<TensorShape> BroadcastToShape(const Tensor& input, const Tensor& sizes) {
  if (sizes.dims() != 1) {
    return errors::InvalidArgument("shape must be a vector, got a tensor of shape ",
                                   sizes.shape().DebugString());
  }
  TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(IndexValues(sizes)));
  const int offset = shape.dims() - input.dims();
  bool compatible = offset >= 0;
  for (int d = 0; compatible && d < input.dims(); ++d) {
    compatible = input.dim_size(d) == shape.dim_size(d + offset) || input.dim_size(d) == 1;
  }
  if (!compatible) {
    return errors::InvalidArgument("Unable to broadcast tensor of shape ",
                                   input.shape().DebugString(), " to tensor of shape ",
                                   shape.DebugString());
  }
  return shape;
}

}  // namespace tensorgrid
