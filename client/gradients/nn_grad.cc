// Gradients of the neural-network ops: Relu, BiasAdd, Softmax and the two
// softmax cross-entropies, which hand back their own `backprop` output.
#include <string>
#include <vector>

#include "client/gradients/broadcast_grad.h"
#include "client/gradients/grad_op_registry.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

using Grads = std::vector<Output>;

absl::Status ReluGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::ReluGrad(scope, dy[0], op.input(0)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Relu", ReluGrad);

absl::Status BiasAddGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  std::string data_format;
  TG_RETURN_IF_ERROR(op.GetAttr("data_format", &data_format));
  dx->push_back(dy[0]);
  dx->push_back(ops::BiasAddGrad(scope, dy[0], ops::BiasAddGrad::DataFormat(data_format)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("BiasAdd", BiasAddGrad);

// For y = softmax(x) along the last axis: dx = (dy - sum(dy * y)) * y.
Output SoftmaxBackprop(const Scope& scope, const Output& softmax, const Output& dy) {
  auto dot = ops::Sum(scope, ops::Mul(scope, dy, softmax), -1, ops::Sum::KeepDims(true));
  return ops::Mul(scope, ops::Sub(scope, dy, dot), softmax);
}

absl::Status SoftmaxGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(SoftmaxBackprop(scope, op.output(0), dy[0]));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Softmax", SoftmaxGrad);

// log(softmax(logits)) along axis 1, shifted by the row maximum for stability.
Output LogSoftmax(const Scope& scope, const Output& logits) {
  auto shifted = ops::Sub(scope, logits, ops::Max(scope, logits, 1, ops::Max::KeepDims(true)));
  auto log_sum =
      ops::Log(scope, ops::Sum(scope, ops::Exp(scope, shifted), 1, ops::Sum::KeepDims(true)));
  return ops::Sub(scope, shifted, log_sum);
}

// Both cross-entropies output loss [batch] and backprop = softmax(features)
// - labels [batch, classes]. A gradient into loss scales backprop row by
// row; one into backprop (second order) flows through the softmax.
Output FeaturesGrad(const Scope& scope, const ForwardOp& op, const Grads& dy) {
  Output grad;
  if (dy[0].valid()) {
    grad = ops::Mul(scope, ops::Reshape(scope, dy[0], {-1, 1}), op.output(1));
  }
  if (dy[1].valid()) {
    auto through_softmax = SoftmaxBackprop(scope, ops::Softmax(scope, op.input(0)), dy[1]);
    grad = grad.valid() ? Output(ops::Add(scope, grad, through_softmax)) : through_softmax;
  }
  return grad;
}

// d loss / d labels = -log(softmax(features)); d backprop / d labels = -1.
absl::Status SoftmaxCrossEntropyWithLogitsGrad(const Scope& scope, const ForwardOp& op,
                                               const Grads& dy, Grads* dx) {
  const Output& features = op.input(0);
  const Output& labels = op.input(1);
  Output labels_grad;
  if (dy[0].valid()) {
    labels_grad = ops::Mul(scope, ops::Reshape(scope, dy[0], {-1, 1}),
                           ops::Neg(scope, LogSoftmax(scope, features)));
  }
  if (dy[1].valid()) {
    auto minus = ops::Neg(scope, dy[1]);
    labels_grad = labels_grad.valid() ? Output(ops::Add(scope, labels_grad, minus)) : minus;
  }
  // Features or labels of one row broadcast against the other's batch.
  dx->push_back(ReduceGradToShapeOf(scope, FeaturesGrad(scope, op, dy), features));
  dx->push_back(ReduceGradToShapeOf(scope, labels_grad, labels));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyWithLogitsGrad);

// The labels are class indices: not differentiable.
absl::Status SparseSoftmaxCrossEntropyWithLogitsGrad(const Scope& scope, const ForwardOp& op,
                                                     const Grads& dy, Grads* dx) {
  dx->push_back(FeaturesGrad(scope, op, dy));
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits",
                     SparseSoftmaxCrossEntropyWithLogitsGrad);

}  // namespace
}  // namespace tensorgrid
