#include "kernels/data_flow/fifo_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/platform/status.h"

namespace tensorgrid {

// One enqueue (rows still to add) or dequeue (elements collected so far) that
// could not finish when it was made.
struct FIFOQueue::Attempt {
  int64_t id = 0;
  bool is_enqueue = false;
  std::deque<Tuple> rows;    // enqueue
  int64_t total_rows = 0;    // enqueue
  int64_t requested = 0;     // dequeue
  std::vector<Tuple> taken;  // dequeue
  CancellationManager* cancellation = nullptr;
  CancellationManager::Token token = 0;
  bool registered = false;
  DoneCallback enqueue_done;
  DequeueCallback dequeue_done;
};

namespace {

std::string TypeList(const std::vector<DataType>& types) {
  return absl::StrJoin(types, ", ",
                       [](std::string* out, DataType t) { out->append(DataTypeString(t)); });
}

std::string ShapeList(const std::vector<PartialTensorShape>& shapes) {
  return absl::StrJoin(shapes, ", ", [](std::string* out, const PartialTensorShape& s) {
    out->append(s.DebugString());
  });
}

bool SameShapes(const std::vector<PartialTensorShape>& a,
                const std::vector<PartialTensorShape>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].DebugString() != b[i].DebugString()) return false;
  }
  return true;
}

}  // namespace

FIFOQueue::FIFOQueue(std::string name, std::vector<DataType> component_types,
                     std::vector<PartialTensorShape> shapes, int64_t capacity)
    : name_(std::move(name)),
      component_types_(std::move(component_types)),
      shapes_(std::move(shapes)),
      capacity_(capacity) {}

FIFOQueue::~FIFOQueue() = default;

absl::Status FIFOQueue::Validate(const std::string& name,
                                 const std::vector<DataType>& component_types,
                                 const std::vector<PartialTensorShape>& shapes, int64_t capacity) {
  if (component_types.empty()) {
    return errors::InvalidArgument("FIFOQueue '", name, "' needs at least one component type");
  }
  if (!shapes.empty() && shapes.size() != component_types.size()) {
    return errors::InvalidArgument("FIFOQueue '", name, "' has ", component_types.size(),
                                   " component types but ", shapes.size(),
                                   " shapes (give none or one per component)");
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!shapes[i].IsFullyDefined()) {
      return errors::InvalidArgument("FIFOQueue '", name, "' component ", i, " has shape ",
                                     shapes[i].DebugString(), "; shapes must be fully defined");
    }
  }
  if (capacity == 0 || capacity < kUnbounded) {
    return errors::InvalidArgument("FIFOQueue '", name, "' has capacity ", capacity,
                                   "; it must be positive, or -1 for unbounded");
  }
  return absl::OkStatus();
}

absl::Status FIFOQueue::MatchesRequest(const std::vector<DataType>& component_types,
                                       const std::vector<PartialTensorShape>& shapes,
                                       int64_t capacity) const {
  if (component_types != component_types_) {
    return errors::InvalidArgument("shared FIFOQueue '", name_, "' has component types (",
                                   TypeList(component_types_), ") but requested component types (",
                                   TypeList(component_types), ")");
  }
  if (!SameShapes(shapes, shapes_)) {
    return errors::InvalidArgument("shared FIFOQueue '", name_, "' has shapes (",
                                   ShapeList(shapes_), ") but requested shapes (",
                                   ShapeList(shapes), ")");
  }
  if (capacity != capacity_) {
    return errors::InvalidArgument("shared FIFOQueue '", name_, "' has capacity ", capacity_,
                                   " but requested capacity ", capacity);
  }
  return absl::OkStatus();
}

absl::Status FIFOQueue::ValidateTuple(const Tuple& tuple) const {
  if (tuple.size() != component_types_.size()) {
    return errors::InvalidArgument("FIFOQueue '", name_, "' has ", component_types_.size(),
                                   " components, got ", tuple.size());
  }
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (tuple[i].dtype() != component_types_[i]) {
      return errors::InvalidArgument("type mismatch in tuple component ", i, " of FIFOQueue '",
                                     name_, "': expected ", DataTypeString(component_types_[i]),
                                     ", got ", DataTypeString(tuple[i].dtype()));
    }
    if (!shapes_.empty() && !shapes_[i].IsCompatibleWith(tuple[i].shape())) {
      return errors::InvalidArgument("shape mismatch in tuple component ", i, " of FIFOQueue '",
                                     name_, "': expected ", shapes_[i].DebugString(), ", got ",
                                     tuple[i].shape().DebugString());
    }
  }
  return absl::OkStatus();
}

