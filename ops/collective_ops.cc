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
    .SetIsStateful();

TG_REGISTER_OP("CollectiveBcastSend")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful();

TG_REGISTER_OP("CollectiveBcastRecv")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful();

TG_REGISTER_OP("CollectiveGather")
    .Input("input: T")
    .Output("data: T")
    .Attr("T: {float, double, int32, int64}")
    .Attr("group_size: int")
    .Attr("group_key: int")
    .Attr("instance_key: int")
    .Attr("shape: shape")
    .Attr("timeout_seconds: float = 0")
    .SetIsStateful();

}  // namespace
}  // namespace tensorgrid
