// Gradients of the neural-network ops: Relu, Relu6, BiasAdd, Softmax and the
// two softmax cross-entropies (which hand back their own `backprop` output),
// MaxPool, AvgPool and FusedBatchNormV3.
#include <cstdint>
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

absl::Status Relu6Grad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  dx->push_back(ops::Relu6Grad(scope, dy[0], op.input(0)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("Relu6", Relu6Grad);

// The window attrs every pooling op and its gradient share.
struct PoolAttrs {
  std::vector<int64_t> ksize, strides;
  std::string padding, data_format;
};

absl::Status ReadPoolAttrs(const ForwardOp& op, PoolAttrs* a) {
  TG_RETURN_IF_ERROR(op.GetAttr("ksize", &a->ksize));
  TG_RETURN_IF_ERROR(op.GetAttr("strides", &a->strides));
  TG_RETURN_IF_ERROR(op.GetAttr("padding", &a->padding));
  return op.GetAttr("data_format", &a->data_format);
}

absl::Status MaxPoolGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  PoolAttrs a;
  TG_RETURN_IF_ERROR(ReadPoolAttrs(op, &a));
  std::vector<int64_t> explicit_paddings;
  TG_RETURN_IF_ERROR(op.GetAttr("explicit_paddings", &explicit_paddings));
  dx->push_back(ops::MaxPoolGrad(
      scope, op.input(0), op.output(0), dy[0], a.ksize, a.strides, a.padding,
      ops::MaxPoolGrad::ExplicitPaddings(explicit_paddings).DataFormat(a.data_format)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("MaxPool", MaxPoolGrad);

absl::Status AvgPoolGrad(const Scope& scope, const ForwardOp& op, const Grads& dy, Grads* dx) {
  PoolAttrs a;
  TG_RETURN_IF_ERROR(ReadPoolAttrs(op, &a));
  dx->push_back(ops::AvgPoolGrad(scope, ops::Shape(scope, op.input(0)), dy[0], a.ksize, a.strides,
                                 a.padding, ops::AvgPoolGrad::DataFormat(a.data_format)));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("AvgPool", AvgPoolGrad);

// Gradients for x, scale and offset from y's; none for the moving mean and
// variance (as TensorFlow). Training normalized with the batch statistics the
// op saved (reserve_space_1 and _2); inference with the moving ones, inputs 3
// and 4, which the gradient treats as constants.
absl::Status FusedBatchNormV3Grad(const Scope& scope, const ForwardOp& op, const Grads& dy,
                                  Grads* dx) {
  float epsilon;
  std::string data_format;
  bool is_training;
  TG_RETURN_IF_ERROR(op.GetAttr("epsilon", &epsilon));
  TG_RETURN_IF_ERROR(op.GetAttr("data_format", &data_format));
  TG_RETURN_IF_ERROR(op.GetAttr("is_training", &is_training));
  const Output dy0 = dy[0].valid() ? dy[0] : ops::ZerosLike(scope, op.output(0)).y;
  const Output mean = is_training ? op.output(3) : op.input(3);
  const Output variance = is_training ? op.output(4) : op.input(4);
  auto grad = ops::FusedBatchNormGradV3(
      scope, dy0, op.input(0), op.input(1), mean, variance, op.output(5),
      ops::FusedBatchNormGradV3::Epsilon(epsilon).DataFormat(data_format).IsTraining(is_training));
  dx->push_back(grad.x_backprop);
  dx->push_back(grad.scale_backprop);
  dx->push_back(grad.offset_backprop);
  dx->push_back(NoGradient());
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormV3Grad);

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
