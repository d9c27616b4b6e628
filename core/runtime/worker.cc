#include "core/runtime/worker.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/device_name.h"
#include "core/framework/rendezvous.h"
#include "core/platform/blocking.h"
#include "core/platform/status.h"

namespace tensorgrid {

absl::Status WorkerInterface::GetStatus(GetStatusResult* response) {
  return WaitForCallback([&](StatusCallback done) {
    GetStatusAsync(absl::InfiniteFuture(), response, std::move(done));
  });
}

absl::Status WorkerInterface::RegisterGraph(const RegisterGraphArgs& request,
                                            RegisterGraphResult* response) {
  return WaitForCallback(
      [&](StatusCallback done) { RegisterGraphAsync(request, response, std::move(done)); });
}

absl::Status WorkerInterface::DeregisterGraph(const std::string& graph_handle) {
  return WaitForCallback([&](StatusCallback done) {
    DeregisterGraphAsync(graph_handle, absl::InfiniteFuture(), std::move(done));
  });
}

absl::Status WorkerInterface::RunGraph(const RunGraphArgs& request, RunGraphResult* response) {
  return WaitForCallback(
      [&](StatusCallback done) { RunGraphAsync(request, response, std::move(done)); });
}

absl::Status WorkerInterface::CleanupGraph(int64_t step_id) {
  return WaitForCallback([&](StatusCallback done) { CleanupGraphAsync(step_id, std::move(done)); });
}

absl::Status WorkerInterface::CleanupAll(const std::vector<std::string>& containers) {
  return WaitForCallback(
      [&](StatusCallback done) { CleanupAllAsync(containers, std::move(done)); });
}

namespace {
// Debian's Abseil is built without NDEBUG, so every absl::Mutex operation
// also maintains a global deadlock-detection graph: about half the cost of a
// small step. Set TG_ABSL_DEADLOCK_DETECTION=1 to keep it (for debugging).
void DisableDebugDeadlockDetection() {
  static const bool once = [] {
    const char* keep = std::getenv("TG_ABSL_DEADLOCK_DETECTION");
    if (keep == nullptr || std::string(keep) != "1") {
      absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    }
    return true;
  }();
  (void)once;
}

// Whether steps ask for their receives from one task in one request
// (TG_BATCH_RECV_TENSORS=0 turns it off, for comparisons).
bool BatchRecvTensors() {
  static const bool on = [] {
    const char* env = std::getenv("TG_BATCH_RECV_TENSORS");
    return env == nullptr || (std::string(env) != "0" && std::string(env) != "false");
  }();
  return on;
}

}  // namespace

// The rendezvous a partition sees: sends and same-task receives use the
// step's local table; a receive whose sender lives in another task pulls the
// tensor from that task's worker (RecvTensor), or takes it from what the
// step asked that task for as it started (Prefetch).
class StepRendezvous final : public Rendezvous {
 public:
  StepRendezvous(std::shared_ptr<Rendezvous> local, const std::string& task, int64_t step_id,
                 const Worker::WorkerLookup& lookup)
      : local_(std::move(local)), task_(task), step_id_(step_id), lookup_(lookup) {}

  absl::Status Send(const std::string& key, const Tensor& value) override {
    return local_->Send(key, value);
  }
  void RecvAsync(const std::string& key, DoneCallback done,
                 CancellationManager* cancellation) override {
    const std::string src_device = key.substr(0, key.find(';'));
    if (DeviceNameUtils::IsSameAddressSpace(src_device, task_)) {
      local_->RecvAsync(key, std::move(done), cancellation);
      return;
    }
    if (prefetched_->Take(key, &done)) return;
    const std::string src_task = DeviceNameUtils::TaskName(src_device);
    WorkerInterface* peer = lookup_ ? lookup_(src_task) : nullptr;
    if (peer == nullptr) {
      done(NoRoute(src_task, key), Tensor());
      return;
    }
    auto tensor = std::make_shared<Tensor>();
    peer->RecvTensorAsync(
        step_id_, key, tensor.get(),
        [tensor, done = std::move(done)](absl::Status s) { done(s, *tensor); }, cancellation);
  }
  void StartAbort(const absl::Status& status) override {
    prefetched_->Abort(status);
    local_->StartAbort(status);
  }

