// Queue ops over a FIFOQueue resource (fifo_queue.h), with TensorFlow's names
// and attributes: FIFOQueueV2 creates (or finds, by container and
// shared_name) the queue and outputs its handle; QueueEnqueueV2,
// QueueEnqueueManyV2, QueueDequeueV2 and QueueDequeueManyV2 are asynchronous
// kernels that wait without holding a thread and fail Cancelled when their
// step is cancelled; QueueCloseV2 and QueueSizeV2 return at once.
// The attr timeout_ms is accepted and, as in TensorFlow, ignored: bound a
// wait with RunOptions.timeout_in_ms instead.
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/data_flow/fifo_queue.h"
#include "kernels/data_flow/lookup_resource.h"

namespace tensorgrid {

namespace {

constexpr char kQueue[] = "FIFOQueue";

// The list(shape) attr `name` (GetNodeAttr has no overload for it).
absl::Status GetShapeListAttr(const OpKernelConstruction& ctx, const std::string& name,
                              std::vector<PartialTensorShape>* out) {
  out->clear();
  auto it = ctx.def().attr().find(name);
  if (it == ctx.def().attr().end()) return absl::OkStatus();
  for (const TensorShapeProto& proto : it->second.list().shape()) {
    TG_ASSIGN_OR_RETURN(PartialTensorShape shape, PartialTensorShape::FromProto(proto));
    out->push_back(std::move(shape));
  }
  return absl::OkStatus();
}

class FIFOQueueOp final : public OpKernel {
 public:
  explicit FIFOQueueOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    ResourceHandle h;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("component_types", &types_));
    TG_REQUIRES_OK_CTOR(ctx, GetShapeListAttr(ctx, "shapes", &shapes_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("capacity", &capacity_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("container", &h.container));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shared_name", &h.name));
    // Without a shared_name the queue is named after its node, as variables
    // are, so every step and signature of a session finds the same queue.
    if (h.name.empty()) h.name = name();
    TG_REQUIRES_OK_CTOR(ctx, FIFOQueue::Validate(h.name, types_, shapes_, capacity_));
    h.device = ctx.device()->name();
    h.type_name = kQueue;
    handle_ = Tensor::Scalar<ResourceHandle>(h);
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const ResourceHandle& h = handle_.scalar<ResourceHandle>();
    TG_ASSIGN_OR_RETURN(std::shared_ptr<FIFOQueue> queue,
                        ctx.resource_manager()->LookupOrCreate<FIFOQueue>(h.container, h.name, [&] {
                          return std::make_shared<FIFOQueue>(h.name, types_, shapes_, capacity_);
                        }));
    TG_RETURN_IF_ERROR(queue->MatchesRequest(types_, shapes_, capacity_));
    ctx.set_output(0, handle_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::vector<DataType> types_;
  std::vector<PartialTensorShape> shapes_;
  int64_t capacity_ = FIFOQueue::kUnbounded;
  Tensor handle_;
};

template <bool kMany>
class EnqueueOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto queue = LookupResource<FIFOQueue>(ctx, 0, kQueue);
    if (!queue.ok()) return done(queue.status());
    FIFOQueue::Tuple tuple;
    for (int i = 1; i < ctx.num_inputs(); ++i) tuple.push_back(ctx.input(i));
    absl::Status valid =
        kMany ? (*queue)->ValidateManyTuple(tuple) : (*queue)->ValidateTuple(tuple);
    if (!valid.ok()) return done(valid);
    if (kMany) {
      (*queue)->TryEnqueueMany(tuple, ctx.cancellation(), std::move(done));
    } else {
      (*queue)->TryEnqueue(std::move(tuple), ctx.cancellation(), std::move(done));
    }
  }
  bool IsExpensive() const override { return false; }
};

// Row `row` of `batch` = `element` (same dtype; element has the row's shape).
void CopyRow(const Tensor& element, int64_t row, Tensor* batch) {
  const int64_t n = element.NumElements();
  if (element.dtype() == DT_STRING) {
    std::copy_n(element.data<std::string>(), n, batch->data<std::string>() + row * n);
  } else if (element.dtype() == DT_RESOURCE) {
    std::copy_n(element.data<ResourceHandle>(), n, batch->data<ResourceHandle>() + row * n);
  } else {
    const size_t bytes = element.TotalBytes();
    if (bytes > 0)
      std::memcpy(static_cast<char*>(batch->raw_data()) + row * bytes, element.raw_data(), bytes);
  }
}

template <bool kMany>
class DequeueOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto queue = LookupResource<FIFOQueue>(ctx, 0, kQueue);
    if (!queue.ok()) return done(queue.status());
    std::shared_ptr<FIFOQueue> q = *std::move(queue);
    std::vector<DataType> wanted;
    for (int i = 0; i < num_outputs(); ++i) wanted.push_back(output_type(i));
    if (wanted != q->component_types()) {
      return done(errors::InvalidArgument("FIFOQueue '", q->name(), "' holds components of types (",
                                          TypeNames(q->component_types()), "), not (",
                                          TypeNames(wanted), ") as the dequeue asks"));
    }
    if (!kMany) {
      q->TryDequeue(
          1, ctx.cancellation(),
          [&ctx, done = std::move(done)](absl::Status s, std::vector<FIFOQueue::Tuple> got) {
            if (s.ok()) {
              for (size_t i = 0; i < got[0].size(); ++i) ctx.set_output(i, std::move(got[0][i]));
            }
            done(s);
          });
      return;
    }
    auto batch = AllocateBatch(ctx, *q);
    if (!batch.ok()) return done(batch.status());
    q->TryDequeue(ctx.input(1).scalar<int32_t>(), ctx.cancellation(),
                  [&ctx, batch = *std::move(batch), done = std::move(done)](
                      absl::Status s, std::vector<FIFOQueue::Tuple> got) mutable {
                    if (s.ok()) {
                      for (size_t i = 0; i < batch.size(); ++i) {
                        for (size_t r = 0; r < got.size(); ++r) CopyRow(got[r][i], r, &batch[i]);
                        ctx.set_output(i, std::move(batch[i]));
                      }
                    }
                    done(s);
                  });
  }
  bool IsExpensive() const override { return false; }

