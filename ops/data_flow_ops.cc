// Data-flow op definitions: FIFO queues, conditional accumulators and the
// sync-replicas gate (docs/queues.md, docs/sync_replicas.md). Kernels:
// kernels/data_flow/.
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("FIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type)")
    .Attr("shapes: list(shape) = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful();

TG_REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful();

TG_REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful();

TG_REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type)")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful();

TG_REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful();

TG_REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("ResourceConditionalAccumulator")
    .Output("handle: resource")
    .Attr("dtype: {float, double, int32, int64}")
    .Attr("shape: shape")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("ResourceAccumulatorApplyGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful();

TG_REGISTER_OP("ResourceAccumulatorNumAccumulated")
    .Input("handle: resource")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("ResourceAccumulatorSetGlobalStep")
    .Input("handle: resource")
    .Input("new_global_step: int64")
    .SetIsStateful();

TG_REGISTER_OP("ResourceAccumulatorTakeGradient")
    .Input("handle: resource")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful();

TG_REGISTER_OP("ResourceAccumulatorApplyTicketedGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("ticket: int64")
    .Input("gradient: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful();

TG_REGISTER_OP("ResourceAccumulatorTakeTicketedGradients")
    .Input("handle: resource")
    .Input("step: int64")
    .Input("tickets: int64")
    .Output("average: dtype")
    .Attr("dtype: {float, double, int32, int64}")
    .SetIsStateful();

TG_REGISTER_OP("SyncReplicasGate")
    .Output("handle: resource")
    .Attr("replicas_to_aggregate: int >= 1")
    .Attr("one_per_replica: bool = false")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("SyncReplicasGateAdmit")
    .Input("handle: resource")
    .Input("replica: int32")
    .Input("local_step: int64")
    .Output("step: int64")
    .Output("ticket: int64")
    .SetIsStateful();

TG_REGISTER_OP("SyncReplicasGateCommit")
    .Input("handle: resource")
    .Input("ticket: int64")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("SyncReplicasGateTake")
    .Input("handle: resource")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("SyncReplicasGateTaken")
    .Input("handle: resource")
    .Output("step: int64")
    .Output("tickets: int64")
    .SetIsStateful();

TG_REGISTER_OP("SyncReplicasGateOpen")
    .Input("handle: resource")
    .Input("step: int64")
    .SetIsStateful();

TG_REGISTER_OP("SyncReplicasGateClose")
    .Input("handle: resource")
    .Input("code: int32")
    .Input("message: string")
    .SetIsStateful();

TG_REGISTER_OP("SyncReplicasGateState")
    .Input("handle: resource")
    .Output("step: int64")
    .Output("committed: int32")
    .Output("replicas: int32")
    .Output("uncommitted_replicas: int32")
    .SetIsStateful();

TG_REGISTER_OP("SyncReplicasLocalStep")
    .Output("handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("SyncReplicasLocalStepRead")
    .Input("handle: resource")
    .Output("step: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape);

TG_REGISTER_OP("SyncReplicasLocalStepAssign")
    .Input("handle: resource")
    .Input("step: int64")
    .SetIsStateful();

}  // namespace
}  // namespace tensorgrid
