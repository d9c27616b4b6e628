// WorkerCollectiveExecutor: the CollectiveExecutor a Worker gives every step
// (docs/collectives.md). For each collective op of a member device it
//   1. resolves the group: asks the group leader (CompleteGroup) unless this
//      worker already knows the complete group, again and again while the
//      leader cannot be reached (it may start after this worker) until the
//      collective's deadline; rank = index in the members sorted by device
//      name;
//   2. resolves the instance (CompleteInstance): the members agree on op,
//      dtype and shape, and a broadcast learns its source; cached per device;
//   3. runs the algorithm: for a small all-reduce of 2^k members, recursive
//      doubling (k rounds, each a swap with one partner); of other sizes,
//      one round in which every member pulls every other member's input and
//      all fold them in rank order; otherwise ring all-reduce (reduce-scatter then all-gather),
//      ring all-gather, or a chain broadcast from the source, every tensor cut
//      into chunks of at most `chunk_bytes` that advance independently (a
//      window of `max_chunks_in_flight`), exchanged through the
//      CollectiveBufTable: from the table itself when the peer is on this
//      worker, through RecvBuf from the peer's worker otherwise.
// The n-th run of an instance on a device uses exec_seq n in its keys, so
// steps that run the same graph again never mix their chunks. A failed run
// forgets the group and instance: the next run resolves both again, and the
// leader resynchronizes exec_seq (a peer may have restarted from 0, or not
// have run the failed step at all).
//
// Thread-safe.
#ifndef TENSORGRID_CORE_RUNTIME_COLLECTIVE_EXECUTOR_H_
#define TENSORGRID_CORE_RUNTIME_COLLECTIVE_EXECUTOR_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "absl/synchronization/mutex.h"
#include "core/framework/collective.h"
#include "core/platform/env.h"
#include "core/runtime/collective_buf_table.h"
#include "core/runtime/worker_interface.h"

namespace tensorgrid {

struct CollectiveRun;

class WorkerCollectiveExecutor final : public CollectiveExecutor {
 public:
  // Chunks of at least kBulkMinBytes (1 MiB) cross tasks by bulk ticket
  // (distributed/transport/bulk_server.h); 2 MiB measured 10-12% faster than
  // 1 MiB at 64 MiB, the same at 4 MiB (docs/PERFORMANCE.md).
  static constexpr int64_t kDefaultChunkBytes = 2 << 20;
  // All-reduces of at most this many bytes take one round (RunOneRound).
  static constexpr int64_t kDefaultOneRoundBytes = 256 << 10;

  struct Options {
    std::string task;  // this worker's task, "/job:worker/replica:0/task:0"
    ThreadPool* pool = nullptr;
    CollectiveBufTable* table = nullptr;
    // The worker of a task (this worker itself for `task`), or null.
    std::function<WorkerInterface*(const std::string& task)> peer;
    // 0: $TG_COLLECTIVE_CHUNK_BYTES if set, else kDefaultChunkBytes.
    int64_t chunk_bytes = 0;
    int max_chunks_in_flight = 8;
    // An all-reduce of at most this many bytes exchanges whole inputs in one
    // round instead of running the ring. -1: $TG_COLLECTIVE_ONE_ROUND_BYTES if
    // set, else kDefaultOneRoundBytes; 0: always the ring. Every worker of a
    // group must use the same value (as for chunk_bytes).
    int64_t one_round_bytes = -1;
  };
  explicit WorkerCollectiveExecutor(Options options);

  // The task whose worker leads every group ("/job:worker/replica:0/task:0").
  void SetLeader(std::string leader_task);

  void ExecuteAsync(const CollectiveOpParams& params, Device* device, const Tensor& input,
                    Tensor output, CancellationManager* cancellation, DoneCallback done) override;

 private:
  friend struct CollectiveRun;
  void ResolveGroup(std::shared_ptr<CollectiveRun> run);
  void ResolveInstance(std::shared_ptr<CollectiveRun> run);
  void StartRing(std::shared_ptr<CollectiveRun> run);
  void RunChunk(std::shared_ptr<CollectiveRun> run, int64_t chunk, size_t step);
  void ChunkDone(std::shared_ptr<CollectiveRun> run);
  void RunOneRound(std::shared_ptr<CollectiveRun> run);
  // Round `round` of a small all-reduce of 2^k members (recursive doubling);
  // `value` is this member's value after the rounds before.
  void RunDoublingRound(std::shared_ptr<CollectiveRun> run, int round, Tensor value);
  // Takes chunk `key` from rank `src`; a remote one is decoded into
  // `into` when given (see WorkerInterface::RecvBufAsync).
  void Receive(const std::shared_ptr<CollectiveRun>& run, int src, const std::string& key,
               Tensor into, std::function<void(absl::Status, Tensor)> done);
  WorkerInterface* Leader(std::string* leader_task);
  // Resolves the group again after `pause` (the table's timer hands it to
  // the pool); finishes `run` at once if the worker is already shutting
  // down (a retry still waiting then is dropped: the step's cancellation
  // ends the run).
  void RetryGroupLater(std::shared_ptr<CollectiveRun> run, absl::Duration pause);

  const Options options_;
  absl::Mutex mu_;
  std::string leader_task_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::shared_ptr<const CompleteGroupResult>> groups_ ABSL_GUARDED_BY(mu_);
  struct InstanceRecord {
    bool resolved = false;  // false after a failed run: ask the leader again
    int source_rank = -1;
    int64_t runs = 0;
  };
  // By (device, group_key, instance_key).
  std::map<std::tuple<std::string, int, int>, InstanceRecord> instances_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_COLLECTIVE_EXECUTOR_H_
