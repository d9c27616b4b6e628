// Checkpoint op definitions: SaveV2 and RestoreV2 (docs/checkpoints.md).
// Kernels: kernels/io/.
#include "core/framework/op_def.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful();

TG_REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful();

}  // namespace
}  // namespace tensorgrid