  // Asks task `src_task` for `keys` (each sent to this partition by that
  // task) in one request, before the step's receives run: their RecvAsync
  // then take the tensors as they come.
  void Prefetch(const std::string& src_task, const std::vector<std::string>& keys) {
    WorkerInterface* peer = lookup_ ? lookup_(src_task) : nullptr;
    if (peer == nullptr) return;  // each receive says so itself
    if (!prefetched_->Expect(keys)) return;
    // No cancellation: the request may outlive the step (a failed step
    // ends without waiting for it; StartAbort fails its receives here, and
    // the peer's wait ends when the master cleans the step up there).
    auto tensors = std::make_shared<std::vector<Tensor>>(keys.size());
    peer->RecvTensorsAsync(step_id_, keys, tensors.get(),
                           [prefetched = prefetched_, tensors, keys](int i, absl::Status s) {
                             prefetched->Arrived(keys[i], std::move(s),
                                                 std::move((*tensors)[i]));
                           });
  }

 private:
  absl::Status NoRoute(const std::string& src_task, const std::string& key) const {
    return errors::Unavailable("task ", task_, " has no route to task ", src_task,
                               " to receive '", key, "'");
  }

  // The tensors asked for as the step started, until their receives take
  // them. Shared with the requests, which may answer after the step.
  class Prefetched {
   public:
    // Expects `keys`; false (expecting none) once the step was aborted.
    bool Expect(const std::vector<std::string>& keys) {
      absl::MutexLock lock(&mu_);
      if (!aborted_.ok()) return false;
      for (const std::string& key : keys) slots_[key];
      return true;
    }
    // Runs or keeps `*done` for `key`; false when `key` was not asked for.
    bool Take(const std::string& key, DoneCallback* done) {
      absl::Status status;
      Tensor tensor;
      {
        absl::MutexLock lock(&mu_);
        auto it = slots_.find(key);
        if (it == slots_.end()) return false;
        if (!it->second.arrived) {
          it->second.waiter = std::move(*done);
          return true;
        }
        status = std::move(it->second.status);
        tensor = std::move(it->second.tensor);
        slots_.erase(it);
      }
      (*done)(status, tensor);
      return true;
    }
    void Arrived(const std::string& key, absl::Status status, Tensor tensor) {
      DoneCallback waiter;
      {
        absl::MutexLock lock(&mu_);
        auto it = slots_.find(key);
        if (it == slots_.end() || !aborted_.ok()) return;  // too late: the step failed
        if (!it->second.waiter) {
          it->second.arrived = true;
          it->second.status = std::move(status);
          it->second.tensor = std::move(tensor);
          return;
        }
        waiter = std::move(it->second.waiter);
        slots_.erase(it);
      }
      waiter(status, tensor);
    }
    // Every receive still waiting, and any later, fails with `status`.
    void Abort(const absl::Status& status) {
      std::vector<DoneCallback> waiters;
      absl::Status why;
      {
        absl::MutexLock lock(&mu_);
        if (aborted_.ok()) aborted_ = status.ok() ? errors::Aborted("step aborted") : status;
        why = aborted_;
        for (auto& [key, slot] : slots_) {
          slot.arrived = true;
          slot.status = why;
          slot.tensor = Tensor();
          if (slot.waiter) waiters.push_back(std::move(slot.waiter));
        }
      }
      for (DoneCallback& waiter : waiters) waiter(why, Tensor());
    }

   private:
    struct Slot {
      bool arrived = false;
      absl::Status status;
      Tensor tensor;
      DoneCallback waiter;  // a receive waiting for it
    };
    absl::Mutex mu_;
    absl::flat_hash_map<std::string, Slot> slots_ ABSL_GUARDED_BY(mu_);
    absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  };

