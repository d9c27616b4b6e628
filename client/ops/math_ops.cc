#include "client/ops/math_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {
namespace internal {

UnaryOp::UnaryOp(const Scope& scope, Input x, const char* op_type) {
  operation = NodeBuilder(scope, op_type).Input(x).Finalize();
  y = Output(operation, 0);
}

BinaryOp::BinaryOp(const Scope& scope, Input x, Input y, const char* op_type) {
  operation = NodeBuilder(scope, op_type).Input(x).Input(y).Finalize();
  z = Output(operation, 0);
}

ReductionOp::ReductionOp(const Scope& scope, Input input, Input axis, const Attrs& attrs,
                         const char* op_type) {
  operation = NodeBuilder(scope, op_type)
                  .Input(input)
                  .Input(axis)
                  .Attr("keep_dims", attrs.keep_dims_)
                  .Finalize();
  output = Output(operation, 0);
}

}  // namespace internal

MatMul::MatMul(const Scope& scope, Input a, Input b, const Attrs& attrs) {
  operation = NodeBuilder(scope, "MatMul")
                  .Input(a)
                  .Input(b)
                  .Attr("transpose_a", attrs.transpose_a_)
                  .Attr("transpose_b", attrs.transpose_b_)
                  .Finalize();
  product = Output(operation, 0);
}

ArgMax::ArgMax(const Scope& scope, Input input, Input dimension, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ArgMax")
                  .Input(input)
                  .Input(dimension)
                  .Attr("output_type", attrs.output_type_)
                  .Finalize();
  output = Output(operation, 0);
}

Equal::Equal(const Scope& scope, Input x, Input y, const Attrs& attrs) {
  operation = NodeBuilder(scope, "Equal")
                  .Input(x)
                  .Input(y)
                  .Attr("incompatible_shape_error", attrs.incompatible_shape_error_)
                  .Finalize();
  z = Output(operation, 0);
}

Cast::Cast(const Scope& scope, Input x, DataType DstT, const Attrs& attrs) {
  operation = NodeBuilder(scope, "Cast")
                  .Input(x)
                  .Attr("DstT", DstT)
                  .Attr("Truncate", attrs.truncate_)
                  .Finalize();
  y = Output(operation, 0);
}

AddN::AddN(const Scope& scope, InputList inputs) {
  operation = NodeBuilder(scope, "AddN").Input(inputs).Finalize();
  sum = Output(operation, 0);
}

Range::Range(const Scope& scope, Input start, Input limit, Input delta) {
  operation = NodeBuilder(scope, "Range").Input(start).Input(limit).Input(delta).Finalize();
  output = Output(operation, 0);
}

}  // namespace ops
}  // namespace tensorgrid
