#include "core/platform/timer.h"

namespace tensorgrid {

Timer::Timer() : thread_([this] { Loop(); }) {}

Timer::~Timer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

Timer::Id Timer::Schedule(absl::Time when, std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  const Id id = next_id_++;
  ++scheduled_;
  queue_.emplace(std::make_pair(when, id), std::move(callback));
  by_id_.emplace(id, when);
  return id;
}

bool Timer::Cancel(Id id) {
  absl::MutexLock lock(&mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return false;
  queue_.erase(std::make_pair(it->second, id));
  by_id_.erase(it);
  return true;
}

void Timer::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      mu_.Await(absl::Condition(
          +[](Timer* t)
               ABSL_NO_THREAD_SAFETY_ANALYSIS { return t->stopping_ || !t->queue_.empty(); },
          this));
      continue;
    }
    const absl::Time first = queue_.begin()->first.first;
    if (absl::Now() < first) {
      // Wakes early when an entry is scheduled (it may come first) or for
      // stopping; a cancelled first entry just means waking for nothing.
      struct Seen {
        Timer* timer;
        uint64_t scheduled;
      } seen{this, scheduled_};
      mu_.AwaitWithDeadline(absl::Condition(
                                +[](Seen* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                  return s->timer->stopping_ ||
                                         s->timer->scheduled_ != s->scheduled;
                                },
                                &seen),
                            first);
      continue;
    }
    auto entry = queue_.begin();
    std::function<void()> callback = std::move(entry->second);
    by_id_.erase(entry->first.second);
    queue_.erase(entry);
    mu_.Unlock();
    callback();
    mu_.Lock();
  }
}

}  // namespace tensorgrid
