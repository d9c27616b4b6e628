// Equal: element-wise x == y with numpy broadcasting, producing bool.
#define EIGEN_USE_THREADS

#include "core/framework/shape_inference.h"
#include "kernels/math/cwise_binary_op.h"

namespace tensorgrid {
namespace math {
namespace {

// BroadcastBinary; but with incompatible_shape_error = false, shapes that do
// not broadcast give a scalar, so the output is known only when both inputs
// are.
absl::Status EqualShape(ShapeInferenceContext& c) {
  bool incompatible_shape_error = true;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "incompatible_shape_error", &incompatible_shape_error));
  if (incompatible_shape_error) return shape_fns::BroadcastBinary(c);
  if (!c.input(0).IsFullyDefined() || !c.input(1).IsFullyDefined()) return absl::OkStatus();
  if (!shape_fns::BroadcastBinary(c).ok()) return shape_fns::ScalarShape(c);
  return absl::OkStatus();
}

TG_REGISTER_OP("Equal")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, bool, "
        "string}")
    .Attr("incompatible_shape_error: bool = true")
    .SetShapeFn(EqualShape);

template <typename T>
using EqualOp = BinaryOp<T, Eigen::internal::scalar_cmp_op<T, T, Eigen::internal::cmp_EQ>>;

TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   EqualOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   EqualOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   EqualOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   EqualOp<int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   EqualOp<bool>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
