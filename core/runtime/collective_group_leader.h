// CollectiveGroupLeader: the group and instance resolution a leader task
// does for every collective group (docs/collectives.md). Members join with
// CompleteGroup; once group_size distinct devices joined, every one of them
// gets the member list sorted by device name (rank = index), and later joins
// of those devices are answered at once from the completed group. Per
// instance, CompleteInstance checks that the members agree (op, dtype,
// shape), names a broadcast's source and the exec_seq they continue from
// (the largest any of them proposed). Members ask on their first run and
// again after a failed run (a peer restarted, a step timed out), so each
// completed round of group_size joins resynchronizes the members' exec_seq.
//
// A join waits at most its timeout, then fails with DeadlineExceeded naming
// the members that joined and the tasks of the cluster with no member yet;
// the timed-out member stays joined, so the group completes once the
// missing members come (and the others' next attempt finds it complete).
// Disagreements (group_size, device type, dtype, shape, sources) fail with
// InvalidArgument naming both sides; every member still waiting on that
// instance gets the error too.
//
// Thread-safe. Callbacks run outside the lock; timeouts run on `pool`.
#ifndef TENSORGRID_CORE_RUNTIME_COLLECTIVE_GROUP_LEADER_H_
#define TENSORGRID_CORE_RUNTIME_COLLECTIVE_GROUP_LEADER_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/platform/env.h"
#include "core/platform/timer.h"
#include "core/runtime/worker_interface.h"

namespace tensorgrid {

// Every field of a join, checked before it touches a leader's state (a
// join may come from any peer over the wire): InvalidArgument naming the
// group, and the field, for a group size outside [1, 65536], a device that is
// not a full device name (or not of the group's device type), an unknown op,
// a dtype that is not plain numbers, an invalid shape, a negative next_seq,
// or a timeout outside [0, 24 h].
absl::Status ValidateGroupJoin(const CompleteGroupArgs& request);
absl::Status ValidateInstanceJoin(const CompleteInstanceArgs& request);

class CollectiveGroupLeader {
 public:
  explicit CollectiveGroupLeader(ThreadPool* pool)
      : pool_(pool), timer_(std::make_unique<Timer>()) {}
  ~CollectiveGroupLeader();

  // The tasks of the cluster ("/job:worker/replica:0/task:1"), so a timeout
  // can name the tasks that have no member in the group.
  void SetClusterTasks(std::vector<std::string> tasks);

  void CompleteGroupAsync(const CompleteGroupArgs& request, CompleteGroupResult* response,
                          StatusCallback done);
  void CompleteInstanceAsync(const CompleteInstanceArgs& request, CompleteInstanceResult* response,
                             StatusCallback done);
  // Fails every waiting join with `status`; later joins fail at once.
  void Shutdown(const absl::Status& status);

 private:
  struct Waiter {
    uint64_t id;
    std::string device;
    std::function<void()> fill;  // writes the response (under the lock, on success)
    StatusCallback done;
    Timer::Id timer;
  };
  struct Group {
    CompleteGroupArgs first;                  // the first join: size and type
    std::map<std::string, uint64_t> members;  // device -> incarnation, sorted
    bool complete = false;
    std::vector<Waiter> waiters;
  };
  struct Instance {
    CompleteInstanceArgs first;
    std::map<std::string, bool> joined;  // device -> is_source
    bool complete = false;
    int source_rank = -1;
    int64_t exec_seq = 0;  // the largest next_seq proposed this round
    std::vector<Waiter> waiters;
  };
  using Answers = std::vector<std::pair<StatusCallback, absl::Status>>;

  void FillGroup(const Group& g, CompleteGroupResult* response) const;
  // Runs `expire` on the pool after `timeout`.
  Timer::Id Arm(absl::Duration timeout, std::function<void()> expire)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExpireGroupJoin(int group_key, uint64_t id, absl::Duration timeout);
  void ExpireInstanceJoin(int group_key, int instance_key, uint64_t id, absl::Duration timeout);
  // Completes `inst` if everyone joined: fills the answers to give.
  void MaybeCompleteInstance(const Group& g, Instance& inst, Answers* answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string TasksWithoutMember(const Group& g) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ThreadPool* const pool_;
  absl::Mutex mu_;
  std::unique_ptr<Timer> timer_ ABSL_GUARDED_BY(mu_);  // null after Shutdown
  absl::Status shutdown_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> cluster_tasks_ ABSL_GUARDED_BY(mu_);
  std::map<int, Group> groups_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<int, int>, Instance> instances_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_COLLECTIVE_GROUP_LEADER_H_