  const std::shared_ptr<Rendezvous> local_;
  const std::string task_;
  const int64_t step_id_;
  const Worker::WorkerLookup& lookup_;
  const std::shared_ptr<Prefetched> prefetched_ = std::make_shared<Prefetched>();
};

Worker::Worker(const std::string& task_prefix, const ConfigProto& config)
    : device_mgr_(DeviceMgr::ForTask(task_prefix, config)), task_(task_prefix) {
  DisableDebugDeadlockDetection();
  int inter = config.inter_op_parallelism_threads();
  inter_op_pool_ = std::make_unique<ThreadPool>(inter > 0 ? inter : NumSchedulableCPUs());
  timer_ = std::make_unique<Timer>();
  collective_bufs_ = std::make_unique<CollectiveBufTable>(inter_op_pool_.get());
  collective_leader_ = std::make_unique<CollectiveGroupLeader>(inter_op_pool_.get());
  collective_leader_->SetClusterTasks({task_});
  WorkerCollectiveExecutor::Options collective;
  collective.task = task_;
  collective.pool = inter_op_pool_.get();
  collective.table = collective_bufs_.get();
  collective.peer = [this](const std::string& task) -> WorkerInterface* {
    if (DeviceNameUtils::IsSameAddressSpace(task, task_)) return this;
    return lookup_ ? lookup_(task) : nullptr;
  };
  collective_ = std::make_unique<WorkerCollectiveExecutor>(std::move(collective));
  if (!config.collective_group_leader().empty()) {
    collective_->SetLeader(config.collective_group_leader());
  }
}

Worker::~Worker() {
  {
    absl::MutexLock lock(&mu_);
    graphs_.clear();
  }
  // Waiting collectives fail now; their timeouts stop before the pool goes.
  collective_leader_->Shutdown(errors::Aborted("task ", task_, " is shutting down"));
  collective_bufs_->Shutdown(errors::Aborted("task ", task_, " is shutting down"));
  timer_.reset();          // no step timeout may fire into a pool that is going
  inter_op_pool_.reset();  // waits for queued work before devices go away
}

absl::StatusOr<std::shared_ptr<Worker::Item>> Worker::Build(const GraphDef& def) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportGraphDef(def));
  // One device per partition: the master has already split by device.
  std::string device_name = device_mgr_->devices()[0]->name();
  for (Node* n : graph->nodes()) {
    if (!n->requested_device().empty()) {
      device_name = n->requested_device();
      break;
    }
  }
  TG_ASSIGN_OR_RETURN(Device * device, device_mgr_->LookupDevice(device_name));
  for (Node* n : graph->nodes()) {
    if (!n->requested_device().empty() && n->requested_device() != device_name) {
      return errors::InvalidArgument("partition mixes devices: node '", n->name(), "' is on ",
                                     n->requested_device(), ", others on ", device_name);
    }
    n->set_assigned_device_name(device_name);
  }
  auto item = std::make_shared<Item>();
  // The receives from other tasks, by task; a key received twice is left
  // to its receives (a slot serves one).
  std::map<std::string, std::vector<std::string>> remote;
  std::map<std::string, int> times;
  for (Node* n : graph->nodes()) {
    if (n->op() == "_Arg") ++item->num_args;
    if (n->op() == "_Retval") ++item->num_retvals;
    if (n->op() == "_Send" || n->op() == "_Recv") item->uses_rendezvous = true;
    std::string send_device;
    if (n->op() != "_Recv" || !GetNodeAttr(n->def(), "send_device", &send_device).ok() ||
        DeviceNameUtils::IsSameAddressSpace(send_device, task_)) {
      continue;
    }
    // (A node without its attrs fails its kernel's construction below.)
    absl::StatusOr<std::string> key = RendezvousKeyOf(n->def());
    if (key.ok() && ++times[*key] == 1) {
      remote[DeviceNameUtils::TaskName(send_device)].push_back(*key);
    }
  }
  for (auto& [task, keys] : remote) {
    keys.erase(std::remove_if(keys.begin(), keys.end(),
                              [&](const std::string& key) { return times[key] > 1; }),
               keys.end());
    if (keys.size() >= 2) item->batched_recvs[task] = std::move(keys);
  }
  TG_ASSIGN_OR_RETURN(item->executor, Executor::Create(device, std::move(graph)));
  return item;
}

void Worker::GetStatusAsync(absl::Time, GetStatusResult* response, StatusCallback done) {
  response->devices.clear();
  for (const auto& d : device_mgr_->devices()) {
    response->devices.push_back(d->info());
  }
  done(absl::OkStatus());
}

void Worker::CleanupGraphAsync(int64_t step_id, StatusCallback done) {
  // Partitions of the step still running here are cancelled: the master
  // cleans a step up early when it failed elsewhere or its client went away.
  std::vector<std::function<void()>> cancels;
  {
    absl::MutexLock lock(&mu_);
    auto it = running_.find(step_id);
    if (it != running_.end()) {
      for (auto& [id, cancel] : it->second) cancels.push_back(cancel);
    }
  }
  for (auto& cancel : cancels) cancel();
  rendezvous_mgr_.Cleanup(step_id);
  done(absl::OkStatus());
}

