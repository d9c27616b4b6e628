#include "client/ops/array_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!value.status.ok()) {
    scope.UpdateStatus(value.status);
    return Output();
  }
  return Output(NodeBuilder(scope, "Const")
                    .Attr("value", value.tensor)
                    .Attr("dtype", value.tensor.dtype())
                    .Finalize(),
                0);
}

Placeholder::Placeholder(const Scope& scope, DataType dtype, const Attrs& attrs) {
  operation =
      NodeBuilder(scope, "Placeholder").Attr("dtype", dtype).Attr("shape", attrs.shape_).Finalize();
  output = Output(operation, 0);
}

PlaceholderWithDefault::PlaceholderWithDefault(const Scope& scope, Input input,
                                               const PartialTensorShape& shape) {
  operation =
      NodeBuilder(scope, "PlaceholderWithDefault").Input(input).Attr("shape", shape).Finalize();
  output = Output(operation, 0);
}

Identity::Identity(const Scope& scope, Input input) {
  operation = NodeBuilder(scope, "Identity").Input(input).Finalize();
  output = Output(operation, 0);
}

NoOp::NoOp(const Scope& scope) { operation = NodeBuilder(scope, "NoOp").Finalize(); }

Reshape::Reshape(const Scope& scope, Input tensor, Input shape) {
  operation = NodeBuilder(scope, "Reshape").Input(tensor).Input(shape).Finalize();
  output = Output(operation, 0);
}

Transpose::Transpose(const Scope& scope, Input x, Input perm) {
  operation = NodeBuilder(scope, "Transpose").Input(x).Input(perm).Finalize();
  y = Output(operation, 0);
}

Shape::Shape(const Scope& scope, Input input, const Attrs& attrs) {
  operation = NodeBuilder(scope, "Shape").Input(input).Attr("out_type", attrs.out_type_).Finalize();
  output = Output(operation, 0);
}

Fill::Fill(const Scope& scope, Input dims, Input value) {
  operation = NodeBuilder(scope, "Fill").Input(dims).Input(value).Finalize();
  output = Output(operation, 0);
}

ZerosLike::ZerosLike(const Scope& scope, Input x) {
  operation = NodeBuilder(scope, "ZerosLike").Input(x).Finalize();
  y = Output(operation, 0);
}

OnesLike::OnesLike(const Scope& scope, Input x) {
  operation = NodeBuilder(scope, "OnesLike").Input(x).Finalize();
  y = Output(operation, 0);
}

Concat::Concat(const Scope& scope, InputList values, Input axis) {
  operation = NodeBuilder(scope, "ConcatV2", "Concat").Input(values).Input(axis).Finalize();
  output = Output(operation, 0);
}

Size::Size(const Scope& scope, Input input, const Attrs& attrs) {
  operation = NodeBuilder(scope, "Size").Input(input).Attr("out_type", attrs.out_type_).Finalize();
  output = Output(operation, 0);
}

BroadcastTo::BroadcastTo(const Scope& scope, Input input, Input shape) {
  operation = NodeBuilder(scope, "BroadcastTo").Input(input).Input(shape).Finalize();
  output = Output(operation, 0);
}

BroadcastGradientArgs::BroadcastGradientArgs(const Scope& scope, Input s0, Input s1) {
  operation = NodeBuilder(scope, "BroadcastGradientArgs").Input(s0).Input(s1).Finalize();
  r0 = Output(operation, 0);
  r1 = Output(operation, 1);
}

InvertPermutation::InvertPermutation(const Scope& scope, Input x) {
  operation = NodeBuilder(scope, "InvertPermutation").Input(x).Finalize();
  y = Output(operation, 0);
}

ConcatOffset::ConcatOffset(const Scope& scope, Input concat_dim, InputList shape) {
  operation = NodeBuilder(scope, "ConcatOffset").Input(concat_dim).Input(shape).Finalize();
  for (int i = 0; i < operation.num_outputs(); ++i) offset.push_back(Output(operation, i));
}

Slice::Slice(const Scope& scope, Input input, Input begin, Input size) {
  operation = NodeBuilder(scope, "Slice").Input(input).Input(begin).Input(size).Finalize();
  output = Output(operation, 0);
}

DynamicStitch::DynamicStitch(const Scope& scope, InputList indices, InputList data) {
  operation = NodeBuilder(scope, "DynamicStitch").Input(indices).Input(data).Finalize();
  merged = Output(operation, 0);
}

}  // namespace ops
}  // namespace tensorgrid
