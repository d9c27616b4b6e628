// State op definitions: reference and resource variables. Kernels:
// kernels/state/.
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("VariableV2")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ShapeFromAttr);

TG_REGISTER_OP("Variable")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ShapeFromAttr);

TG_REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetShapeFn([](ShapeInferenceContext& c) {
      c.set_output(0, c.input(1));
      return absl::OkStatus();
    });

TG_REGISTER_OP("AssignAdd")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: {float, double, int32, int64}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape);

TG_REGISTER_OP("AssignSub")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: {float, double, int32, int64}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape);

TG_REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type");

TG_REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful();

TG_REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful();

TG_REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful();

TG_REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("_UninitializedVariableNames")
    .Input("is_initialized: N * bool")
    .Output("names: string")
    .Attr("N: int >= 1")
    .Attr("names: list(string)")
    .SetShapeFn([](ShapeInferenceContext& c) {
      c.set_output(0, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace tensorgrid
