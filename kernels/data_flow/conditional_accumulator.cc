#include "kernels/data_flow/conditional_accumulator.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

struct ConditionalAccumulator::Take {
  int64_t id = 0;
  int64_t num_required = 0;
  CancellationManager* cancellation = nullptr;
  CancellationManager::Token token = 0;
  bool registered = false;
  TakeCallback done;
};

namespace {

template <typename T>
void AddInto(const Tensor& gradient, Tensor* sum) {
  T* dst = sum->data<T>();
  const T* src = gradient.data<T>();
  const int64_t n = gradient.NumElements();
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

template <typename T>
void DivideBy(int64_t count, Tensor* sum) {
  T* dst = sum->data<T>();
  const int64_t n = sum->NumElements();
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] / static_cast<T>(count));
}

// Runs F<T> for the accumulator's dtype (one of IsSupported's).
template <template <typename> class F, typename... Args>
void ForDtype(DataType dtype, Args&&... args) {
  switch (dtype) {
    case DT_FLOAT: return F<float>()(std::forward<Args>(args)...);
    case DT_DOUBLE: return F<double>()(std::forward<Args>(args)...);
    case DT_INT32: return F<int32_t>()(std::forward<Args>(args)...);
    case DT_INT64: return F<int64_t>()(std::forward<Args>(args)...);
    default: TG_CHECK(false && "unsupported accumulator dtype");
  }
}

template <typename T>
struct Add {
  void operator()(const Tensor& gradient, Tensor* sum) const { AddInto<T>(gradient, sum); }
};
template <typename T>
struct Divide {
  void operator()(int64_t count, Tensor* sum) const { DivideBy<T>(count, sum); }
};

}  // namespace

ConditionalAccumulator::ConditionalAccumulator(std::string name, DataType dtype,
                                               PartialTensorShape shape, Reduction reduction)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)), reduction_(reduction) {}

ConditionalAccumulator::~ConditionalAccumulator() = default;

bool ConditionalAccumulator::IsSupported(DataType dtype) {
  return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_INT32 || dtype == DT_INT64;
}

absl::StatusOr<ConditionalAccumulator::Reduction> ConditionalAccumulator::ParseReduction(
    const std::string& name) {
  if (name == "MEAN") return Reduction::kMean;
  if (name == "SUM") return Reduction::kSum;
  return errors::InvalidArgument("reduction_type must be MEAN or SUM, got '", name, "'");
}

absl::Status ConditionalAccumulator::MatchesRequest(DataType dtype, const PartialTensorShape& shape,
                                                    Reduction reduction) const {
  if (dtype != dtype_ || shape.DebugString() != shape_.DebugString() || reduction != reduction_) {
    auto describe = [](DataType t, const PartialTensorShape& s, Reduction r) {
      return absl::StrCat(DataTypeString(t), " ", s.DebugString(),
                          r == Reduction::kMean ? " MEAN" : " SUM");
    };
    return errors::InvalidArgument("shared ConditionalAccumulator '", name_, "' is ",
                                   describe(dtype_, shape_, reduction_), " but a ",
                                   describe(dtype, shape, reduction), " one was requested");
  }
  return absl::OkStatus();
}

absl::Status ConditionalAccumulator::ValidateGradientLocked(const Tensor& gradient) const {
  if (gradient.dtype() != dtype_) {
    return errors::InvalidArgument("ConditionalAccumulator '", name_, "' accumulates ",
                                   DataTypeString(dtype_), " gradients, got a ",
                                   DataTypeString(gradient.dtype()), " gradient");
  }
  if (!shape_.IsCompatibleWith(gradient.shape())) {
    return errors::InvalidArgument("shape mismatch in gradient for ConditionalAccumulator '", name_,
                                   "': expected ", shape_.DebugString(), ", got ",
                                   gradient.shape().DebugString());
  }
  const Tensor* before = count_ > 0 ? &sum_ : nullptr;
  if (before == nullptr && !ticketed_.empty()) before = &ticketed_.begin()->second.gradient;
  if (before != nullptr && before->shape() != gradient.shape()) {
    return errors::InvalidArgument("shape mismatch in gradient for ConditionalAccumulator '", name_,
                                   "': expected ", before->shape().DebugString(),
                                   " like the gradients accumulated so far, got ",
                                   gradient.shape().DebugString());
  }
  return absl::OkStatus();
}

void ConditionalAccumulator::DropTicketedBeforeLocked(int64_t step) {
  for (auto it = ticketed_.begin(); it != ticketed_.end();) {
    it = it->second.step < step ? ticketed_.erase(it) : std::next(it);
  }
}

