// Timer: runs callbacks at given times on one background thread, for the
// many short deadlines a busy worker arms and almost always disarms (a step
// timeout per partition) — a thread per deadline would cost more than the
// step.
//
//   Timer timer;
//   Timer::Id id = timer.Schedule(absl::Now() + absl::Seconds(5), [] { ... });
//   if (timer.Cancel(id)) { /* it will not run */ }
//
// Callbacks run on the timer's thread, one at a time, and must be short (hand
// real work elsewhere). Thread-safe. The destructor drops callbacks not yet
// run and waits for one that is running.
#ifndef TENSORGRID_CORE_PLATFORM_TIMER_H_
#define TENSORGRID_CORE_PLATFORM_TIMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tensorgrid {

class Timer {
 public:
  using Id = uint64_t;

  Timer();
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Runs `callback` at `when` (at once if that has passed).
  Id Schedule(absl::Time when, std::function<void()> callback);
  // True if the callback was removed before it started.
  bool Cancel(Id id);

 private:
  void Loop();

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Id next_id_ ABSL_GUARDED_BY(mu_) = 0;
  // When the loop means to wake next (InfiniteFuture: when something is
  // scheduled), and whether an entry came in that is due before that. Only
  // such an entry wakes the loop: a busy worker arms a deadline per request
  // and cancels it a moment later, and waking the loop for each of those,
  // which are never due before the one it already waits for, cost a thread
  // switch per request (docs/PERFORMANCE.md, issue 19).
  absl::Time sleeping_until_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool earlier_ ABSL_GUARDED_BY(mu_) = false;
  // Ordered by time, then id; `by_id_` finds an entry's key.
  std::map<std::pair<absl::Time, Id>, std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::map<Id, absl::Time> by_id_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest exists
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_TIMER_H_
