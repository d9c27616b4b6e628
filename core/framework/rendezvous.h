// Rendezvous: where a _Send leaves a tensor for the matching _Recv of the same
// step. Keys follow ARCHITECTURE.md:
//   src_device;src_incarnation_hex;dst_device;tensor_name;frame:iter
// Send never blocks; RecvAsync calls back when the value is there (possibly
// at once, on the caller's thread). StartAbort fails every pending and future
// receive with the abort status, marked as derived (IsDerivedError) so that
// the step reports the root cause rather than its echoes. Thread-safe.
#ifndef TENSORGRID_CORE_FRAMEWORK_RENDEZVOUS_H_
#define TENSORGRID_CORE_FRAMEWORK_RENDEZVOUS_H_

#include <deque>
#include <memory>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/cancellation.h"
#include "core/framework/tensor.h"
#include "proto/graph.pb.h"

namespace tensorgrid {

std::string CreateRendezvousKey(const std::string& src_device, uint64_t src_incarnation,
                                const std::string& dst_device, const std::string& tensor_name,
                                const std::string& frame_iter = "0:0");
// The key a _Send or _Recv node uses: from its send_device,
// send_device_incarnation, recv_device and tensor_name attrs
// (InvalidArgument naming the node and the attr when one is missing).
absl::StatusOr<std::string> RendezvousKeyOf(const NodeDef& node);

// Marks `s` as a consequence of another failure (a cancelled receive, an
// aborted partition); callers reporting a step's error prefer underived ones.
absl::Status MarkDerived(absl::Status s);
bool IsDerivedError(const absl::Status& s);

class Rendezvous {
 public:
  using DoneCallback = std::function<void(const absl::Status&, const Tensor&)>;
  virtual ~Rendezvous() = default;
  // AlreadyExists if `key` was sent twice in this step; the abort status after StartAbort.
  virtual absl::Status Send(const std::string& key, const Tensor& value) = 0;
  // With `cancellation`, its cancelling withdraws a receive still waiting:
  // `done` gets Cancelled (marked derived) and the key is free again.
  virtual void RecvAsync(const std::string& key, DoneCallback done,
                         CancellationManager* cancellation = nullptr) = 0;
  virtual void StartAbort(const absl::Status& status) = 0;
};

// The in-process rendezvous: a table of sent values and waiting receivers.
// Values are passed by reference count, never copied. Receives are
// cancellable only when the rendezvous is owned by a shared_ptr (a
// withdrawal that comes after it is gone has nothing left to do).
class LocalRendezvous final : public Rendezvous,
                              public std::enable_shared_from_this<LocalRendezvous> {
 public:
  ~LocalRendezvous() override;
  absl::Status Send(const std::string& key, const Tensor& value) override;
  void RecvAsync(const std::string& key, DoneCallback done,
                 CancellationManager* cancellation = nullptr) override;
  void StartAbort(const absl::Status& status) override;

 private:
  struct Waiter {
    uint64_t id;
    DoneCallback done;
    CancellationManager* cancellation;  // null: not cancellable
    CancellationManager::Token token;
    // Ends the wait: no more withdrawing (outside mu_), then `done`.
    void Finish(const absl::Status& status, const Tensor& value);
  };
  struct Item {
    bool has_value = false;
    Tensor value;
    std::deque<Waiter> waiters;
  };
  // A cancelled receive's withdrawal.
  void Withdraw(const std::string& key, uint64_t id);
  absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Item> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_RENDEZVOUS_H_
