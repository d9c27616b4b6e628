// Checkpoint op definitions: SaveV2, RestoreV2 and MergeV2Checkpoints
// (docs/checkpoints.md), and the names of sharded checkpoint files.
// Kernels: kernels/io/.
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"

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

shape_and_slices: One per tensor: "" for the whole tensor, or "dims slice"
  ("4 4 0,2:-": the tensor given is rows 0-1 of a 4x4 tensor).
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

shape_and_slices: One per tensor: "" for the whole tensor, or "dims slice"
  ("4 4 0,2:-": rows 0-1 of the stored 4x4 tensor).
dtypes: The tensors' types.
)doc");

TG_REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
Merges the checkpoints `checkpoint_prefixes` into one at
`destination_prefix` and deletes them: the last step of TensorFlow 1.x's
sharded saves. No outputs: run it as a target.

delete_old_dirs: Also remove each source's directory once it is empty.
allow_missing_files: Skip sources that do not exist (at least one must).
)doc");

TG_REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
The name of shard `shard` of `num_shards`: "basename-00002-of-00005" (each
number at least five digits wide). Every input is a scalar.
)doc");

TG_REGISTER_OP("ShardedFilespec")
    .Input("basename: string")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
A pattern matching every shard's name: "basename-?????-of-00005". Every
input is a scalar.
)doc");

}  // namespace
}  // namespace tensorgrid
