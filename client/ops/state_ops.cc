#include "client/ops/state_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {
namespace internal {

AssignUpdateOp::AssignUpdateOp(const Scope& scope, Input ref, Input value, const Attrs& attrs,
                               const char* op_type) {
  operation = NodeBuilder(scope, op_type)
                  .Input(ref)
                  .Input(value)
                  .Attr("use_locking", attrs.use_locking_)
                  .Finalize();
  output_ref = Output(operation, 0);
}

}  // namespace internal

Variable::Variable(const Scope& scope, const PartialTensorShape& shape, DataType dtype,
                   const Attrs& attrs) {
  operation = NodeBuilder(scope, "VariableV2", "Variable")
                  .Attr("shape", shape)
                  .Attr("dtype", dtype)
                  .Attr("container", attrs.container_)
                  .Attr("shared_name", attrs.shared_name_)
                  .Finalize();
  ref = Output(operation, 0);
}

Assign::Assign(const Scope& scope, Input ref, Input value, const Attrs& attrs) {
  operation = NodeBuilder(scope, "Assign")
                  .Input(ref)
                  .Input(value)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("validate_shape", attrs.validate_shape_)
                  .Finalize();
  output_ref = Output(operation, 0);
}

VarHandleOp::VarHandleOp(const Scope& scope, DataType dtype, const PartialTensorShape& shape,
                         const Attrs& attrs) {
  operation = NodeBuilder(scope, "VarHandleOp")
                  .Attr("dtype", dtype)
                  .Attr("shape", shape)
                  .Attr("container", attrs.container_)
                  .Attr("shared_name", attrs.shared_name_)
                  .Finalize();
  resource = Output(operation, 0);
}

ReadVariableOp::ReadVariableOp(const Scope& scope, Input resource, DataType dtype) {
  operation = NodeBuilder(scope, "ReadVariableOp").Input(resource).Attr("dtype", dtype).Finalize();
  value = Output(operation, 0);
}

AssignVariableOp::AssignVariableOp(const Scope& scope, Input resource, Input value) {
  operation = NodeBuilder(scope, "AssignVariableOp").Input(resource).Input(value).Finalize();
}

AssignAddVariableOp::AssignAddVariableOp(const Scope& scope, Input resource, Input value) {
  operation = NodeBuilder(scope, "AssignAddVariableOp").Input(resource).Input(value).Finalize();
}

AssignSubVariableOp::AssignSubVariableOp(const Scope& scope, Input resource, Input value) {
  operation = NodeBuilder(scope, "AssignSubVariableOp").Input(resource).Input(value).Finalize();
}

}  // namespace ops
}  // namespace tensorgrid
