// Gradients of the math ops: element-wise unary and binary (broadcasting)
// arithmetic, MatMul, the Sum and Mean reductions, Cast and AddN.
#include <vector>

#include "client/gradients/broadcast_grad.h"
#include "client/gradients/grad_op_registry.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

using Grads = std::vector<Output>;

DataType ValueType(const Output& o) { return RemoveRefType(o.type()); }

absl::Status NegGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Neg(scope, dy[0]));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Neg", NegGrad);

// d(x^2) = 2x dy
absl::Status SquareGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  auto two = ops::Cast(scope, 2.0, ValueType(op.input(0)));
  dx->push_back(ops::Mul(scope, dy[0], ops::Mul(scope, two, op.input(0))));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Square", SquareGrad);

absl::Status SqrtGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::SqrtGrad(scope, op.output(0), dy[0]));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Sqrt", SqrtGrad);

// d(e^x) = e^x dy, the op's own output.
absl::Status ExpGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Mul(scope, dy[0], op.output(0)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Exp", ExpGrad);

absl::Status LogGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Mul(scope, dy[0], ops::Reciprocal(scope, op.input(0))));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Log", LogGrad);

absl::Status TanhGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::TanhGrad(scope, op.output(0), dy[0]));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Tanh", TanhGrad);

absl::Status SigmoidGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::SigmoidGrad(scope, op.output(0), dy[0]));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Sigmoid", SigmoidGrad);

absl::Status AddGrad(const Scope& scope, const ForwardOp& op, const Grads& dz, Grads* dxy) {
  AppendBinaryGrads(scope, op.input(0), op.input(1), dz[0], dz[0], dxy);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Add", AddGrad);
TG_REGISTER_GRADIENT("AddV2", AddGrad);

absl::Status SubGrad(const Scope& scope, const ForwardOp& op, const Grads& dz, Grads* dxy) {
  AppendBinaryGrads(scope, op.input(0), op.input(1), dz[0], ops::Neg(scope, dz[0]), dxy);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Sub", SubGrad);

absl::Status MulGrad(const Scope& scope, const ForwardOp& op, const Grads& dz, Grads* dxy) {
  const Output& x = op.input(0);
  const Output& y = op.input(1);
  AppendBinaryGrads(scope, x, y, ops::Mul(scope, dz[0], y), ops::Mul(scope, x, dz[0]), dxy);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Mul", MulGrad);

// z = x / y: dx = dz / y, dy = dz * (-x / y^2).
absl::Status RealDivGrad(const Scope& scope, const ForwardOp& op, const Grads& dz, Grads* dxy) {
  const Output& x = op.input(0);
  const Output& y = op.input(1);
  auto gy =
      ops::Mul(scope, dz[0], ops::RealDiv(scope, ops::RealDiv(scope, ops::Neg(scope, x), y), y));
  AppendBinaryGrads(scope, x, y, ops::RealDiv(scope, dz[0], y), gy, dxy);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("RealDiv", RealDivGrad);

// product = op(a) op(b): each input's gradient is a product of dz with the
// other input, transposed as the forward op's transposes require.
absl::Status MatMulGrad(const Scope& scope, const ForwardOp& op, const Grads& dz, Grads* dab) {
  bool ta = false, tb = false;
  TG_RETURN_IF_ERROR(op.GetAttr("transpose_a", &ta));
  TG_RETURN_IF_ERROR(op.GetAttr("transpose_b", &tb));
  const Output& a = op.input(0);
  const Output& b = op.input(1);
  const Output& g = dz[0];
  auto matmul = [&](const Output& l, const Output& r, bool tl, bool tr) -> Output {
    return ops::MatMul(scope, l, r, ops::MatMul::TransposeA(tl).TransposeB(tr));
  };
  if (!ta && !tb) {
    dab->push_back(matmul(g, b, false, true));
    dab->push_back(matmul(a, g, true, false));
  } else if (!ta && tb) {
    dab->push_back(matmul(g, b, false, false));
    dab->push_back(matmul(g, a, true, false));
  } else if (ta && !tb) {
    dab->push_back(matmul(b, g, false, true));
    dab->push_back(matmul(a, g, false, false));
  } else {
    dab->push_back(matmul(b, g, true, true));
    dab->push_back(matmul(g, a, true, true));
  }
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("MatMul", MatMulGrad);

// The input's shape with the reduced axes set to 1: what Sum's output would
// be with keep_dims. [2,3,5,7] reduced over [1,-2] gives [2,1,1,7].
Output KeptDimsShape(const Scope& scope, const Output& input_shape, Output axes) {
  if (axes.type() != DT_INT32) axes = ops::Cast(scope, axes, DT_INT32);
  auto rank = ops::Size(scope, input_shape);
  auto normalized = ops::FloorMod(scope, axes, rank);
  return ops::DynamicStitch(scope, {ops::Range(scope, 0, rank, 1).output, normalized.z},
                            {input_shape, ops::OnesLike(scope, normalized).y});
}

// Every input element of a reduced group gets its group's gradient.
Output SumGradient(const Scope& scope, const ForwardOp& op, const Output& dy) {
  auto input_shape = ops::Shape(scope, op.input(0));
  auto kept = KeptDimsShape(scope, input_shape, op.input(1));
  return ops::BroadcastTo(scope, ops::Reshape(scope, dy, kept), input_shape);
}

absl::Status SumGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(SumGradient(scope, op, dy[0]));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Sum", SumGrad);

// Sum's gradient divided by the group size, input size / output size.
absl::Status MeanGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  const DataType t = ValueType(op.input(0));
  auto input_size = ops::Cast(scope, ops::Size(scope, op.input(0)), t);
  auto output_size = ops::Cast(scope, ops::Maximum(scope, ops::Size(scope, op.output(0)), 1), t);
  auto group = ops::RealDiv(scope, input_size, output_size);
  dx->push_back(ops::RealDiv(scope, SumGradient(scope, op, dy[0]), group));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Mean", MeanGrad);

// Only floating-point casts are on gradient paths; the gradient is cast back.
absl::Status CastGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  DataType src;
  TG_RETURN_IF_ERROR(op.GetAttr("SrcT", &src));
  dx->push_back(ops::Cast(scope, dy[0], src));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Cast", CastGrad);

absl::Status AddNGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->assign(op.num_inputs(), dy[0]);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("AddN", AddNGrad);

}  // namespace
}  // namespace tensorgrid