void Worker::CleanupAllAsync(const std::vector<std::string>& containers, StatusCallback done) {
  for (const auto& device : device_mgr_->devices()) {
    ResourceMgr* resources = device->resource_manager();
    if (containers.empty()) resources->Clear();
    for (const std::string& container : containers) resources->Cleanup(container);
  }
  done(absl::OkStatus());
}

void Worker::Shutdown(const absl::Status& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (!shutdown_reason_.ok()) return;
    shutdown_reason_ = reason;
  }
  shutdown_.StartCancel();
  collective_leader_->Shutdown(reason);
  collective_bufs_->Shutdown(reason);
}

absl::Status Worker::ShutdownReason() {
  absl::MutexLock lock(&mu_);
  return shutdown_reason_;
}

void Worker::SetWorkerLookup(WorkerLookup lookup) { lookup_ = std::move(lookup); }

void Worker::SetCollectiveGroupLeader(const std::string& leader_task,
                                      std::vector<std::string> cluster_tasks) {
  collective_->SetLeader(leader_task);
  collective_leader_->SetClusterTasks(std::move(cluster_tasks));
}

void Worker::CompleteGroupAsync(const CompleteGroupArgs& request, CompleteGroupResult* response,
                                StatusCallback done) {
  collective_leader_->CompleteGroupAsync(request, response, std::move(done));
}

void Worker::CompleteInstanceAsync(const CompleteInstanceArgs& request,
                                   CompleteInstanceResult* response, StatusCallback done) {
  collective_leader_->CompleteInstanceAsync(request, response, std::move(done));
}

void Worker::RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                          StatusCallback done, CancellationManager* cancellation) {
  collective_bufs_->Get(
      key, deadline,
      [tensor, done = std::move(done)](absl::Status s, Tensor value) {
        if (s.ok()) *tensor = std::move(value);
        done(s);
      },
      cancellation);
}

void Worker::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                             StatusCallback done, CancellationManager* cancellation) {
  if (absl::Status down = ShutdownReason(); !down.ok()) {
    done(down);
    return;
  }
  std::shared_ptr<Rendezvous> r = rendezvous_mgr_.FindOrCreateUnlessCleaned(step_id);
  if (r == nullptr) {
    // Cleaned up: the master saw a failure elsewhere first (a step that
    // succeeds has served every tensor before it is cleaned up). So this is
    // an echo of that failure, not the step's root cause.
    done(MarkDerived(errors::Aborted("step ", step_id, " is already over on ", task_,
                                     "; cannot serve '", rendezvous_key, "'")));
    return;
  }
  r->RecvAsync(
      rendezvous_key,
      [tensor, done = std::move(done)](const absl::Status& s, const Tensor& value) {
        if (s.ok()) *tensor = value;
        done(s);
      },
      cancellation);
}

void Worker::RegisterGraphAsync(const RegisterGraphArgs& request, RegisterGraphResult* response,
                                StatusCallback done) {
  if (!device_mgr_->status().ok()) {  // a malformed device option: say so, on every graph
    done(device_mgr_->status());
    return;
  }
  auto item = Build(request.graph);
  if (!item.ok()) {
    done(item.status());
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    response->graph_handle = absl::StrCat("g", next_handle_++);
    graphs_[response->graph_handle] = std::move(item).value();
  }
  done(absl::OkStatus());
}

void Worker::DeregisterGraphAsync(const std::string& graph_handle, absl::Time,
                                  StatusCallback done) {
  std::shared_ptr<Item> dropped;
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(graph_handle);
    if (it != graphs_.end()) {
      dropped = std::move(it->second);
      graphs_.erase(it);
    }
  }
  if (dropped == nullptr) {
    done(errors::NotFound("graph handle '", graph_handle, "' is not registered"));
    return;
  }
  done(absl::OkStatus());
}

