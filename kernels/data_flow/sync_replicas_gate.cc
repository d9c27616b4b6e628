#include "kernels/data_flow/sync_replicas_gate.h"

#include <utility>

#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

struct SyncReplicasGate::Waiter {
  int64_t id = 0;
  int64_t replica = 0;     // admissions only
  int64_t local_step = 0;  // admissions only
  CancellationManager* cancellation = nullptr;
  CancellationManager::Token token = 0;
  bool registered = false;
  bool take = false;
  StepCallback done;

  const char* what() const { return take ? "Take" : "Admit"; }
};

SyncReplicasGate::SyncReplicasGate(std::string name, int64_t replicas_to_aggregate,
                                   bool one_per_replica)
    : name_(std::move(name)),
      replicas_to_aggregate_(replicas_to_aggregate),
      one_per_replica_(one_per_replica) {
  TG_CHECK(replicas_to_aggregate_ >= 1);
}

SyncReplicasGate::~SyncReplicasGate() = default;

absl::Status SyncReplicasGate::MatchesRequest(int64_t replicas_to_aggregate,
                                              bool one_per_replica) const {
  if (replicas_to_aggregate != replicas_to_aggregate_ || one_per_replica != one_per_replica_) {
    return errors::InvalidArgument(
        "shared SyncReplicasGate '", name_, "' aggregates ", replicas_to_aggregate_,
        one_per_replica_ ? " (one per replica)" : "", " but one aggregating ",
        replicas_to_aggregate, one_per_replica ? " (one per replica)" : "", " was requested");
  }
  return absl::OkStatus();
}

SyncReplicasGate::Completion SyncReplicasGate::Finish(std::unique_ptr<Waiter> waiter,
                                                      absl::Status status, int64_t step) {
  if (waiter->registered) waiter->cancellation->DeregisterCallback(waiter->token);
  return [done = std::move(waiter->done), status = std::move(status), step] { done(status, step); };
}

int64_t SyncReplicasGate::AdmitLocked(int64_t replica, int64_t local_step) {
  if (local_step < step_) return kNotCounted;                   // stale
  if (admitted_ >= replicas_to_aggregate_) return kNotCounted;  // the step is full
  if (one_per_replica_ && replicas_.count(replica) > 0) return kNotCounted;
  ++admitted_;
  if (replica >= 0) replicas_.insert(replica);
  return step_;
}

void SyncReplicasGate::FlushLocked(std::vector<Completion>* done) {
  if (!closed_.ok()) {
    for (auto* waiting : {&admits_, &takes_}) {
      for (auto& w : *waiting) done->push_back(Finish(std::move(w), closed_, kNotCounted));
      waiting->clear();
    }
    return;
  }
  if (!open_) return;
  while (!admits_.empty()) {
    std::unique_ptr<Waiter> w = std::move(admits_.front());
    admits_.pop_front();
    const int64_t step = AdmitLocked(w->replica, w->local_step);
    done->push_back(Finish(std::move(w), absl::OkStatus(), step));
  }
  while (!takes_.empty() && admitted_ >= replicas_to_aggregate_) {
    std::unique_ptr<Waiter> w = std::move(takes_.front());
    takes_.pop_front();
    const int64_t completed = step_++;
    admitted_ = 0;
    replicas_.clear();
    done->push_back(Finish(std::move(w), absl::OkStatus(), completed));
  }
}

void SyncReplicasGate::Wait(std::unique_ptr<Waiter> waiter, CancellationManager* cancellation,
                            std::vector<Completion>* done) {
  const int64_t id = waiter->id = next_id_++;
  Waiter* w = waiter.get();
  auto& waiting = w->take ? takes_ : admits_;
  waiting.push_back(std::move(waiter));
  FlushLocked(done);
  bool pending = false;
  for (const auto& p : waiting) pending = pending || p->id == id;
  if (!pending || cancellation == nullptr) return;
  w->cancellation = cancellation;
  w->registered = cancellation->RegisterCallback(
      &w->token, [self = shared_from_this(), id] { self->Cancel(id); });
  if (w->registered) return;
  // The step was cancelled already.
  for (auto it = waiting.begin(); it != waiting.end(); ++it) {
    if ((*it)->id != id) continue;
    done->push_back(Finish(
        std::move(*it),
        errors::Cancelled(w->what(), " operation on SyncReplicasGate '", name_, "' was cancelled"),
        kNotCounted));
    waiting.erase(it);
    return;
  }
}

void SyncReplicasGate::Admit(int64_t replica, int64_t local_step, CancellationManager* cancellation,
                             StepCallback done) {
  std::vector<Completion> completions;
  {
    absl::MutexLock lock(&mu_);
    auto w = std::make_unique<Waiter>();
    w->replica = replica;
    w->local_step = local_step;
    w->done = std::move(done);
    Wait(std::move(w), cancellation, &completions);
  }
  for (Completion& c : completions) c();
}

void SyncReplicasGate::Take(CancellationManager* cancellation, StepCallback done) {
  std::vector<Completion> completions;
  {
    absl::MutexLock lock(&mu_);
    auto w = std::make_unique<Waiter>();
    w->take = true;
    w->done = std::move(done);
    Wait(std::move(w), cancellation, &completions);
  }
  for (Completion& c : completions) c();
}

void SyncReplicasGate::Cancel(int64_t id) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto* waiting : {&admits_, &takes_}) {
      for (auto it = waiting->begin(); it != waiting->end(); ++it) {
        if ((*it)->id != id) continue;
        const char* what = (*it)->what();
        // The callback is running: there is nothing left to deregister.
        (*it)->registered = false;
        done.push_back(Finish(
            std::move(*it),
            errors::Cancelled(what, " operation on SyncReplicasGate '", name_, "' was cancelled"),
            kNotCounted));
        waiting->erase(it);
        break;
      }
    }
  }
  for (Completion& c : done) c();
}

void SyncReplicasGate::Open(int64_t step) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    if (!open_ || step != step_) {
      step_ = step;
      admitted_ = 0;
      replicas_.clear();
    }
    open_ = true;
    closed_ = absl::OkStatus();
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
}

void SyncReplicasGate::Close(absl::Status reason) {
  TG_CHECK(!reason.ok());
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    if (closed_.ok()) closed_ = std::move(reason);
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
}

SyncReplicasGate::State SyncReplicasGate::state() const {
  absl::MutexLock lock(&mu_);
  State s;
  s.open = open_;
  s.step = step_;
  s.admitted = admitted_;
  s.replicas.assign(replicas_.begin(), replicas_.end());
  s.closed = closed_;
  s.pending_admits = static_cast<int64_t>(admits_.size());
  s.pending_takes = static_cast<int64_t>(takes_.size());
  return s;
}

}  // namespace tensorgrid
