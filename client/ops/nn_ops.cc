#include "client/ops/nn_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {

Relu::Relu(const Scope& scope, Input features) {
  operation = NodeBuilder(scope, "Relu").Input(features).Finalize();
  activations = Output(operation, 0);
}

ReluGrad::ReluGrad(const Scope& scope, Input gradients, Input features) {
  operation = NodeBuilder(scope, "ReluGrad").Input(gradients).Input(features).Finalize();
  backprops = Output(operation, 0);
}

BiasAdd::BiasAdd(const Scope& scope, Input value, Input bias, const Attrs& attrs) {
  operation = NodeBuilder(scope, "BiasAdd")
                  .Input(value)
                  .Input(bias)
                  .Attr("data_format", attrs.data_format_)
                  .Finalize();
  output = Output(operation, 0);
}

BiasAddGrad::BiasAddGrad(const Scope& scope, Input out_backprop, const Attrs& attrs) {
  operation = NodeBuilder(scope, "BiasAddGrad")
                  .Input(out_backprop)
                  .Attr("data_format", attrs.data_format_)
                  .Finalize();
  output = Output(operation, 0);
}

Softmax::Softmax(const Scope& scope, Input logits) {
  operation = NodeBuilder(scope, "Softmax").Input(logits).Finalize();
  softmax = Output(operation, 0);
}

SoftmaxCrossEntropyWithLogits::SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                             Input labels) {
  operation =
      NodeBuilder(scope, "SoftmaxCrossEntropyWithLogits").Input(features).Input(labels).Finalize();
  loss = Output(operation, 0);
  backprop = Output(operation, 1);
}

SparseSoftmaxCrossEntropyWithLogits::SparseSoftmaxCrossEntropyWithLogits(const Scope& scope,
                                                                         Input features,
                                                                         Input labels) {
  operation = NodeBuilder(scope, "SparseSoftmaxCrossEntropyWithLogits")
                  .Input(features)
                  .Input(labels)
                  .Finalize();
  loss = Output(operation, 0);
  backprop = Output(operation, 1);
}

}  // namespace ops
}  // namespace tensorgrid
