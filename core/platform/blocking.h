// Blocking forms of callback-style calls:
//   absl::Status s = WaitForCallback([&](StatusCallback done) { RunAsync(args, done); });
#ifndef TENSORGRID_CORE_PLATFORM_BLOCKING_H_
#define TENSORGRID_CORE_PLATFORM_BLOCKING_H_

#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"

namespace tensorgrid {

using StatusCallback = std::function<void(absl::Status)>;

// Calls `start(done)` and blocks until `done` has been called (on any thread,
// possibly inside `start`); returns the status `done` received.
inline absl::Status WaitForCallback(const std::function<void(StatusCallback)>& start) {
  absl::Notification finished;
  absl::Status status;
  start([&](absl::Status s) {
    status = std::move(s);
    finished.Notify();
  });
  finished.WaitForNotification();
  return status;
}

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_BLOCKING_H_