absl::Status ConditionalAccumulator::ApplyTicketedGradient(int64_t local_step, int64_t ticket,
                                                           const Tensor& gradient) {
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(ValidateGradientLocked(gradient));
  if (ticket < 0) return absl::OkStatus();  // not counted
  if (local_step < global_step_) {          // stale: dropped
    ticketed_.erase(ticket);
    return absl::OkStatus();
  }
  ticketed_[ticket] = Ticketed{local_step, gradient.DeepCopy()};
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ConditionalAccumulator::TakeTicketedGradients(
    int64_t step, absl::Span<const int64_t> tickets) {
  absl::MutexLock lock(&mu_);
  if (tickets.empty()) {
    return errors::InvalidArgument("ConditionalAccumulator '", name_,
                                   "': a ticketed take needs at least one ticket");
  }
  if (step < global_step_) {
    return errors::FailedPrecondition("ConditionalAccumulator '", name_, "': global step ", step,
                                      " was taken already (its global step is ", global_step_, ")");
  }
  Tensor sum;
  for (size_t i = 0; i < tickets.size(); ++i) {
    auto it = ticketed_.find(tickets[i]);
    if (it == ticketed_.end() || it->second.step != step) {
      return errors::FailedPrecondition(
          "ConditionalAccumulator '", name_, "' holds no gradient of ticket ", tickets[i],
          " for global step ", step, " (it was lost: did its task restart?)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (tickets[j] == tickets[i]) {
        return errors::InvalidArgument("ConditionalAccumulator '", name_, "': ticket ", tickets[i],
                                       " is listed twice");
      }
    }
    if (i == 0) {
      sum = it->second.gradient.DeepCopy();
    } else {
      ForDtype<Add>(dtype_, it->second.gradient, &sum);
    }
  }
  const int64_t n = static_cast<int64_t>(tickets.size());
  if (reduction_ == Reduction::kMean) ForDtype<Divide>(dtype_, n, &sum);
  global_step_ = step + 1;
  DropTicketedBeforeLocked(global_step_);
  return sum;
}

absl::Status ConditionalAccumulator::ApplyGradient(int64_t local_step, const Tensor& gradient) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    TG_RETURN_IF_ERROR(ValidateGradientLocked(gradient));
    if (local_step < global_step_) return absl::OkStatus();  // stale: dropped
    if (count_ == 0) {
      sum_ = gradient.DeepCopy();
    } else {
      ForDtype<Add>(dtype_, gradient, &sum_);
    }
    ++count_;
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
  return absl::OkStatus();
}

void ConditionalAccumulator::TakeGradient(int64_t num_required, CancellationManager* cancellation,
                                          TakeCallback done) {
  if (num_required < 1) {
    done(errors::InvalidArgument("ConditionalAccumulator '", name_,
                                 "': argument num_required must be positive, but was ",
                                 num_required),
         Tensor());
    return;
  }
  std::vector<Completion> completions;
  {
    absl::MutexLock lock(&mu_);
    auto take = std::make_unique<Take>();
    const int64_t id = take->id = next_take_id_++;
    take->num_required = num_required;
    take->done = std::move(done);
    Take* t = take.get();
    takes_.push_back(std::move(take));
    FlushLocked(&completions);
    bool pending = false;
    for (const auto& p : takes_) pending = pending || p->id == id;
    if (pending && cancellation != nullptr) {
      t->cancellation = cancellation;
      t->registered = cancellation->RegisterCallback(
          &t->token, [self = shared_from_this(), id] { self->Cancel(id); });
      if (!t->registered) CancelLocked(id, &completions);
    }
  }
  for (Completion& c : completions) c();
}

void ConditionalAccumulator::FlushLocked(std::vector<Completion>* done) {
  while (!takes_.empty() && count_ > 0 && count_ >= takes_.front()->num_required) {
    std::unique_ptr<Take> take = std::move(takes_.front());
    takes_.pop_front();
    if (take->registered) take->cancellation->DeregisterCallback(take->token);
    if (reduction_ == Reduction::kMean) ForDtype<Divide>(dtype_, count_, &sum_);
    Tensor result = std::move(sum_);
    sum_ = Tensor();
    count_ = 0;
    ++global_step_;
    done->push_back([cb = std::move(take->done), result] { cb(absl::OkStatus(), result); });
  }
}

void ConditionalAccumulator::Cancel(int64_t id) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    CancelLocked(id, &done);
  }
  for (Completion& c : done) c();
}

void ConditionalAccumulator::CancelLocked(int64_t id, std::vector<Completion>* done) {
  for (auto it = takes_.begin(); it != takes_.end(); ++it) {
    if ((*it)->id != id) continue;
    done->push_back([cb = std::move((*it)->done), name = name_] {
      cb(errors::Cancelled("TakeGradient operation on ConditionalAccumulator '", name,
                           "' was cancelled"),
         Tensor());
    });
    takes_.erase(it);
    // A smaller take behind it may be servable now.
    FlushLocked(done);
    return;
  }
}

void ConditionalAccumulator::SetGlobalStep(int64_t step) {
  absl::MutexLock lock(&mu_);
  global_step_ = step;
  DropTicketedBeforeLocked(step);
}

int64_t ConditionalAccumulator::num_accumulated() const {
  absl::MutexLock lock(&mu_);
  return count_ + static_cast<int64_t>(ticketed_.size());
}

int64_t ConditionalAccumulator::global_step() const {
  absl::MutexLock lock(&mu_);
  return global_step_;
}

int64_t ConditionalAccumulator::num_pending_takes() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(takes_.size());
}

}  // namespace tensorgrid
