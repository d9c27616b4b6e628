#include "kernels/data_flow/sync_replicas_gate.h"

#include <algorithm>
#include <utility>

#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

struct SyncReplicasGate::Waiter {
  enum Kind { kAdmit, kTake, kAwait };
  Kind kind = kAdmit;
  int64_t id = 0;
  int64_t replica = 0;     // admissions only
  int64_t local_step = 0;  // admissions and awaits
  CancellationManager* cancellation = nullptr;
  CancellationManager::Token token = 0;
  bool registered = false;
  AdmitCallback done;  // a take or an await answers only the step

  const char* what() const { return kind == kAdmit ? "Admit" : kind == kTake ? "Take" : "Await"; }
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
                                                      absl::Status status, Admission answer) {
  if (waiter->registered) waiter->cancellation->DeregisterCallback(waiter->token);
  return [done = std::move(waiter->done), status = std::move(status), answer] {
    done(status, answer);
  };
}

SyncReplicasGate::Admission SyncReplicasGate::AdmitLocked(int64_t replica, int64_t local_step) {
  if (local_step < step_) return {};  // stale
  const int64_t committed = static_cast<int64_t>(committed_.size());
  if (committed >= replicas_to_aggregate_) return {};  // the step is full
  if (one_per_replica_ && replicas_.count(replica) > 0) return {};
  // Not counted yet: a replica that dies before it commits holds no place.
  const int64_t ticket = next_ticket_++;
  admitted_[ticket] = replica;
  return {step_, ticket};
}

void SyncReplicasGate::ClearStepLocked() {
  admitted_.clear();
  committed_.clear();
  replicas_.clear();
}

void SyncReplicasGate::FlushLocked(std::vector<Completion>* done) {
  if (!closed_.ok()) {
    for (auto* waiting : {&admits_, &takes_, &awaits_}) {
      for (auto& w : *waiting) done->push_back(Finish(std::move(w), closed_, Admission()));
      waiting->clear();
    }
    return;
  }
  if (!open_) return;
  while (!admits_.empty()) {
    std::unique_ptr<Waiter> w = std::move(admits_.front());
    admits_.pop_front();
    const Admission answer = AdmitLocked(w->replica, w->local_step);
    done->push_back(Finish(std::move(w), absl::OkStatus(), answer));
  }
  while (!takes_.empty() && static_cast<int64_t>(committed_.size()) >= replicas_to_aggregate_) {
    std::unique_ptr<Waiter> w = std::move(takes_.front());
    takes_.pop_front();
    taken_.step = step_++;
    taken_.tickets = std::move(committed_);
    ClearStepLocked();
    done->push_back(Finish(std::move(w), absl::OkStatus(), {taken_.step, kNoTicket}));
  }
  for (auto it = awaits_.begin(); it != awaits_.end();) {
    if ((*it)->local_step >= released_) {
      ++it;
      continue;
    }
    done->push_back(Finish(std::move(*it), absl::OkStatus(), {released_, kNoTicket}));
    it = awaits_.erase(it);
  }
}

std::deque<std::unique_ptr<SyncReplicasGate::Waiter>>& SyncReplicasGate::QueueOf(
    const Waiter& waiter) {
  switch (waiter.kind) {
    case Waiter::kAdmit: return admits_;
    case Waiter::kTake: return takes_;
    case Waiter::kAwait: break;
  }
  return awaits_;
}

void SyncReplicasGate::Wait(std::unique_ptr<Waiter> waiter, CancellationManager* cancellation,
                            std::vector<Completion>* done) {
  const int64_t id = waiter->id = next_id_++;
  Waiter* w = waiter.get();
  auto& waiting = QueueOf(*w);
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
        Admission()));
    waiting.erase(it);
    return;
  }
}

