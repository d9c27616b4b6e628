// Master: the session-side half of the runtime. Holds the session's graph;
// for each distinct (feeds, fetches, targets) signature it prunes and
// rewrites the graph once, places it (Placer), cuts it into one partition per
// device joined by _Send/_Recv (Partition), registers every partition with
// the worker, and caches the result, so later steps only validate feeds and
// run the partitions (concurrently, sharing one step id).
// Callables hold their cache entry directly and skip even that lookup.
// Thread-safe: steps run concurrently, also while another signature builds;
// Create, Extend, Close and builds exclude each other.
//
// ConfigProto.device_filters ("/job:ps", "/job:worker/task:1/device:CPU:0")
// limit the session to the devices matching at least one filter: tasks with
// no such device are never contacted, so a session does not wait for them.
// Nodes with no device request go to `default_task` if it survives the
// filters, else to the first task that does.
#ifndef TENSORGRID_CORE_RUNTIME_MASTER_H_
#define TENSORGRID_CORE_RUNTIME_MASTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "core/framework/device_name.h"
#include "core/graph/graph.h"
#include "core/graph/subgraph.h"
#include "core/runtime/worker_interface.h"
#include "proto/config.pb.h"

namespace tensorgrid {

class Master {
 public:
  // Workers by task name ("/job:ps/replica:0/task:0"; not owned) provide the
  // devices; nodes with no device request go to `default_task`.
  using WorkerMap = std::map<std::string, WorkerInterface*>;
  Master(const ConfigProto& config, WorkerMap workers, std::string default_task);
  // One worker serving `default_task` (the in-process session).
  Master(const ConfigProto& config, WorkerInterface* worker, std::string default_task)
      : Master(config, WorkerMap{{default_task, worker}}, default_task) {}
  ~Master();

  // The first Create or Extend (and ListDevices) asks every task for its
  // devices, waiting for tasks that are not up yet for at most the startup
  // timeout (ConfigProto.operation_timeout_in_ms, default 60 s) and saying
  // every `wait_report` which ones it still waits for and why. A caller that
  // must have the answer by `answer_by` (an RPC's deadline) passes it: the
  // wait then ends early enough for the answer naming the missing tasks to
  // arrive first. A caller that may go away passes `cancellation`: the wait
  // ends Cancelled once it is cancelled.
  absl::Status Create(const GraphDef& graph, absl::Time answer_by = absl::InfiniteFuture(),
                      const CancellationManager* cancellation = nullptr);
  absl::Status Extend(const GraphDef& graph, absl::Time answer_by = absl::InfiniteFuture(),
                      const CancellationManager* cancellation = nullptr);
  // Where the waiting reports go (default: a line on stderr every 10 s).
  void SetWaitReport(absl::Duration every, std::function<void(const std::string&)> sink);
  // `cancellation`, if given, lets the caller cancel a running step (the gRPC
  // master does when its client cancels the call or goes away): the step is
  // then cancelled on every task and fails Cancelled. It must outlive the
  // step.
  absl::Status Run(const RunOptions& options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs, RunMetadata* metadata,
                   CancellationManager* cancellation = nullptr);
  absl::StatusOr<int64_t> MakeCallable(const CallableOptions& options);
  absl::Status RunCallable(int64_t handle, const std::vector<Tensor>& feeds,
                           std::vector<Tensor>* fetches, RunMetadata* metadata,
                           CancellationManager* cancellation = nullptr);

  // The same steps without a waiting thread: `done` is called exactly once,
  // on whichever thread finishes the step (the calling one when the step
  // fails before it starts), and never blocks on the network itself.
  // `outputs`/`fetches` and `metadata` must stay valid until then. RunAsync
  // blocks (placement, RegisterGraph calls) the first time it sees a
  // signature; IsBuilt says whether it will not.
  void RunAsync(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& feeds,
                const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
                std::vector<Tensor>* outputs, RunMetadata* metadata,
                CancellationManager* cancellation, StatusCallback done);
  bool IsBuilt(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
               const std::vector<std::string>& targets) const;
  void RunCallableAsync(int64_t handle, const std::vector<Tensor>& feeds,
                        std::vector<Tensor>* fetches, RunMetadata* metadata,
                        CancellationManager* cancellation, StatusCallback done);
  absl::Status ReleaseCallable(int64_t handle);
  // Deregisters every partition, on all tasks at once, giving each task
  // kCloseTimeout to answer: a task that froze or whose host is gone does
  // not hold the caller up for long. The first failure, naming its task.
  static constexpr absl::Duration kCloseTimeout = absl::Seconds(5);
  absl::Status Close();

