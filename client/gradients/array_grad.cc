// Gradients of the array ops: Identity, Reshape, Squeeze, Transpose,
// ConcatV2, Pack and Unpack (each the other's), BroadcastTo and Pad;
// ZerosLike and OnesLike pass no gradient to their input.
#include <vector>

#include "client/gradients/broadcast_grad.h"
#include "client/gradients/grad_op_registry.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

using Grads = std::vector<Output>;

absl::Status IdentityGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(dy[0]);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Identity", IdentityGrad);
TG_REGISTER_GRADIENT("PlaceholderWithDefault", IdentityGrad);

absl::Status ReshapeGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Reshape(scope, dy[0], ops::Shape(scope, op.input(0))));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Reshape", ReshapeGrad);

absl::Status SqueezeGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Reshape(scope, dy[0], ops::Shape(scope, op.input(0))));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Squeeze", SqueezeGrad);

// The block of dy where the input sits: it starts at the `before` column of
// paddings and has the input's shape.
absl::Status PadGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  const Output paddings = op.input(1);
  auto before = ops::Reshape(scope, ops::Slice(scope, paddings, {0, 0}, {-1, 1}), {-1});
  auto size = ops::Shape(scope, op.input(0), ops::Shape::OutType(RemoveRefType(paddings.type())));
  dx->push_back(ops::Slice(scope, dy[0], before, size));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Pad", PadGrad);

absl::Status TransposeGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Transpose(scope, dy[0], ops::InvertPermutation(scope, op.input(1))));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Transpose", TransposeGrad);

// Input i's gradient is the block of dy where input i landed.
absl::Status ConcatV2Grad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  const int n = op.num_inputs() - 1;
  Output axis = op.input(n);
  if (axis.type() != DT_INT32) axis = ops::Cast(scope, axis, DT_INT32);
  std::vector<Output> shapes;
  for (int i = 0; i < n; ++i) shapes.push_back(ops::Shape(scope, op.input(i)));
  auto offsets = ops::ConcatOffset(scope, axis, shapes);
  if (static_cast<int>(offsets.offset.size()) != n) return scope.status();
  for (int i = 0; i < n; ++i) {
    dx->push_back(ops::Slice(scope, dy[0], offsets.offset[i], shapes[i]));
  }
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("ConcatV2", ConcatV2Grad);

// Input i's gradient is slice i of dy along the packing axis.
absl::Status PackGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  int64_t axis;
  TG_RETURN_IF_ERROR(op.GetAttr("axis", &axis));
  auto slices = ops::Unstack(scope, dy[0], op.num_inputs(), ops::Unstack::Axis(axis));
  if (static_cast<int>(slices.output.size()) != op.num_inputs()) return scope.status();
  for (const Output& slice : slices.output) dx->push_back(slice);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Pack", PackGrad);

// dy of every output stacked back along the axis (zeros for outputs that
// received no gradient).
absl::Status UnpackGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  int64_t axis;
  TG_RETURN_IF_ERROR(op.GetAttr("axis", &axis));
  std::vector<Output> slices;
  for (int i = 0; i < op.num_outputs(); ++i) {
    slices.push_back(dy[i].valid() ? dy[i] : ops::ZerosLike(scope, op.output(i)).y);
  }
  dx->push_back(ops::Stack(scope, slices, ops::Stack::Axis(axis)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Unpack", UnpackGrad);

absl::Status BroadcastToGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ReduceGradToShapeOf(scope, dy[0], op.input(0)));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("BroadcastTo", BroadcastToGrad);

// Their values do not depend on the input's values.
TG_REGISTER_NO_GRADIENT("ZerosLike");
TG_REGISTER_NO_GRADIENT("OnesLike");

}  // namespace
}  // namespace tensorgrid
