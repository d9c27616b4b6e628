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
    .SetIsStateful()
    .Doc(R"doc(
Writes `tensors` under `tensor_names` to the checkpoint `prefix`
(docs/checkpoints.md). No outputs: run it as a target.

shape_and_slices: One "" per tensor: checkpoints hold whole tensors.
)doc");

TG_REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .Doc(R"doc(
Reads the tensors `tensor_names` from the checkpoint `prefix`, checking
each one's dtype against `dtypes`.

shape_and_slices: One "" per tensor: checkpoints hold whole tensors.
dtypes: The tensors' types.
)doc");

}  // namespace
}  // namespace tensorgrid
