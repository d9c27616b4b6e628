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
  if (when < sleeping_until_) earlier_ = true;
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
    const absl::Time first =
        queue_.empty() ? absl::InfiniteFuture() : queue_.begin()->first.first;
    if (queue_.empty() || absl::Now() < first) {
      // Wakes early when an entry due before `first` is scheduled, or for
      // stopping; a cancelled first entry just means waking for nothing.
      sleeping_until_ = first;
      earlier_ = false;
      const absl::Condition woken(
          +[](Timer* t) ABSL_NO_THREAD_SAFETY_ANALYSIS { return t->stopping_ || t->earlier_; },
          this);
      if (queue_.empty()) {
        mu_.Await(woken);
      } else {
        mu_.AwaitWithDeadline(woken, first);
      }
      sleeping_until_ = absl::InfinitePast();  // awake: nothing needs to wake it
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