absl::Status FIFOQueue::ValidateManyTuple(const Tuple& batch) const {
  if (batch.size() != component_types_.size()) {
    return errors::InvalidArgument("FIFOQueue '", name_, "' has ", component_types_.size(),
                                   " components, got ", batch.size());
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    const Tensor& t = batch[i];
    if (t.dtype() != component_types_[i]) {
      return errors::InvalidArgument("type mismatch in tuple component ", i, " of FIFOQueue '",
                                     name_, "': expected ", DataTypeString(component_types_[i]),
                                     ", got ", DataTypeString(t.dtype()));
    }
    if (t.dims() == 0) {
      return errors::InvalidArgument("tuple component ", i, " of an enqueue of many to FIFOQueue '",
                                     name_, "' is a scalar; it needs a batch dimension 0");
    }
    if (t.dim_size(0) != batch[0].dim_size(0)) {
      return errors::InvalidArgument("tuple components of an enqueue of many to FIFOQueue '", name_,
                                     "' disagree on the batch size: component 0 has ",
                                     batch[0].dim_size(0), " rows, component ", i, " has ",
                                     t.dim_size(0));
    }
    TensorShape element = t.shape();
    element.RemoveDim(0);
    if (!shapes_.empty() && !shapes_[i].IsCompatibleWith(element)) {
      return errors::InvalidArgument("shape mismatch in tuple component ", i, " of FIFOQueue '",
                                     name_, "': expected elements of shape ",
                                     shapes_[i].DebugString(), ", got a batch of shape ",
                                     t.shape().DebugString());
    }
  }
  return absl::OkStatus();
}

void FIFOQueue::TryEnqueue(Tuple tuple, CancellationManager* cancellation, DoneCallback done) {
  auto a = std::make_unique<Attempt>();
  a->is_enqueue = true;
  a->rows.push_back(std::move(tuple));
  a->total_rows = 1;
  a->enqueue_done = std::move(done);
  AddAttempt(std::move(a), cancellation);
}

void FIFOQueue::TryEnqueueMany(const Tuple& batch, CancellationManager* cancellation,
                               DoneCallback done) {
  auto a = std::make_unique<Attempt>();
  a->is_enqueue = true;
  const int64_t n = batch[0].dim_size(0);
  for (int64_t r = 0; r < n; ++r) {
    Tuple row;
    row.reserve(batch.size());
    for (const Tensor& t : batch) {
      TensorShape element = t.shape();
      element.RemoveDim(0);
      row.push_back(t.Slice(r, r + 1).Reshaped(element));  // shares the batch's buffer
    }
    a->rows.push_back(std::move(row));
  }
  a->total_rows = n;
  a->enqueue_done = std::move(done);
  AddAttempt(std::move(a), cancellation);
}

void FIFOQueue::TryDequeue(int64_t n, CancellationManager* cancellation, DequeueCallback done) {
  auto a = std::make_unique<Attempt>();
  a->requested = n;
  a->dequeue_done = std::move(done);
  AddAttempt(std::move(a), cancellation);
}

void FIFOQueue::AddAttempt(std::unique_ptr<Attempt> attempt, CancellationManager* cancellation) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    if (attempt->is_enqueue && closed_) {
      done.push_back([cb = std::move(attempt->enqueue_done), s = Closed()] { cb(s); });
    } else {
      const int64_t id = attempt->id = next_attempt_id_++;
      Attempt* a = attempt.get();
      auto& line = a->is_enqueue ? enqueues_ : dequeues_;
      line.push_back(std::move(attempt));
      FlushLocked(&done);
      bool pending = false;
      for (const auto& p : line) pending = pending || p->id == id;
      // Only an attempt that has to wait listens for cancellation. The
      // callback may run at once on another thread; it waits for mu_.
      if (pending && cancellation != nullptr) {
        a->cancellation = cancellation;
        a->registered = cancellation->RegisterCallback(
            &a->token, [self = shared_from_this(), id] { self->Cancel(id); });
        // A step cancelled already fails the attempt the same way.
        if (!a->registered) CancelLocked(id, &done);
      }
    }
  }
  for (Completion& c : done) c();
}

void FIFOQueue::Cancel(int64_t id) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    CancelLocked(id, &done);
  }
  for (Completion& c : done) c();
}

