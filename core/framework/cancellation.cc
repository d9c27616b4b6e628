#include "core/framework/cancellation.h"

namespace tensorgrid {

void CancellationManager::StartCancel() {
  absl::flat_hash_map<Token, std::function<void()>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_.exchange(true)) return;
    callbacks.swap(callbacks_);
  }
  for (auto& [token, cb] : callbacks) cb();
}

bool CancellationManager::RegisterCallback(Token* token, std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  if (cancelled_.load()) return false;
  *token = next_++;
  callbacks_.emplace(*token, std::move(callback));
  return true;
}

bool CancellationManager::DeregisterCallback(Token token) {
  absl::MutexLock lock(&mu_);
  return callbacks_.erase(token) > 0;
}

}  // namespace tensorgrid
