#include "client/gradients/broadcast_grad.h"

#include "client/ops/standard_ops.h"

namespace tensorgrid {

Output ReduceGradToShapeOf(const Scope& scope, const Output& grad, const Output& x) {
  auto sx = ops::Shape(scope, x);
  auto args = ops::BroadcastGradientArgs(scope, sx, ops::Shape(scope, grad));
  return ops::Reshape(scope, ops::Sum(scope, grad, args.r0), sx);
}

void AppendBinaryGrads(const Scope& scope, const Output& x, const Output& y, const Output& gx,
                       const Output& gy, std::vector<Output>* grad_inputs) {
  auto sx = ops::Shape(scope, x);
  auto sy = ops::Shape(scope, y);
  auto args = ops::BroadcastGradientArgs(scope, sx, sy);
  grad_inputs->push_back(ops::Reshape(scope, ops::Sum(scope, gx, args.r0), sx));
  grad_inputs->push_back(ops::Reshape(scope, ops::Sum(scope, gy, args.r1), sy));
}

}  // namespace tensorgrid