void Worker::RunGraphAsync(const RunGraphArgs& request, RunGraphResult* response,
                           StatusCallback done) {
  std::shared_ptr<Item> item;
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(request.graph_handle);
    if (it != graphs_.end()) item = it->second;
  }
  if (item == nullptr) {  // not under mu_: `done` may call back into this worker
    done(errors::NotFound("graph handle '", request.graph_handle, "' is not registered"));
    return;
  }
  if (static_cast<int>(request.feeds.size()) != item->num_args) {
    done(errors::InvalidArgument("graph '", request.graph_handle, "' takes ", item->num_args,
                                 " feeds, got ", request.feeds.size()));
    return;
  }
  // The step's state lives until the executor (and any timer) is done with it.
  struct Step {
    CallFrame frame;
    CancellationManager cancellation;
    std::unique_ptr<StepStatsCollector> stats;
    std::shared_ptr<Item> item;
    std::shared_ptr<Rendezvous> rendezvous;
    std::atomic<bool> timed_out{false};
    std::atomic<bool> shut_down{false};
    CancellationManager::Token shutdown_token = 0;
  };
  auto step = std::make_shared<Step>();
  step->item = item;
  step->frame.args = request.feeds;
  step->frame.retvals.resize(item->num_retvals);
  Executor::Args args;
  args.step_id = request.step_id;
  args.call_frame = &step->frame;
  args.cancellation = &step->cancellation;
  args.inter_op_pool = inter_op_pool_.get();
  args.collective = collective_.get();
  if (item->uses_rendezvous) {
    auto rendezvous = std::make_shared<StepRendezvous>(
        rendezvous_mgr_.FindOrCreate(request.step_id), task_, request.step_id, lookup_);
    if (BatchRecvTensors()) {
      for (const auto& [task, keys] : item->batched_recvs) {
        rendezvous->Prefetch(task, keys);
      }
    }
    step->rendezvous = std::move(rendezvous);
    args.rendezvous = step->rendezvous.get();
    // A cancelled step must also wake receives that wait for a peer.
    CancellationManager::Token token;
    step->cancellation.RegisterCallback(
        &token, [r = step->rendezvous] { r->StartAbort(errors::Cancelled("step was cancelled")); });
  }
  if (request.collect_step_stats) {
    DeviceStepStats* dev = response->step_stats.add_dev_stats();
    dev->set_device(item->executor->device()->name());
    step->stats = std::make_unique<StepStatsCollector>(dev);
    args.stats = step->stats.get();
  }
  // Shutdown cancels the step like a timeout does, and says why.
  if (!shutdown_.RegisterCallback(&step->shutdown_token, [step] {
        step->shut_down.store(true);
        step->cancellation.StartCancel();
      })) {
    done(ShutdownReason());
    return;
  }
  std::optional<Timer::Id> deadline;
  if (request.timeout_in_ms > 0) {
    // A step past its deadline is cancelled: nodes not yet started are skipped
    // and blocking kernels are woken through the cancellation manager. Not on
    // the timer's thread: waking receives may run kernels inline.
    deadline =
        timer_->Schedule(absl::Now() + absl::Milliseconds(request.timeout_in_ms), [this, step] {
          inter_op_pool_->Schedule([step] {
            step->timed_out.store(true);
            step->cancellation.StartCancel();
          });
        });
  }
  uint64_t running_id;
  {
    absl::MutexLock lock(&mu_);
    running_id = next_running_id_++;
    running_[request.step_id][running_id] = [step] { step->cancellation.StartCancel(); };
  }
  const int64_t timeout = request.timeout_in_ms;
  const int64_t step_id = request.step_id;
  item->executor->RunAsync(args, [this, step, response, timeout, step_id, running_id, deadline,
                                  done = std::move(done)](absl::Status s) {
    if (deadline.has_value()) timer_->Cancel(*deadline);
    shutdown_.DeregisterCallback(step->shutdown_token);
    {
      absl::MutexLock lock(&mu_);
      auto it = running_.find(step_id);
      it->second.erase(running_id);
      if (it->second.empty()) running_.erase(it);
    }
    if (step->shut_down.load()) {
      const absl::Status reason = ShutdownReason();
      s = absl::Status(reason.code(),
                       absl::StrCat(reason.message(), "; its running step was cancelled"));
    } else if (step->timed_out.load()) {
      s = errors::DeadlineExceeded("step did not finish within ", timeout, " ms");
    } else if (s.ok()) {
      response->fetches = std::move(step->frame.retvals);
    }
    // Peers of this partition waiting for our tensors must not wait forever.
    if (!s.ok() && step->rendezvous != nullptr) step->rendezvous->StartAbort(s);
    done(std::move(s));
  });
}

}  // namespace tensorgrid
