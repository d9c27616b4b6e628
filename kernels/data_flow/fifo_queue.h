// FIFOQueue: the resource behind FIFOQueueV2 — a bounded first-in first-out
// queue of tuples of tensors ("elements"), shared by every kernel that names
// it through the device's ResourceMgr (docs/queues.md).
//
//   auto q = std::make_shared<FIFOQueue>("q", std::vector<DataType>{DT_FLOAT},
//                                        std::vector<PartialTensorShape>{{2}}, /*capacity=*/10);
//   q->TryEnqueue({t}, &cancellation, [](absl::Status s) { ... });
//   q->TryDequeue(1, &cancellation, [](absl::Status s, std::vector<FIFOQueue::Tuple> got) { ... });
//
// Operations that cannot finish at once (enqueue on a full queue, dequeue of
// more elements than are there) become pending attempts, served strictly in
// arrival order, and complete from whichever thread makes them possible: a
// later enqueue, dequeue or Close. A pending attempt registers with its step's
// CancellationManager; a cancelled step fails it with Cancelled and leaves
// the queue as if the attempt had never been made, except that rows an
// enqueue of many already put in stay there (as in TensorFlow). A dequeue of
// many collects elements as they arrive (so it may ask for more than the
// capacity) and gives them back, in order, at the front of the queue if it
// is cancelled or the queue closes before it has enough.
//
// Callbacks run without the queue's lock held, on the thread that completed
// the attempt. Thread-safe.
#ifndef TENSORGRID_KERNELS_DATA_FLOW_FIFO_QUEUE_H_
#define TENSORGRID_KERNELS_DATA_FLOW_FIFO_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/cancellation.h"
#include "core/framework/resource_mgr.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

class FIFOQueue final : public ResourceBase, public std::enable_shared_from_this<FIFOQueue> {
 public:
  // One tensor per component.
  using Tuple = std::vector<Tensor>;
  using DoneCallback = std::function<void(absl::Status)>;
  // On success, exactly the elements asked for, oldest first.
  using DequeueCallback = std::function<void(absl::Status, std::vector<Tuple>)>;
  static constexpr int64_t kUnbounded = -1;

  // `shapes` is empty (elements of any shape) or one fully defined shape per
  // component; `capacity` is positive or kUnbounded. Check with Validate.
  FIFOQueue(std::string name, std::vector<DataType> component_types,
            std::vector<PartialTensorShape> shapes, int64_t capacity);
  ~FIFOQueue() override;
  // InvalidArgument for arguments the constructor does not accept.
  static absl::Status Validate(const std::string& name,
                               const std::vector<DataType>& component_types,
                               const std::vector<PartialTensorShape>& shapes, int64_t capacity);

  std::string TypeName() const override { return "FIFOQueue"; }
  const std::string& name() const { return name_; }
  const std::vector<DataType>& component_types() const { return component_types_; }
  const std::vector<PartialTensorShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }

  // InvalidArgument unless a node asking for a queue with these attributes
  // may share this one.
  absl::Status MatchesRequest(const std::vector<DataType>& component_types,
                              const std::vector<PartialTensorShape>& shapes,
                              int64_t capacity) const;
  // InvalidArgument naming the queue and the component unless `tuple` is one
  // element (ValidateTuple) or a batch of elements along dimension 0 that
  // agree in size (ValidateManyTuple).
  absl::Status ValidateTuple(const Tuple& tuple) const;
  absl::Status ValidateManyTuple(const Tuple& tuple) const;

  // Adds one element (TryEnqueue) or every row of a batch (TryEnqueueMany);
  // `done` gets OK once all are in, Cancelled if the queue is or gets closed
  // with cancel_pending_enqueues, or if `cancellation` (may be null) fires.
  // The tuple must have passed ValidateTuple / ValidateManyTuple.
  void TryEnqueue(Tuple tuple, CancellationManager* cancellation, DoneCallback done);
  void TryEnqueueMany(const Tuple& batch, CancellationManager* cancellation, DoneCallback done);
  // Removes `n` >= 0 elements; OutOfRange once the queue is closed and cannot
  // supply them, Cancelled if `cancellation` fires first.
  void TryDequeue(int64_t n, CancellationManager* cancellation, DequeueCallback done);

  // Later enqueues fail Cancelled; pending enqueues fail too if
  // `cancel_pending_enqueues`, else they may still complete. Dequeues go on
  // until the queue runs dry, then fail OutOfRange. Closing twice is fine.
  void Close(bool cancel_pending_enqueues);

  int64_t size() const;
  bool is_closed() const;
  // Attempts waiting: for tests and diagnostics.
  int64_t num_pending_enqueues() const;
  int64_t num_pending_dequeues() const;

 private:
  struct Attempt;
  using Completion = std::function<void()>;

  void AddAttempt(std::unique_ptr<Attempt> attempt, CancellationManager* cancellation);
  // Fails attempt `id` with Cancelled if it is still pending.
  void Cancel(int64_t id);
  void CancelLocked(int64_t id, std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Serves pending attempts in order until none can progress; completed
  // attempts leave `done` behind to be run after unlocking.
  void FlushLocked(std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ServeEnqueue(Attempt& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ServeDequeue(Attempt& a, std::vector<Completion>* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts a dequeue's collected elements back at the front, in order.
  void GiveBackLocked(Attempt& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stops listening for the attempt's step cancellation.
  static void Forget(Attempt& a);
  absl::Status Closed() const;
  absl::Status Insufficient(int64_t requested) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const std::vector<DataType> component_types_;
  const std::vector<PartialTensorShape> shapes_;
  const int64_t capacity_;

  mutable absl::Mutex mu_;
  std::deque<Tuple> elements_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_attempt_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::unique_ptr<Attempt>> enqueues_ ABSL_GUARDED_BY(mu_);
  std::deque<std::unique_ptr<Attempt>> dequeues_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_DATA_FLOW_FIFO_QUEUE_H_
