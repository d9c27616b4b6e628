// CollectiveBufTable: one worker's chunks of collective data in flight,
// keyed by "<group>:<instance>:<exec_seq>:<step>:<chunk>:<src_rank>-><dst_rank>"
// (see CollectiveBufKey). A member puts what a peer will pull; the peer takes
// it from here directly when it lives on this worker (sharing the buffer, no
// copy) or through RecvBuf when it lives elsewhere. Each key is put once and
// taken once.
//
// Nothing waits or stays forever: a waiter fails with DeadlineExceeded at its
// deadline, an entry nobody took is dropped after its expiry, and Abort fails
// the waiters of one instance execution (the key prefix up to the exec_seq),
// drops its entries and makes later puts and gets of it fail fast (the last
// kMaxAborted aborted executions are remembered).
//
// Thread-safe. Callbacks run outside the table's lock: a get's callback on the
// putting thread (or the getting thread if the value was there), timeouts on
// `pool`.
#ifndef TENSORGRID_CORE_RUNTIME_COLLECTIVE_BUF_TABLE_H_
#define TENSORGRID_CORE_RUNTIME_COLLECTIVE_BUF_TABLE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "core/framework/tensor.h"
#include "core/platform/env.h"
#include "core/platform/timer.h"

namespace tensorgrid {

// The key of one chunk; its execution prefix is everything up to `step`.
std::string CollectiveBufKey(int group_key, int instance_key, int64_t exec_seq, int step,
                             int64_t chunk, int src_rank, int dst_rank);
std::string CollectiveExecPrefix(int group_key, int instance_key, int64_t exec_seq);

class CollectiveBufTable {
 public:
  static constexpr size_t kMaxAborted = 1024;
  using Callback = std::function<void(absl::Status, Tensor)>;

  explicit CollectiveBufTable(ThreadPool* pool) : pool_(pool), timer_(std::make_unique<Timer>()) {}
  ~CollectiveBufTable();

  // Hands `value` to the waiting getter, or keeps it until `expires`.
  void Put(const std::string& key, Tensor value, absl::Time expires);
  // Calls `done` with the value once it is put; DeadlineExceeded at
  // `deadline`; Cancelled when `cancellation` (if any) is cancelled first,
  // which frees the key for another getter.
  void Get(const std::string& key, absl::Time deadline, Callback done,
           CancellationManager* cancellation = nullptr);
  // Fails the waiters and drops the entries whose key starts with `prefix`
  // (a CollectiveExecPrefix), and remembers it as failed with `status`.
  void Abort(const std::string& prefix, const absl::Status& status);
  // Fails every waiter with `status`; later calls fail at once. For ~Worker.
  void Shutdown(const absl::Status& status);
  // Runs `fn` on the pool at `when` (a collective's later retry shares the
  // table's timer); after Shutdown, returns its status and drops `fn`.
  absl::Status RunLater(absl::Time when, std::function<void()> fn);

  // Waits until every entry was taken (or expired, or was dropped by an
  // Abort): a peer may still pull what this worker put for it, so a task
  // that leaves must not take it along. False when some are left at
  // `deadline`.
  bool WaitUntilTaken(absl::Time deadline);

  // Entries plus waiters (for tests: a finished run leaves nothing behind).
  size_t Size() const;

 private:
  struct Waiter {
    uint64_t id;
    Callback done;
    Timer::Id timer;
  };
  struct Entry {
    Tensor value;
    absl::Time expires;
  };
  // Ends waiter `id` of `key`, if it still waits, with `status`.
  void Expire(const std::string& key, uint64_t id, const absl::Status& status);
  // The status of the aborted execution `key` belongs to, or OK.
  absl::Status AbortedStatus(const std::string& key) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void DropExpired(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ThreadPool* const pool_;
  mutable absl::Mutex mu_;
  std::unique_ptr<Timer> timer_ ABSL_GUARDED_BY(mu_);  // null after Shutdown
  absl::Status shutdown_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time earliest_expiry_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::Status> aborted_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> aborted_order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_COLLECTIVE_BUF_TABLE_H_
