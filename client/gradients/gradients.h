// Symbolic gradients, in the shape of TensorFlow's C++
// tensorflow/cc/framework/gradients.h: AddSymbolicGradients adds to a
// Scope's graph the nodes that compute d(sum of ys)/d(x) for every x, built
// from each op's registered gradient function (grad_op_registry.h).
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root, DT_FLOAT);
//   auto w = ops::Variable(root.WithOpName("w"), {3, 1}, DT_FLOAT);
//   auto loss = ops::Mean(root.WithOpName("loss"),
//                         ops::Square(root, ops::MatMul(root, x, w)), {0, 1});
//   std::vector<Output> grads;
//   TG_RETURN_IF_ERROR(AddSymbolicGradients(root, {loss}, {w}, &grads));
//   // grads[0]: d loss / d w, shaped like w
//
// What flows where:
//  - Each y gets grad_ys[i] (of y's dtype and shape), or ones. The result for
//    x is the sum over every path from x to any y; gradients meeting at one
//    tensor from several consumers are added (AddN).
//  - Backprop goes through the xs (an x that feeds another x gets the total
//    derivative) and ignores everything not between the xs and the ys.
//  - Only tensors of floating-point (or resource) dtype carry gradients:
//    an integer or boolean tensor (shapes, axes, the labels of
//    SparseSoftmaxCrossEntropyWithLogits) is never a path, nor is an op
//    registered with TG_REGISTER_NO_GRADIENT (ZerosLike, OnesLike).
//  - A resource variable's gradient is the one flowing into its handle
//    (through ReadVariableOp): pass the VarHandleOp output as an x.
//
// Errors (InvalidArgument; nothing is added to the graph): an x that no y
// depends on through a differentiable path, naming the x and the ys and,
// when there is one, the node where the path stops being differentiable; an
// op on a path with no registered gradient, naming the op type, the node and
// a y and an x it lies between; ys, xs or grad_ys that are not outputs of
// this scope's graph or whose dtypes do not fit. No gradient is ever a
// silent zero. A failure while building the gradient nodes is returned with
// the node it was for; the nodes built until then stay in the graph.
//
// Gradient nodes are named "gradients/<node>_grad/..." (gradients_1, ... for
// later calls) and built through `scope` (its device, control dependencies).
#ifndef TENSORGRID_CLIENT_GRADIENTS_GRADIENTS_H_
#define TENSORGRID_CLIENT_GRADIENTS_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "client/gradients/grad_op_registry.h"
#include "client/output.h"
#include "client/scope.h"

namespace tensorgrid {

// grad_outputs[i] is the gradient of the ys (weighted by grad_ys) with
// respect to xs[i], with xs[i]'s shape and (value) dtype.
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                                  std::vector<Output>* grad_outputs);

// As above with grad_ys of ones (OnesLike each y).
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, std::vector<Output>* grad_outputs);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_GRADIENTS_GRADIENTS_H_
