// Data-flow ops: FIFO queues and conditional accumulators, TensorFlow's
// building blocks for handing tensors between steps, sessions and tasks
// (docs/queues.md). Both live in the resource manager of the device they are
// placed on; graphs that name the same shared_name there share one.
//
//   auto q = ops::FIFOQueue(scope.WithOpName("q"), {DT_FLOAT}, ops::FIFOQueue::Capacity(10));
//   auto put = ops::QueueEnqueue(scope, q, {x});            // waits while full
//   auto got = ops::QueueDequeue(scope, q, {DT_FLOAT});     // waits while empty
//   auto close = ops::QueueClose(scope, q);
//
//   auto acc = ops::ConditionalAccumulator(scope, DT_FLOAT, {2},
//                                          ops::ConditionalAccumulator::SharedName("grad_w"));
//   auto apply = ops::AccumulatorApplyGradient(scope, acc, local_step, grad);
//   auto mean = ops::AccumulatorTakeGradient(scope, acc, 2, DT_FLOAT);  // waits for 2
#ifndef TENSORGRID_CLIENT_OPS_DATA_FLOW_OPS_H_
#define TENSORGRID_CLIENT_OPS_DATA_FLOW_OPS_H_

#include <optional>
#include <string>
#include <vector>

#include "client/ops/state_ops.h"
#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace ops {

// A FIFO queue of tuples of `component_types` (op FIFOQueueV2); `handle` is
// its resource handle.
class FIFOQueue {
 public:
  struct Attrs : internal::VariableAttrs<Attrs> {
    // One fully defined shape per component (default: none, which allows
    // elements of any shape but no QueueDequeueMany).
    Attrs Shapes(const std::vector<PartialTensorShape>& x) const {
      Attrs r = *this;
      r.shapes_ = x;
      return r;
    }
    // The most elements the queue holds (default -1: unbounded).
    Attrs Capacity(int64_t x) const {
      Attrs r = *this;
      r.capacity_ = x;
      return r;
    }
    std::optional<std::vector<PartialTensorShape>> shapes_;
    std::optional<int64_t> capacity_;
  };
  FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
            const Attrs& attrs = Attrs());
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  static Attrs Shapes(const std::vector<PartialTensorShape>& x) { return Attrs().Shapes(x); }
  static Attrs Capacity(int64_t x) { return Attrs().Capacity(x); }
  static Attrs Container(const std::string& x) { return Attrs().Container(x); }
  static Attrs SharedName(const std::string& x) { return Attrs().SharedName(x); }

  Operation operation;
  Output handle;
};

// Adds one element (QueueEnqueue: op QueueEnqueueV2) or every row of a batch
// along dimension 0 (QueueEnqueueMany: QueueEnqueueManyV2). Run as targets.
class QueueEnqueue {
 public:
  QueueEnqueue(const Scope& scope, Input handle, InputList components);
  operator Operation() const { return operation; }

  Operation operation;
};

class QueueEnqueueMany {
 public:
  QueueEnqueueMany(const Scope& scope, Input handle, InputList components);
  operator Operation() const { return operation; }

  Operation operation;
};

// Removes one element (op QueueDequeueV2): one output per component.
class QueueDequeue {
 public:
  QueueDequeue(const Scope& scope, Input handle, const std::vector<DataType>& component_types);
  Output operator[](size_t i) const { return components[i]; }

  Operation operation;
  std::vector<Output> components;
};

// Removes `n` elements (op QueueDequeueManyV2), each component stacked along
// a new dimension 0. The queue must have been given shapes.
class QueueDequeueMany {
 public:
  QueueDequeueMany(const Scope& scope, Input handle, Input n,
                   const std::vector<DataType>& component_types);
  Output operator[](size_t i) const { return components[i]; }

  Operation operation;
  std::vector<Output> components;
};

// Closes the queue (op QueueCloseV2); see docs/queues.md.
class QueueClose {
 public:
  struct Attrs {
    // Also fail the enqueues waiting for room (default false).
    Attrs CancelPendingEnqueues(bool x) const {
      Attrs r = *this;
      r.cancel_pending_enqueues_ = x;
      return r;
    }
    std::optional<bool> cancel_pending_enqueues_;
  };
  QueueClose(const Scope& scope, Input handle, const Attrs& attrs = Attrs());
  operator Operation() const { return operation; }
  static Attrs CancelPendingEnqueues(bool x) { return Attrs().CancelPendingEnqueues(x); }

  Operation operation;
};

// The number of elements in the queue (op QueueSizeV2), an int32 scalar.
class QueueSize {
 public:
  QueueSize(const Scope& scope, Input handle);
  operator Output() const { return size; }
  operator Input() const { return size; }

  Operation operation;
  Output size;
};

// A conditional accumulator of `dtype` gradients of `shape` (op
// ResourceConditionalAccumulator, TensorFlow's resource-handle form of
// ConditionalAccumulator); `handle` is its resource handle.
class ConditionalAccumulator {
 public:
  struct Attrs : internal::VariableAttrs<Attrs> {
    // "MEAN" (default) or "SUM": what a take returns.
    Attrs ReductionType(const std::string& x) const {
      Attrs r = *this;
      r.reduction_type_ = x;
      return r;
    }
    std::optional<std::string> reduction_type_;
  };
  ConditionalAccumulator(const Scope& scope, DataType dtype, const PartialTensorShape& shape,
                         const Attrs& attrs = Attrs());
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  static Attrs ReductionType(const std::string& x) { return Attrs().ReductionType(x); }
  static Attrs Container(const std::string& x) { return Attrs().Container(x); }
  static Attrs SharedName(const std::string& x) { return Attrs().SharedName(x); }

  Operation operation;
  Output handle;
};

// Adds `gradient` unless `local_step` (int64) is below the accumulator's
// global step (op ResourceAccumulatorApplyGradient). Run as a target.
class AccumulatorApplyGradient {
 public:
  AccumulatorApplyGradient(const Scope& scope, Input handle, Input local_step, Input gradient);
  operator Operation() const { return operation; }

  Operation operation;
};

// Gradients accumulated so far, an int32 scalar (op
// ResourceAccumulatorNumAccumulated).
class AccumulatorNumAccumulated {
 public:
  AccumulatorNumAccumulated(const Scope& scope, Input handle);
  operator Output() const { return num_accumulated; }
  operator Input() const { return num_accumulated; }

  Operation operation;
  Output num_accumulated;
};

// Sets the accumulator's global step to `new_global_step` (int64; op
// ResourceAccumulatorSetGlobalStep). Run as a target.
class AccumulatorSetGlobalStep {
 public:
  AccumulatorSetGlobalStep(const Scope& scope, Input handle, Input new_global_step);
  operator Operation() const { return operation; }

  Operation operation;
};

// Waits until `num_required` (int32) gradients are in, then returns their
// mean (or sum), empties the accumulator and increments its global step (op
// ResourceAccumulatorTakeGradient).
class AccumulatorTakeGradient {
 public:
  AccumulatorTakeGradient(const Scope& scope, Input handle, Input num_required, DataType dtype);
  operator Output() const { return average; }
  operator Input() const { return average; }

  Operation operation;
  Output average;
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_DATA_FLOW_OPS_H_
