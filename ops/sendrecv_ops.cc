// _Send and _Recv, the two ends of an edge cut by partitioning (internal:
// the partitioner adds them). Kernels: kernels/sendrecv/.
#include "core/framework/op_def.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("_Send")
    .Input("tensor: T")
    .Attr("T: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
Leaves `tensor` in the step's rendezvous under a key naming both devices
and `tensor_name`; the partitioner adds it where it cuts an edge.
)doc");

TG_REGISTER_OP("_Recv")
    .Output("tensor: tensor_type")
    .Attr("tensor_type: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
Waits (asynchronously) for the tensor the matching _Send leaves in the
step's rendezvous.
)doc");

}  // namespace
}  // namespace tensorgrid
