// CancellationManager: lets a step's blocking work (async kernels, receives)
// learn that the step was cancelled. Thread-safe.
#ifndef TENSORGRID_CORE_FRAMEWORK_CANCELLATION_H_
#define TENSORGRID_CORE_FRAMEWORK_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace tensorgrid {

class CancellationManager {
 public:
  using Token = int64_t;
  // Runs every registered callback once; later registrations fail.
  void StartCancel();
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Returns false (and does not register) if cancellation already started.
  bool RegisterCallback(Token* token, std::function<void()> callback);
  // Returns true if the callback was removed before it ran.
  bool DeregisterCallback(Token token);

 private:
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  Token next_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<Token, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_CANCELLATION_H_