 private:
  static std::string TypeNames(const std::vector<DataType>& types) {
    std::string out;
    for (DataType t : types) absl::StrAppend(&out, out.empty() ? "" : ", ", DataTypeString(t));
    return out;
  }

  // The outputs of a dequeue of n, allocated before anything leaves the
  // queue, so that a failed allocation loses no element.
  static absl::StatusOr<std::vector<Tensor>> AllocateBatch(const OpKernelContext& ctx,
                                                           const FIFOQueue& q) {
    const Tensor& n = ctx.input(1);
    if (n.dtype() != DT_INT32 || n.dims() != 0) {
      return errors::InvalidArgument("n must be an int32 scalar, got ", n.DebugString());
    }
    if (n.scalar<int32_t>() < 0) {
      return errors::InvalidArgument("cannot dequeue ", n.scalar<int32_t>(),
                                     " elements from FIFOQueue '", q.name(), "'");
    }
    if (q.shapes().empty()) {
      return errors::InvalidArgument("FIFOQueue '", q.name(),
                                     "' was created without shapes; "
                                     "a dequeue of many needs the components' shapes");
    }
    std::vector<Tensor> batch;
    for (size_t i = 0; i < q.shapes().size(); ++i) {
      std::vector<int64_t> dims{n.scalar<int32_t>()};
      for (int d = 0; d < q.shapes()[i].dims(); ++d) dims.push_back(q.shapes()[i].dim_size(d));
      TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(dims));
      TG_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(q.component_types()[i], shape));
      batch.push_back(std::move(t));
    }
    return batch;
  }
};

class QueueCloseOp final : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(std::shared_ptr<FIFOQueue> queue,
                        LookupResource<FIFOQueue>(ctx, 0, kQueue));
    queue->Close(cancel_pending_enqueues_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool cancel_pending_enqueues_ = false;
};

class QueueSizeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(std::shared_ptr<FIFOQueue> queue,
                        LookupResource<FIFOQueue>(ctx, 0, kQueue));
    ctx.set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(queue->size())));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("FIFOQueueV2").Device(DEVICE_CPU), FIFOQueueOp);
TG_REGISTER_KERNEL(KernelDefBuilder("QueueEnqueueV2").Device(DEVICE_CPU), EnqueueOp<false>);
TG_REGISTER_KERNEL(KernelDefBuilder("QueueEnqueueManyV2").Device(DEVICE_CPU), EnqueueOp<true>);
TG_REGISTER_KERNEL(KernelDefBuilder("QueueDequeueV2").Device(DEVICE_CPU), DequeueOp<false>);
TG_REGISTER_KERNEL(KernelDefBuilder("QueueDequeueManyV2").Device(DEVICE_CPU).HostMemory("n"),
                   DequeueOp<true>);
TG_REGISTER_KERNEL(KernelDefBuilder("QueueCloseV2").Device(DEVICE_CPU), QueueCloseOp);
TG_REGISTER_KERNEL(KernelDefBuilder("QueueSizeV2").Device(DEVICE_CPU), QueueSizeOp);

}  // namespace tensorgrid
