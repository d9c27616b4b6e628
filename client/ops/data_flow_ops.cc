#include "client/ops/data_flow_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {
namespace {

// A list(shape) attr value.
AttrValue ShapeList(const std::vector<PartialTensorShape>& shapes) {
  AttrValue v;
  auto* list = v.mutable_list();
  for (const PartialTensorShape& s : shapes) {
    NodeDef scratch;  // SetAttr knows how to write one shape
    SetAttr(&scratch, "s", s);
    *list->add_shape() = scratch.attr().at("s").shape();
  }
  return v;
}

std::vector<Output> AllOutputs(const Operation& op, size_t n) {
  std::vector<Output> outputs;
  for (size_t i = 0; i < n; ++i) outputs.emplace_back(op, static_cast<int>(i));
  return outputs;
}

}  // namespace

FIFOQueue::FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                     const Attrs& attrs) {
  NodeBuilder b(scope, "FIFOQueueV2", "fifo_queue");
  b.Attr("component_types", component_types)
      .Attr("capacity", attrs.capacity_)
      .Attr("container", attrs.container_)
      .Attr("shared_name", attrs.shared_name_);
  if (attrs.shapes_) b.Attr("shapes", ShapeList(*attrs.shapes_));
  operation = b.Finalize();
  handle = Output(operation, 0);
}

QueueEnqueue::QueueEnqueue(const Scope& scope, Input handle, InputList components) {
  operation = NodeBuilder(scope, "QueueEnqueueV2").Input(handle).Input(components).Finalize();
}

QueueEnqueueMany::QueueEnqueueMany(const Scope& scope, Input handle, InputList components) {
  operation = NodeBuilder(scope, "QueueEnqueueManyV2").Input(handle).Input(components).Finalize();
}

QueueDequeue::QueueDequeue(const Scope& scope, Input handle,
                           const std::vector<DataType>& component_types) {
  operation = NodeBuilder(scope, "QueueDequeueV2")
                  .Input(handle)
                  .Attr("component_types", component_types)
                  .Finalize();
  components = AllOutputs(operation, component_types.size());
}

QueueDequeueMany::QueueDequeueMany(const Scope& scope, Input handle, Input n,
                                   const std::vector<DataType>& component_types) {
  operation = NodeBuilder(scope, "QueueDequeueManyV2")
                  .Input(handle)
                  .Input(n)
                  .Attr("component_types", component_types)
                  .Finalize();
  components = AllOutputs(operation, component_types.size());
}

QueueClose::QueueClose(const Scope& scope, Input handle, const Attrs& attrs) {
  operation = NodeBuilder(scope, "QueueCloseV2")
                  .Input(handle)
                  .Attr("cancel_pending_enqueues", attrs.cancel_pending_enqueues_)
                  .Finalize();
}

QueueSize::QueueSize(const Scope& scope, Input handle) {
  operation = NodeBuilder(scope, "QueueSizeV2").Input(handle).Finalize();
  size = Output(operation, 0);
}

ConditionalAccumulator::ConditionalAccumulator(const Scope& scope, DataType dtype,
                                               const PartialTensorShape& shape, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ResourceConditionalAccumulator", "conditional_accumulator")
                  .Attr("dtype", dtype)
                  .Attr("shape", shape)
                  .Attr("container", attrs.container_)
                  .Attr("shared_name", attrs.shared_name_)
                  .Attr("reduction_type", attrs.reduction_type_)
                  .Finalize();
  handle = Output(operation, 0);
}

AccumulatorApplyGradient::AccumulatorApplyGradient(const Scope& scope, Input handle, Input local_step,
                                                   Input gradient) {
  operation = NodeBuilder(scope, "ResourceAccumulatorApplyGradient", "AccumulatorApplyGradient")
                  .Input(handle)
                  .Input(local_step)
                  .Input(gradient)
                  .Finalize();
}

AccumulatorNumAccumulated::AccumulatorNumAccumulated(const Scope& scope, Input handle) {
  operation = NodeBuilder(scope, "ResourceAccumulatorNumAccumulated", "AccumulatorNumAccumulated")
                  .Input(handle)
                  .Finalize();
  num_accumulated = Output(operation, 0);
}

AccumulatorSetGlobalStep::AccumulatorSetGlobalStep(const Scope& scope, Input handle,
                                                   Input new_global_step) {
  operation = NodeBuilder(scope, "ResourceAccumulatorSetGlobalStep", "AccumulatorSetGlobalStep")
                  .Input(handle)
                  .Input(new_global_step)
                  .Finalize();
}

AccumulatorTakeGradient::AccumulatorTakeGradient(const Scope& scope, Input handle, Input num_required,
                                                 DataType dtype) {
  operation = NodeBuilder(scope, "ResourceAccumulatorTakeGradient", "AccumulatorTakeGradient")
                  .Input(handle)
                  .Input(num_required)
                  .Attr("dtype", dtype)
                  .Finalize();
  average = Output(operation, 0);
}

}  // namespace ops
}  // namespace tensorgrid