  // The session's devices (after the filters), waiting for their tasks like
  // Create does.
  absl::StatusOr<std::vector<DeviceInfo>> ListDevices(
      absl::Time answer_by = absl::InfiniteFuture(),
      const CancellationManager* cancellation = nullptr);
  // Drops the resources in `containers` (all containers if empty) on every
  // task the session may use: variables there lose their values. Fails
  // Unavailable naming a task that cannot be reached; the others are still
  // reset.
  absl::Status Reset(const std::vector<std::string>& containers);
  // The task nodes without a device request are placed on.
  const std::string& default_task() const { return default_task_; }
  // When the session last ran a step: now while one runs, else when the
  // last one ended (InfinitePast before the first). Thread-safe; for a
  // server that closes idle sessions.
  absl::Time LastActive() const;

 private:
  // One registered partition of an execution unit.
  struct PartitionUnit {
    std::string device;
    WorkerInterface* worker = nullptr;  // the device's
    std::string graph_handle;
    std::vector<int> feed_index;   // the partition's _Arg i is the step's feed feed_index[i]
    std::vector<int> fetch_index;  // the partition's _Retval i is fetch fetch_index[i]
    GraphDef graph;                // what the worker runs, for RunMetadata
  };
  // One pruned, rewritten, placed, partitioned and registered graph.
  struct ExecutionUnit {
    std::vector<FeedSpec> feeds;
    int num_fetches = 0;
    std::vector<PartitionUnit> partitions;
    bool uses_rendezvous = false;  // some partition has a _Send or _Recv
  };
  struct Callable {
    std::shared_ptr<const ExecutionUnit> unit;
    RunOptions options;
  };

  absl::StatusOr<std::shared_ptr<const ExecutionUnit>> GetOrBuild(
      const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets);
  absl::StatusOr<std::shared_ptr<const ExecutionUnit>> Build(
      const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // One step in flight (master.cc).
  struct Step;
  void RunUnitAsync(std::shared_ptr<const ExecutionUnit> unit, const RunOptions& options,
                    const std::vector<Tensor>& feeds, std::vector<Tensor>* fetches,
                    RunMetadata* metadata, CancellationManager* cancellation, StatusCallback done);
  void PartitionDone(const std::shared_ptr<Step>& step, size_t p, absl::Status s);
  void FinishStep(const std::shared_ptr<Step>& step);
  // Replaces `failure` by "task T restarted ..." when one of the unit's tasks
  // reports a new incarnation, then calls `done` with it. Tasks get
  // kRestartCheckTimeout to answer.
  static constexpr absl::Duration kRestartCheckTimeout = absl::Seconds(5);
  void ExplainRestartAsync(const ExecutionUnit& unit, absl::Status failure, StatusCallback done);
  absl::Status RegisterPartitions(Graph& graph, ExecutionUnit* unit)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status LoadDevices(absl::Time answer_by, const CancellationManager* cancellation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckOpen() const;
  bool PassesFilters(const std::string& device) const;

  const ConfigProto config_;
  // The tasks the device filters let through (all without filters).
  WorkerMap workers_;
  std::string default_task_;
  // Parsed ConfigProto.device_filters; a filter that does not parse makes
  // Create fail with filter_error_.
  std::vector<ParsedDeviceName> filters_;
  absl::Status filter_error_;
  absl::Duration wait_report_every_ = absl::Seconds(10);
  std::function<void(const std::string&)> wait_report_;  // null: stderr
  // Step ids start at a random point so that steps of different masters
  // sharing a worker do not collide.
  std::atomic<int64_t> next_step_id_;
  std::atomic<int> steps_running_{0};
  std::atomic<int64_t> last_step_end_ns_{INT64_MIN};  // absl::ToUnixNanos

  // mu_ is held across calls to workers (waiting for tasks, RegisterGraph
  // while building), so the asynchronous step paths, which run on gRPC's few
  // callback threads and must never wait for one of those calls, do not take
  // it: they read closed_ and take only cache_mu_, which nobody holds across
  // a call to a worker.
  mutable absl::Mutex mu_;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> closed_{false};  // written under mu_
  std::vector<DeviceInfo> devices_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, WorkerInterface*> device_workers_ ABSL_GUARDED_BY(mu_);  // by device name
  // Where the first step that ran each stateful node put it; later steps
  // keep it there (a variable's value lives on its device).
  absl::flat_hash_map<std::string, std::string> stateful_placements_ ABSL_GUARDED_BY(mu_);
  mutable absl::Mutex cache_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const ExecutionUnit>> cache_
      ABSL_GUARDED_BY(cache_mu_);
  // Device name -> incarnation, as loaded (for ExplainRestartAsync).
  std::map<std::string, uint64_t> incarnations_ ABSL_GUARDED_BY(cache_mu_);
  absl::Mutex callables_mu_;
  int64_t next_callable_ ABSL_GUARDED_BY(callables_mu_) = 0;
  absl::flat_hash_map<int64_t, Callable> callables_ ABSL_GUARDED_BY(callables_mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_MASTER_H_
