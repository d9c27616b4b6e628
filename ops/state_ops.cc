// State op definitions: reference and resource variables. Kernels:
// kernels/state/.
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("VariableV2")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ShapeFromAttr)
    .Doc(R"doc(
A reference variable; `ref` is its reference output.

shape: The variable's shape.
dtype: The variable's type.

container: The resource container the variable lives in ("": the default container).
shared_name: The name the variable is shared under ("": the node's name).
)doc");

// As TensorFlow's: a shape attr without dims means an unknown shape here,
// whatever the graph's producer (the old op could not say "scalar").
absl::Status LegacyVariableShapeFn(ShapeInferenceContext& c) {
  PartialTensorShape shape;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "shape", &shape));
  if (!shape.unknown_rank() && shape.dims() > 0) c.set_output(0, shape);
  return absl::OkStatus();
}

TG_REGISTER_OP("Variable")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(LegacyVariableShapeFn)
    .Doc(R"doc(
A reference variable: VariableV2's older name, kept for graphs that use it.
Its shape attr without dims means "any shape", not a scalar's.

container: The resource container the variable lives in ("": the default container).
shared_name: The name the variable is shared under ("": the node's name).
)doc");

TG_REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetShapeFn([](ShapeInferenceContext& c) {
      bool validate_shape = true;
      TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "validate_shape", &validate_shape));
      if (!validate_shape) {
        c.set_output(0, c.input(1));
        return absl::OkStatus();
      }
      PartialTensorShape merged;
      if (!shape_fns::MergeShapes(c.input(0), c.input(1), &merged)) {
        return errors::InvalidArgument(
            "node '", c.node().name(), "' (Assign): cannot assign a value of shape ",
            c.input(1).DebugString(), " to a variable of shape ", c.input(0).DebugString(),
            " (validate_shape=false allows it)");
      }
      c.set_output(0, merged);
      return absl::OkStatus();
    })
    .Doc(R"doc(
ref = value; output_ref is `ref` after the assignment.

use_locking: Hold the variable's lock during the assignment.
validate_shape: Require `value` to have the variable's shape.
)doc");

TG_REGISTER_OP("AssignAdd")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: {float, double, int32, int64}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
ref += value; output_ref is `ref` after the update.

use_locking: Hold the variable's lock during the update.
)doc");

TG_REGISTER_OP("AssignSub")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: {float, double, int32, int64}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
ref -= value; output_ref is `ref` after the update.

use_locking: Hold the variable's lock during the update.
)doc");

TG_REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
A resource variable's handle (DT_RESOURCE); the variable itself is created
by its first AssignVariableOp.

dtype: The variable's type.
shape: The variable's shape.

container: The resource container the variable lives in ("": the default container).
shared_name: The name the variable is shared under ("": the node's name).
)doc");

TG_REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .Doc(R"doc(
The current value of the resource variable `resource`.

dtype: The variable's type.
)doc");

TG_REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .Doc(R"doc(
resource = value, creating the variable on first use. No outputs: run it as
a target.
)doc");

TG_REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful()
    .Doc("resource += value. No outputs: run it as a target.");

TG_REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful()
    .Doc("resource -= value. No outputs: run it as a target.");

TG_REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Whether the reference variable `ref` holds a value yet.");

TG_REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Whether the resource variable `resource` holds a value yet.");

TG_REGISTER_OP("_UninitializedVariableNames")
    .Input("is_initialized: N * bool")
    .Output("names: string")
    .Attr("N: int >= 1")
    .Attr("names: list(string)")
    .SetShapeFn([](ShapeInferenceContext& c) {
      c.set_output(0, PartialTensorShape({-1}));
      return absl::OkStatus();
    })
    .Doc(R"doc(
The entries of `names` whose `is_initialized` input is false: the last step
of training::ReportUninitializedVariables.
)doc");

}  // namespace
}  // namespace tensorgrid
