// RendezvousMgr: one rendezvous per step id, shared by every partition of
// that step that runs in this process.
#ifndef TENSORGRID_CORE_RUNTIME_RENDEZVOUS_MGR_H_
#define TENSORGRID_CORE_RUNTIME_RENDEZVOUS_MGR_H_

#include <deque>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/rendezvous.h"

namespace tensorgrid {

// Thread-safe.
class RendezvousMgr {
 public:
  std::shared_ptr<Rendezvous> FindOrCreate(int64_t step_id);
  // For a peer's RecvTensor, which may arrive before this task's partition of
  // the step starts: like FindOrCreate, but null for a step already cleaned up
  // (a late request must not leave a table behind that nobody cleans).
  std::shared_ptr<Rendezvous> FindOrCreateUnlessCleaned(int64_t step_id);
  // Aborts the step's rendezvous (creating it, so late partitions fail too).
  void Abort(int64_t step_id, const absl::Status& status);
  // Forgets the step; receivers still waiting get Aborted.
  void Cleanup(int64_t step_id);

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<int64_t, std::shared_ptr<Rendezvous>> steps_ ABSL_GUARDED_BY(mu_);
  // The most recently cleaned-up step ids (a bounded ring).
  static constexpr size_t kRememberCleaned = 4096;
  std::deque<int64_t> cleaned_order_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<int64_t> cleaned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_RENDEZVOUS_MGR_H_