void FIFOQueue::CancelLocked(int64_t id, std::vector<Completion>* done) {
  for (auto* line : {&enqueues_, &dequeues_}) {
    for (auto it = line->begin(); it != line->end(); ++it) {
      if ((*it)->id != id) continue;
      std::unique_ptr<Attempt> a = std::move(*it);
      line->erase(it);
      if (a->is_enqueue) {
        const int64_t added = a->total_rows - static_cast<int64_t>(a->rows.size());
        std::string what =
            absl::StrCat("Enqueue operation on FIFOQueue '", name_, "' was cancelled");
        if (added > 0)
          absl::StrAppend(&what, " after ", added, " of ", a->total_rows, " elements went in");
        done->push_back([cb = std::move(a->enqueue_done), what] { cb(errors::Cancelled(what)); });
      } else {
        GiveBackLocked(*a);
        done->push_back([cb = std::move(a->dequeue_done), name = name_] {
          cb(errors::Cancelled("Dequeue operation on FIFOQueue '", name, "' was cancelled"), {});
        });
      }
      // The attempt no longer holds up the ones behind it.
      FlushLocked(done);
      return;
    }
  }
  // Not found: the attempt completed before its cancellation ran.
}

void FIFOQueue::FlushLocked(std::vector<Completion>* done) {
  bool progress = true;
  while (progress) {
    progress = false;
    while (!enqueues_.empty()) {
      Attempt& a = *enqueues_.front();
      const size_t before = a.rows.size();
      const bool finished = ServeEnqueue(a);
      progress = progress || a.rows.size() != before;
      if (!finished) break;
      Forget(a);
      done->push_back([cb = std::move(a.enqueue_done)] { cb(absl::OkStatus()); });
      enqueues_.pop_front();
      progress = true;
    }
    while (!dequeues_.empty()) {
      Attempt& a = *dequeues_.front();
      const size_t before = a.taken.size();
      const bool finished = ServeDequeue(a, done);
      progress = progress || a.taken.size() != before;
      if (!finished) break;
      dequeues_.pop_front();
      progress = true;
    }
  }
}

bool FIFOQueue::ServeEnqueue(Attempt& a) {
  while (!a.rows.empty() &&
         (capacity_ == kUnbounded || static_cast<int64_t>(elements_.size()) < capacity_)) {
    elements_.push_back(std::move(a.rows.front()));
    a.rows.pop_front();
  }
  return a.rows.empty();
}

bool FIFOQueue::ServeDequeue(Attempt& a, std::vector<Completion>* done) {
  while (static_cast<int64_t>(a.taken.size()) < a.requested && !elements_.empty()) {
    a.taken.push_back(std::move(elements_.front()));
    elements_.pop_front();
  }
  if (static_cast<int64_t>(a.taken.size()) == a.requested) {
    Forget(a);
    done->push_back([cb = std::move(a.dequeue_done), taken = std::move(a.taken)]() mutable {
      cb(absl::OkStatus(), std::move(taken));
    });
    return true;
  }
  // Closed, dry, and no enqueue left that could refill it: this one fails,
  // and what it collected goes back for smaller dequeues behind it.
  if (closed_ && elements_.empty() && enqueues_.empty()) {
    GiveBackLocked(a);
    Forget(a);
    done->push_back([cb = std::move(a.dequeue_done), s = Insufficient(a.requested)] { cb(s, {}); });
    return true;
  }
  return false;
}

void FIFOQueue::GiveBackLocked(Attempt& a) {
  for (auto it = a.taken.rbegin(); it != a.taken.rend(); ++it) elements_.push_front(std::move(*it));
  a.taken.clear();
}

void FIFOQueue::Forget(Attempt& a) {
  if (a.registered) a.cancellation->DeregisterCallback(a.token);
  a.registered = false;
}

void FIFOQueue::Close(bool cancel_pending_enqueues) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    if (cancel_pending_enqueues) {
      for (auto& a : enqueues_) {
        Forget(*a);
        done.push_back([cb = std::move(a->enqueue_done), s = Closed()] { cb(s); });
      }
      enqueues_.clear();
    }
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
}

absl::Status FIFOQueue::Closed() const {
  return errors::Cancelled("FIFOQueue '", name_, "' is closed");
}

absl::Status FIFOQueue::Insufficient(int64_t requested) const {
  return errors::OutOfRange("FIFOQueue '", name_,
                            "' is closed and has insufficient elements (requested ", requested,
                            ", current size ", elements_.size(), ")");
}

int64_t FIFOQueue::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(elements_.size());
}

bool FIFOQueue::is_closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

int64_t FIFOQueue::num_pending_enqueues() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(enqueues_.size());
}

int64_t FIFOQueue::num_pending_dequeues() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(dequeues_.size());
}

}  // namespace tensorgrid
