// Collective op definitions: all-reduce, broadcast and gather among the
// devices of a group (docs/collectives.md). Kernels: kernels/collective/.
#include "core/framework/op_def.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("CollectiveReduce")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("merge_op: {'Add', 'Mul', 'Min', 'Max'}")
    .Attr("final_op: {'Id', 'Div'}")
    .Attr("subdiv_offsets: list(int) = []")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .Doc(R"doc(
All-reduce: merge_op over the members' inputs (same dtype and shape on
every member), then final_op. Every member gets the bit-identical result.

merge_op: "Add", "Mul", "Min" or "Max".
final_op: "Id" or "Div" (divide by group_size).
subdiv_offsets: Accepted for TensorFlow's graphs; unused.

group_size: The number of members (devices) in the group.
group_key: The group; every member uses the same one.
instance_key: The collective; every member uses the same one.
timeout_seconds: How long to wait for the other members before failing with
  DeadlineExceeded (0: 60 s).
)doc");

TG_REGISTER_OP("CollectiveBcastSend")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .Doc(R"doc(
Broadcast from this member (its output is its input) to the members running
CollectiveBcastRecv.

shape: The shape of the broadcast tensor.

group_size: The number of members (devices) in the group.
group_key: The group; every member uses the same one.
instance_key: The collective; every member uses the same one.
timeout_seconds: How long to wait for the other members before failing with
  DeadlineExceeded (0: 60 s).
)doc");

TG_REGISTER_OP("CollectiveBcastRecv")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .Doc(R"doc(
Receives the tensor the member running CollectiveBcastSend broadcasts.

T: The broadcast tensor's type.
shape: The broadcast tensor's shape.

group_size: The number of members (devices) in the group.
group_key: The group; every member uses the same one.
instance_key: The collective; every member uses the same one.
timeout_seconds: How long to wait for the other members before failing with
  DeadlineExceeded (0: 60 s).
)doc");

TG_REGISTER_OP("CollectiveGather")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful()
    .Doc(R"doc(
Every member's input (of `shape`, rank >= 1) concatenated along dimension 0
in rank order (members sorted by device name).

shape: The shape of each member's input.

group_size: The number of members (devices) in the group.
group_key: The group; every member uses the same one.
instance_key: The collective; every member uses the same one.
timeout_seconds: How long to wait for the other members before failing with
  DeadlineExceeded (0: 60 s).
)doc");

}  // namespace
}  // namespace tensorgrid