void SyncReplicasGate::Admit(int64_t replica, int64_t local_step, CancellationManager* cancellation,
                             AdmitCallback done) {
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

int64_t SyncReplicasGate::Commit(int64_t ticket) {
  std::vector<Completion> done;
  int64_t step = kNotCounted;
  {
    absl::MutexLock lock(&mu_);
    // A closed gate counts nothing more. The sender goes on to wait for a
    // token, which whoever closed the gate puts in (as for a worker
    // admitted before the close that is still applying its gradients), or
    // to await, which fails.
    if (!closed_.ok()) return kNotCounted;
    auto it = admitted_.find(ticket);
    if (it == admitted_.end()) return kNotCounted;  // no ticket, or the step is over
    const int64_t replica = it->second;
    admitted_.erase(it);
    if (static_cast<int64_t>(committed_.size()) >= replicas_to_aggregate_) return kNotCounted;
    if (one_per_replica_ && replicas_.count(replica) > 0) return kNotCounted;
    committed_.push_back(ticket);
    if (replica >= 0) replicas_.insert(replica);
    step = step_;
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
  return step;
}

void SyncReplicasGate::Take(CancellationManager* cancellation, StepCallback done) {
  std::vector<Completion> completions;
  {
    absl::MutexLock lock(&mu_);
    auto w = std::make_unique<Waiter>();
    w->kind = Waiter::kTake;
    w->done = [done = std::move(done)](absl::Status s, Admission a) { done(s, a.step); };
    Wait(std::move(w), cancellation, &completions);
  }
  for (Completion& c : completions) c();
}

void SyncReplicasGate::Await(int64_t local_step, CancellationManager* cancellation,
                             StepCallback done) {
  std::vector<Completion> completions;
  {
    absl::MutexLock lock(&mu_);
    auto w = std::make_unique<Waiter>();
    w->kind = Waiter::kAwait;
    w->local_step = local_step;
    w->done = [done = std::move(done)](absl::Status s, Admission a) { done(s, a.step); };
    Wait(std::move(w), cancellation, &completions);
  }
  for (Completion& c : completions) c();
}

void SyncReplicasGate::Release(int64_t step) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    released_ = std::max(released_, step);
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
}

void SyncReplicasGate::Cancel(int64_t id) {
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    for (auto* waiting : {&admits_, &takes_, &awaits_}) {
      for (auto it = waiting->begin(); it != waiting->end(); ++it) {
        if ((*it)->id != id) continue;
        const char* what = (*it)->what();
        // The callback is running: there is nothing left to deregister.
        (*it)->registered = false;
        done.push_back(Finish(
            std::move(*it),
            errors::Cancelled(what, " operation on SyncReplicasGate '", name_, "' was cancelled"),
            Admission()));
        waiting->erase(it);
        break;
      }
    }
  }
  for (Completion& c : done) c();
}

int64_t SyncReplicasGate::Open(int64_t step) {
  std::vector<Completion> done;
  int64_t epoch;
  {
    absl::MutexLock lock(&mu_);
    if (!open_ || step != step_) {
      step_ = step;
      ClearStepLocked();
      taken_ = Taken();
    }
    released_ = step;
    open_ = true;
    closed_ = absl::OkStatus();
    // Every replica waiting goes on from `step`: one that delivered for a
    // step this Open dropped (a chief that failed between its take and its
    // release reopens at the step it did not apply) must send it again.
    for (auto& w : awaits_)
      done.push_back(Finish(std::move(w), absl::OkStatus(), {step, kNoTicket}));
    awaits_.clear();
    epoch = ++epoch_;
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
  return epoch;
}

bool SyncReplicasGate::Close(absl::Status reason, int64_t epoch) {
  TG_CHECK(!reason.ok());
  std::vector<Completion> done;
  {
    absl::MutexLock lock(&mu_);
    if (epoch >= 0 && epoch != epoch_) return false;
    if (closed_.ok()) closed_ = std::move(reason);
    FlushLocked(&done);
  }
  for (Completion& c : done) c();
  return true;
}

SyncReplicasGate::Taken SyncReplicasGate::taken() const {
  absl::MutexLock lock(&mu_);
  return taken_;
}

SyncReplicasGate::State SyncReplicasGate::state() const {
  absl::MutexLock lock(&mu_);
  State s;
  s.open = open_;
  s.step = step_;
  s.committed = static_cast<int64_t>(committed_.size());
  s.replicas.assign(replicas_.begin(), replicas_.end());
  std::set<int64_t> uncommitted;
  for (const auto& [ticket, replica] : admitted_) {
    if (replica >= 0) uncommitted.insert(replica);
  }
  s.uncommitted_replicas.assign(uncommitted.begin(), uncommitted.end());
  s.released = released_;
  s.closed = closed_;
  s.pending_admits = static_cast<int64_t>(admits_.size());
  s.pending_takes = static_cast<int64_t>(takes_.size());
  s.pending_awaits = static_cast<int64_t>(awaits_.size());
  return s;
}

}  // namespace tensorgrid
