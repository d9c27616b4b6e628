// Worker: the in-process worker service of one task. Owns the task's
// devices; registered graphs become one Executor each; RunGraph runs a step
// of one. Thread-safe.
#ifndef TENSORGRID_CORE_RUNTIME_WORKER_H_
#define TENSORGRID_CORE_RUNTIME_WORKER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/cancellation.h"
#include "core/framework/device.h"
#include "core/platform/timer.h"
#include "core/runtime/collective_buf_table.h"
#include "core/runtime/collective_executor.h"
#include "core/runtime/collective_group_leader.h"
#include "core/runtime/device_mgr.h"
#include "core/runtime/executor.h"
#include "core/runtime/rendezvous_mgr.h"
#include "core/runtime/worker_interface.h"
#include "proto/config.pb.h"

namespace tensorgrid {

class Worker final : public WorkerInterface {
 public:
  // `task_prefix` like "/job:localhost/replica:0/task:0". Devices come from
  // config.device_count (CPU: 1 by default); thread pools from the config.
  Worker(const std::string& task_prefix, const ConfigProto& config);
  ~Worker() override;

  const DeviceMgr& device_mgr() const { return *device_mgr_; }

  void GetStatusAsync(absl::Time deadline, GetStatusResult* response, StatusCallback done) override;
  void RegisterGraphAsync(const RegisterGraphArgs& request, RegisterGraphResult* response,
                          StatusCallback done) override;
  void DeregisterGraphAsync(const std::string& graph_handle, absl::Time deadline,
                            StatusCallback done) override;
  void RunGraphAsync(const RunGraphArgs& request, RunGraphResult* response,
                     StatusCallback done) override;
  void CleanupGraphAsync(int64_t step_id, StatusCallback done) override;
  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       StatusCallback done, CancellationManager* cancellation = nullptr) override;

  void CleanupAllAsync(const std::vector<std::string>& containers, StatusCallback done) override;
  void CompleteGroupAsync(const CompleteGroupArgs& request, CompleteGroupResult* response,
                          StatusCallback done) override;
  void CompleteInstanceAsync(const CompleteInstanceArgs& request, CompleteInstanceResult* response,
                             StatusCallback done) override;
  void RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                    StatusCallback done, CancellationManager* cancellation = nullptr) override;

  // Waits until peers took the collective chunks this worker put for them
  // (CollectiveBufTable::WaitUntilTaken): a worker whose last all-reduce
  // is done may leave before a peer pulled its part. For Server::Stop,
  // before Shutdown; false when some are left at `deadline`.
  bool WaitForCollectivePeers(absl::Time deadline) {
    return collective_bufs_->WaitUntilTaken(deadline);
  }
  // Stops serving steps: running steps are cancelled and fail with `reason`
  // (their receives wake at once), and later RunGraph and RecvTensor calls
  // fail with it. Registered graphs and resources stay. For Server::Stop;
  // the first call's reason wins.
  void Shutdown(const absl::Status& reason);

  // How this worker reaches other tasks, for _Recvs whose sender lives there:
  // task name ("/job:ps/replica:0/task:0") -> worker, or null if unknown.
  // Without it, every transfer must stay inside this task.
  using WorkerLookup = std::function<WorkerInterface*(const std::string& task)>;
  void SetWorkerLookup(WorkerLookup lookup);
  // Collective groups are resolved by `leader_task`'s worker (reached through
  // the lookup unless it is this task); `cluster_tasks` are named when a
  // group times out. Default: ConfigProto.collective_group_leader, else this
  // task. Set before the first step.
  void SetCollectiveGroupLeader(const std::string& leader_task,
                                std::vector<std::string> cluster_tasks);
  // This worker's collective chunks in flight (for tests).
  const CollectiveBufTable& collective_bufs() const { return *collective_bufs_; }

 private:
  struct Item {
    std::unique_ptr<Executor> executor;
    int num_args = 0;
    int num_retvals = 0;
    bool uses_rendezvous = false;  // has _Send/_Recv nodes
    // The rendezvous keys its _Recvs take from each other task that sends
    // it two or more: asked for in one request per task as a step starts.
    std::map<std::string, std::vector<std::string>> batched_recvs;
  };
  absl::StatusOr<std::shared_ptr<Item>> Build(const GraphDef& def);
  absl::Status ShutdownReason();  // OK until Shutdown

  std::unique_ptr<DeviceMgr> device_mgr_;
  std::unique_ptr<ThreadPool> inter_op_pool_;
  std::unique_ptr<Timer> timer_;  // step deadlines
  RendezvousMgr rendezvous_mgr_;
  std::string task_;     // "/job:x/replica:0/task:0"
  WorkerLookup lookup_;  // set before the first step
  absl::Mutex mu_;
  int64_t next_handle_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<Item>> graphs_ ABSL_GUARDED_BY(mu_);
  absl::Status shutdown_reason_ ABSL_GUARDED_BY(mu_);
  // Partitions running now, by step id: what cancels each.
  uint64_t next_running_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<int64_t, std::map<uint64_t, std::function<void()>>> running_
      ABSL_GUARDED_BY(mu_);
  CancellationManager shutdown_;  // every running step registers with it
  // Collectives: chunks served to peers, the leader's state (used when this
  // task leads), and what collective kernels of every step run through.
  std::unique_ptr<CollectiveBufTable> collective_bufs_;
  std::unique_ptr<CollectiveGroupLeader> collective_leader_;
  std::unique_ptr<WorkerCollectiveExecutor> collective_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_WORKER_H_
