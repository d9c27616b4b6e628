// Data-flow op definitions: FIFO queues, conditional accumulators and the
// sync-replicas gate (docs/queues.md, docs/sync_replicas.md). Kernels:
// kernels/data_flow/.
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("FIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
A FIFO queue of tuples of `component_types`; `handle` is its resource
handle. Graphs that name the same shared_name on one device share it.

shapes: One fully defined shape per component; none allows elements of any
  shape but no QueueDequeueMany.
capacity: The most elements the queue holds (-1: unbounded).

container: The resource container the queue lives in ("": the default container).
shared_name: The name the queue is shared under ("": the node's name).
)doc");

TG_REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc(R"doc(
Adds one element, waiting while the queue is full. No outputs: run it as a
target.

timeout_ms: Accepted and, as in TensorFlow, ignored: bound a wait with
  RunOptions.timeout_in_ms instead.
)doc");

TG_REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc(R"doc(
Adds every row of a batch along dimension 0, waiting while the queue is
full. No outputs: run it as a target.

timeout_ms: Accepted and, as in TensorFlow, ignored: bound a wait with
  RunOptions.timeout_in_ms instead.
)doc");

TG_REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc(R"doc(
Removes one element, waiting while the queue is empty: one output per
component.

timeout_ms: Accepted and, as in TensorFlow, ignored: bound a wait with
  RunOptions.timeout_in_ms instead.
)doc");

TG_REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .Doc(R"doc(
Removes `n` elements, each component stacked along a new dimension 0. The
queue must have been given shapes.

timeout_ms: Accepted and, as in TensorFlow, ignored: bound a wait with
  RunOptions.timeout_in_ms instead.
)doc");

TG_REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
Closes the queue: later enqueues fail, dequeues drain what is left
(docs/queues.md).

cancel_pending_enqueues: Also fail the enqueues waiting for room.
)doc");

TG_REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("The number of elements in the queue, an int32 scalar.");

TG_REGISTER_OP("ResourceConditionalAccumulator")
    .Output("handle: resource")
    .Attr("dtype: {float, double, int32, int64}")
    .Attr("shape: shape")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
A conditional accumulator of `dtype` gradients of `shape` (TensorFlow's
resource-handle form of ConditionalAccumulator); `handle` is its resource
handle.

reduction_type: "MEAN" or "SUM": what a take returns.
container: The resource container it lives in ("": the default container).
shared_name: The name it is shared under ("": the node's name).
)doc");

