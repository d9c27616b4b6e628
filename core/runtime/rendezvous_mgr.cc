#include "core/runtime/rendezvous_mgr.h"

#include "core/platform/status.h"

namespace tensorgrid {

std::shared_ptr<Rendezvous> RendezvousMgr::FindOrCreate(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  auto& r = steps_[step_id];
  if (r == nullptr) r = std::make_shared<LocalRendezvous>();
  return r;
}

std::shared_ptr<Rendezvous> RendezvousMgr::FindOrCreateUnlessCleaned(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  if (cleaned_.count(step_id)) return nullptr;
  auto& r = steps_[step_id];
  if (r == nullptr) r = std::make_shared<LocalRendezvous>();
  return r;
}

void RendezvousMgr::Abort(int64_t step_id, const absl::Status& status) {
  FindOrCreate(step_id)->StartAbort(status);
}

void RendezvousMgr::Cleanup(int64_t step_id) {
  std::shared_ptr<Rendezvous> r;
  {
    absl::MutexLock lock(&mu_);
    if (cleaned_.insert(step_id).second) {
      cleaned_order_.push_back(step_id);
      if (cleaned_order_.size() > kRememberCleaned) {
        cleaned_.erase(cleaned_order_.front());
        cleaned_order_.pop_front();
      }
    }
    auto it = steps_.find(step_id);
    if (it == steps_.end()) return;
    r = std::move(it->second);
    steps_.erase(it);
  }
  r->StartAbort(errors::Aborted("step ", step_id, " was cleaned up"));
}

}  // namespace tensorgrid