TG_REGISTER_OP("ResourceAccumulatorApplyGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful()
    .Doc(R"doc(
Adds `gradient` unless `local_step` (int64) is below the accumulator's
global step. No outputs: run it as a target.
)doc");

TG_REGISTER_OP("ResourceAccumulatorNumAccumulated")
    .Input("handle: resource")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Gradients accumulated so far, an int32 scalar.");

TG_REGISTER_OP("ResourceAccumulatorSetGlobalStep")
    .Input("handle: resource")
    .Input("new_global_step: int64")
    .SetIsStateful()
    .Doc(R"doc(
Sets the accumulator's global step to `new_global_step` (int64). No outputs:
run it as a target.
)doc");

TG_REGISTER_OP("ResourceAccumulatorTakeGradient")
    .Input("handle: resource")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful()
    .Doc(R"doc(
Waits until `num_required` (int32) gradients are in, then returns their
mean (or sum), empties the accumulator and increments its global step.
)doc");

TG_REGISTER_OP("ResourceAccumulatorApplyTicketedGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("ticket: int64")
    .Input("gradient: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful()
    .Doc(R"doc(
Keeps `gradient` under the SyncReplicasGate ticket `ticket`, unless
`local_step` is below the global step or the ticket is negative (it did
not count). No outputs: run it as a target (docs/sync_replicas.md).
)doc");

TG_REGISTER_OP("ResourceAccumulatorTakeTicketedGradients")
    .Input("handle: resource")
    .Input("step: int64")
    .Input("tickets: int64")
    .Output("average: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful()
    .Doc(R"doc(
The mean (or sum) of the gradients kept under `tickets` for `step`; drops
the other ticketed gradients of that step or older and sets the global step
to step + 1. Returns at once.
)doc");

TG_REGISTER_OP("SyncReplicasGate")
    .Output("handle: resource")
    .Attr("replicas_to_aggregate: int >= 1")
    .Attr("one_per_replica: bool = false")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
Creates (or finds, by container and shared_name) the gate that decides which
replicas' gradients count toward each step of synchronous training
(SyncReplicasOptimizer, docs/sync_replicas.md); outputs its handle.

replicas_to_aggregate: Gradients that complete a step.
one_per_replica: Count at most one gradient per replica and step.
container: The resource container it lives in ("": the default container).
shared_name: The name it is shared under ("": the node's name).
)doc");

TG_REGISTER_OP("SyncReplicasGateAdmit")
    .Input("handle: resource")
    .Input("replica: int32")
    .Input("local_step: int64")
    .Output("step: int64")
    .Output("ticket: int64")
    .SetIsStateful()
    .Doc(R"doc(
The local step to apply a replica's gradients with and their ticket: the
gate's step if they may count, -1 (and ticket -1) if not. Waits until the
gate opens.
)doc");

TG_REGISTER_OP("SyncReplicasGateCommit")
    .Input("handle: resource")
    .Input("ticket: int64")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
The ticket's gradients are in every accumulator: `step` is the step they
count toward, or -1 if they do not (also on a closed gate).
)doc");

TG_REGISTER_OP("SyncReplicasGateTake")
    .Input("handle: resource")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Waits until the step is full and completes it; outputs the step.");

TG_REGISTER_OP("SyncReplicasGateAwait")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
Waits until the gate is open and the chief has released a global step after
`local_step`; outputs that step (a replica's wait for the chief's update
when the gate counts one gradient per replica).
)doc");

TG_REGISTER_OP("SyncReplicasGateRelease")
    .Input("handle: resource")
    .Input("step: int64")
    .SetIsStateful()
    .Doc(R"doc(
The chief's update made the global step `step`: every await of an earlier
local step ends with it. No outputs: run it as a target.
)doc");

TG_REGISTER_OP("SyncReplicasGateTaken")
    .Input("handle: resource")
    .Output("step: int64")
    .Output("tickets: int64")
    .SetIsStateful()
    .Doc("The step the last take completed and the tickets it counted.");

TG_REGISTER_OP("SyncReplicasGateOpen")
    .Input("handle: resource")
    .Input("step: int64")
    .Output("epoch: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
Opens the gate at `step`, releases `step` and ends every waiting await with
it; outputs this opening's epoch (1, 2, ...), for Close.
)doc");

TG_REGISTER_OP("SyncReplicasGateClose")
    .Input("handle: resource")
    .Input("code: int32")
    .Input("message: string")
    .Input("epoch: int64")
    .Output("closed: bool")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
Fails admissions, takes and awaits with the status (`code`, `message`);
commits count nothing. With `epoch` >= 0, only if the gate is still at that
opening (Open's output): `closed` is false for a late close of an earlier
opening, which changes nothing.
)doc");

TG_REGISTER_OP("SyncReplicasGateState")
    .Input("handle: resource")
    .Output("step: int64")
    .Output("committed: int32")
    .Output("replicas: int32")
    .Output("uncommitted_replicas: int32")
    .Output("awaiting: int32")
    .SetIsStateful()
    .Doc(R"doc(
The gate's step, committed gradients, replicas and uncommitted replicas, and
how many awaits wait for the chief's release.
)doc");

TG_REGISTER_OP("SyncReplicasLocalStep")
    .Output("handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
Creates (or finds) a worker's local step, the global step its last token
carried, which reads -1 until first set; outputs its handle.

container: The resource container it lives in ("": the default container).
shared_name: The name it is shared under ("": the node's name).
)doc");

TG_REGISTER_OP("SyncReplicasLocalStepRead")
    .Input("handle: resource")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("The local step (-1 until first set).");

TG_REGISTER_OP("SyncReplicasLocalStepAssign")
    .Input("handle: resource")
    .Input("step: int64")
    .SetIsStateful()
    .Doc("Sets the local step. No outputs: run it as a target.");

}  // namespace
}  // namespace tensorgrid
