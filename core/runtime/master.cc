#include "core/runtime/master.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/device_name.h"
#include "core/framework/rendezvous.h"
#include "core/graph/partition.h"
#include "core/platform/blocking.h"
#include "core/platform/status.h"
#include "core/runtime/placer.h"

namespace tensorgrid {

namespace {
int64_t RandomStepBase() {
  std::random_device rd;
  return static_cast<int64_t>(((static_cast<uint64_t>(rd()) << 31) ^ rd()) &
                              ((uint64_t{1} << 62) - 1));
}
}  // namespace

Master::Master(const ConfigProto& config, WorkerMap workers, std::string default_task)
    : config_(config),
      workers_(std::move(workers)),
      default_task_(std::move(default_task)),
      next_step_id_(RandomStepBase()) {
  if (config_.device_filters().empty()) return;
  for (const std::string& filter : config_.device_filters()) {
    absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(filter);
    if (!parsed.ok()) {
      filter_error_ =
          errors::InvalidArgument("ConfigProto.device_filters: ", parsed.status().message());
      return;
    }
    filters_.push_back(*parsed);
  }
  WorkerMap kept;
  std::vector<std::string> all;
  for (auto& [task, worker] : workers_) {
    all.push_back(task);
    absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(task);
    if (!parsed.ok()) continue;
    for (const ParsedDeviceName& filter : filters_) {
      if (DeviceNameUtils::IsSpecification(DeviceNameUtils::AddressSpace(filter), *parsed)) {
        kept.emplace(task, worker);
        break;
      }
    }
  }
  if (kept.empty()) {
    filter_error_ = errors::InvalidArgument(
        "ConfigProto.device_filters [", absl::StrJoin(config_.device_filters(), ", "),
        "] match no task of the cluster (", absl::StrJoin(all, ", "), ")");
    return;
  }
  workers_ = std::move(kept);
  if (!workers_.count(default_task_)) default_task_ = workers_.begin()->first;
}

Master::~Master() { Close().IgnoreError(); }

absl::Status Master::CheckOpen() const {
  if (closed_.load(std::memory_order_acquire)) {
    return errors::FailedPrecondition("session is closed");
  }
  return absl::OkStatus();
}

absl::Status Master::Create(const GraphDef& graph, absl::Time answer_by,
                            const CancellationManager* cancellation) {
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(CheckOpen());
  if (graph_ != nullptr) {
    return errors::AlreadyExists("session already has a graph; use Extend to add nodes");
  }
  TG_RETURN_IF_ERROR(LoadDevices(answer_by, cancellation));
  TG_ASSIGN_OR_RETURN(graph_, ImportGraphDef(graph));
  return absl::OkStatus();
}

absl::Status Master::Extend(const GraphDef& graph, absl::Time answer_by,
                            const CancellationManager* cancellation) {
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(CheckOpen());
  if (graph_ == nullptr) {
    TG_RETURN_IF_ERROR(LoadDevices(answer_by, cancellation));
    TG_ASSIGN_OR_RETURN(graph_, ImportGraphDef(graph));
    return absl::OkStatus();
  }
  // Cached units stay valid: nodes are only ever added.
  return ExtendGraph(graph, graph_.get());
}

namespace {
std::string CacheKey(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets) {
  std::vector<std::string> sorted_targets = targets;
  std::sort(sorted_targets.begin(), sorted_targets.end());
  return absl::StrCat(absl::StrJoin(feeds, ","), "->", absl::StrJoin(fetches, ","), "/",
                      absl::StrJoin(sorted_targets, ","));
}
}  // namespace

bool Master::IsBuilt(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets) const {
  const std::string key = CacheKey(feeds, fetches, targets);
  absl::MutexLock lock(&cache_mu_);
  return cache_.contains(key);
}

absl::StatusOr<std::shared_ptr<const Master::ExecutionUnit>> Master::GetOrBuild(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  const std::string key = CacheKey(feeds, fetches, targets);
  TG_RETURN_IF_ERROR(CheckOpen());
  {
    absl::MutexLock lock(&cache_mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  absl::MutexLock lock(&mu_);  // one build at a time
  TG_RETURN_IF_ERROR(CheckOpen());
  {
    absl::MutexLock cache_lock(&cache_mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionUnit> unit, Build(feeds, fetches, targets));
  absl::MutexLock cache_lock(&cache_mu_);
  cache_[key] = unit;
  return unit;
}

absl::StatusOr<std::shared_ptr<const Master::ExecutionUnit>> Master::Build(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  if (graph_ == nullptr)
    return errors::FailedPrecondition("session has no graph; call Create first");
  if (fetches.empty() && targets.empty()) {
    return errors::InvalidArgument("a step needs at least one fetch or target");
  }
  std::unique_ptr<Graph> graph = CopyGraph(*graph_);
  auto unit = std::make_shared<ExecutionUnit>();
  TG_RETURN_IF_ERROR(RewriteGraphForExecution(graph.get(), feeds, fetches, targets, &unit->feeds));
  unit->num_fetches = static_cast<int>(fetches.size());
  std::vector<DeviceAttributes> devices;
  for (const DeviceInfo& d : devices_) devices.push_back(DeviceAttributes{d.name, d.type});
  PlacerOptions options;
  options.allow_soft_placement = config_.allow_soft_placement();
  options.log_device_placement = config_.log_device_placement();
  options.default_device = default_task_;
  options.pinned = stateful_placements_;
  Placer placer(graph.get(), std::move(devices), options);
  TG_RETURN_IF_ERROR(placer.Run());
  for (const Node* n : graph->nodes()) {
    if (n->op_def() != nullptr && n->op_def()->is_stateful) {
      stateful_placements_.emplace(n->name(), n->assigned_device_name());
    }
  }
  TG_RETURN_IF_ERROR(RegisterPartitions(*graph, unit.get()));
  return std::shared_ptr<const ExecutionUnit>(std::move(unit));
}

absl::Status Master::RegisterPartitions(Graph& graph, ExecutionUnit* unit) {
  PartitionOptions options;
  options.node_to_loc = [](const Node& n) { return n.assigned_device_name(); };
  // Read here, where the analysis sees mu_ held (Partition calls back
  // before this returns).
  const std::vector<DeviceInfo>* devices = &devices_;
  options.get_incarnation = [devices](const std::string& device) -> uint64_t {
    for (const DeviceInfo& d : *devices) {
      if (d.name == device) return d.incarnation;
    }
    return 0;
  };
  std::map<std::string, GraphDef> partitions;
  TG_RETURN_IF_ERROR(Partition(graph, options, &partitions));
  for (auto& [device, def] : partitions) {
    PartitionUnit part;
    part.device = device;
    // Renumber the call-frame nodes per partition, remembering the step's index.
    for (NodeDef& n : *def.mutable_node()) {
      std::vector<int>* map = n.op() == "_Arg"      ? &part.feed_index
                              : n.op() == "_Retval" ? &part.fetch_index
                                                    : nullptr;
      if (map == nullptr) continue;
      int64_t global;
      TG_RETURN_IF_ERROR(GetNodeAttr(n, "index", &global));
      SetAttr(&n, "index", static_cast<int64_t>(map->size()));
      map->push_back(static_cast<int>(global));
    }
    RegisterGraphArgs request;
    request.graph = def;
    RegisterGraphResult response;
    part.worker = device_workers_.at(device);
    TG_RETURN_IF_ERROR(WithContext(part.worker->RegisterGraph(request, &response),
                                   absl::StrCat("registering partition for ", device)));
    part.graph_handle = response.graph_handle;
    for (const NodeDef& n : def.node()) {
      if (n.op() == "_Send" || n.op() == "_Recv") unit->uses_rendezvous = true;
    }
    part.graph = std::move(def);
    unit->partitions.push_back(std::move(part));
  }
  return absl::OkStatus();
}

void Master::SetWaitReport(absl::Duration every, std::function<void(const std::string&)> sink) {
  absl::MutexLock lock(&mu_);
  wait_report_every_ = every;
  wait_report_ = std::move(sink);
}

namespace {

// "/job:ps/replica:0/task:0 (connection refused by 127.0.0.1:2222); ..."
std::string Why(const std::map<std::string, absl::Status>& missing) {
  std::vector<std::string> why;
  for (const auto& [task, s] : missing) why.push_back(absl::StrCat(task, " (", s.message(), ")"));
  return absl::StrJoin(why, "; ");
}

// When waiting for tasks must end for an answer to reach a caller who needs
// it by `answer_by`: a margin for the answer's way back (3 s, or half the
// time there is when that is shorter).
absl::Time WaitEnd(absl::Time startup_deadline, absl::Time answer_by) {
  if (answer_by == absl::InfiniteFuture()) return startup_deadline;
  const absl::Duration left = answer_by - absl::Now();
  const absl::Duration margin = std::min(absl::Seconds(3), left / 2);
  return std::min(startup_deadline, answer_by - margin);
}

}  // namespace

// Asks every task for its devices. Tasks that are not up yet (Unavailable,
// DeadlineExceeded) are asked again until the startup timeout
// (operation_timeout_in_ms, default 60 s) or until the caller's answer_by
// leaves just time to answer, or until `cancellation` (if any) is
// cancelled; then the error names each missing task and why. Every
// wait_report_every_ of waiting says so.
absl::Status Master::LoadDevices(absl::Time answer_by, const CancellationManager* cancellation) {
  TG_RETURN_IF_ERROR(filter_error_);
  if (!devices_.empty()) return absl::OkStatus();
  const int64_t timeout_ms =
      config_.operation_timeout_in_ms() > 0 ? config_.operation_timeout_in_ms() : 60000;
  const absl::Time start = absl::Now();
  const absl::Time startup_deadline = start + absl::Milliseconds(timeout_ms);
  const absl::Time deadline = WaitEnd(startup_deadline, answer_by);
  absl::Time next_report = start + wait_report_every_;
  std::map<std::string, GetStatusResult> answered;
  std::map<std::string, absl::Status> missing;
  while (true) {
    missing.clear();
    for (const auto& [task, worker] : workers_) {
      if (answered.count(task)) continue;
      GetStatusResult status;
      absl::Status s = worker->GetStatus(&status);
      if (s.ok()) {
        answered[task] = std::move(status);
      } else if (absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) {
        missing[task] = s;
      } else {
        return WithContext(s, absl::StrCat("task ", task));
      }
    }
    if (missing.empty()) break;
    if (cancellation != nullptr && cancellation->IsCancelled()) {
      return errors::Cancelled("the caller went away while the master waited for ", missing.size(),
                               " of ", workers_.size(), " tasks: ", Why(missing));
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      const int64_t waited_ms = absl::ToInt64Milliseconds(now - start);
      const std::string after =
          deadline < startup_deadline
              ? absl::StrCat(waited_ms, " ms (the caller's deadline; the startup timeout is ",
                             timeout_ms, " ms)")
              : absl::StrCat(timeout_ms, " ms");
      return errors::Unavailable("cannot reach ", missing.size(), " of ", workers_.size(),
                                 " tasks after ", after, ": ", Why(missing));
    }
    if (now >= next_report) {
      const std::string line = absl::StrCat(
          "master of ", default_task_, ": still waiting after ", absl::ToInt64Seconds(now - start),
          " s for ", missing.size(), " of ", workers_.size(), " tasks (giving up after ",
          timeout_ms / 1000, " s): ", Why(missing));
      if (wait_report_) {
        wait_report_(line);
      } else {
        std::fprintf(stderr, "tensorgrid: %s\n", line.c_str());
      }
      next_report = now + wait_report_every_;
    }
    absl::SleepFor(std::min(absl::Milliseconds(100), deadline - now));
  }
  for (auto& [task, status] : answered) {
    for (DeviceInfo& d : status.devices) {
      if (!DeviceNameUtils::IsSameAddressSpace(d.name, task)) {
        return errors::InvalidArgument("task ", task, " reports device ", d.name,
                                       " of another task");
      }
      if (!PassesFilters(d.name)) continue;
      device_workers_[d.name] = workers_.at(task);
      devices_.push_back(std::move(d));
    }
  }
  {
    absl::MutexLock lock(&cache_mu_);
    for (const DeviceInfo& d : devices_) incarnations_[d.name] = d.incarnation;
  }
  if (devices_.empty()) {
    if (!filters_.empty()) {
      return errors::InvalidArgument("ConfigProto.device_filters [",
                                     absl::StrJoin(config_.device_filters(), ", "),
                                     "] match no device of the cluster");
    }
    return errors::Unavailable("no worker has any device");
  }
  return absl::OkStatus();
}

bool Master::PassesFilters(const std::string& device) const {
  if (filters_.empty()) return true;
  absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(device);
  if (!parsed.ok()) return false;
  for (const ParsedDeviceName& filter : filters_) {
    if (DeviceNameUtils::IsSpecification(filter, *parsed)) return true;
  }
  return false;
}

absl::StatusOr<std::vector<DeviceInfo>> Master::ListDevices(
    absl::Time answer_by, const CancellationManager* cancellation) {
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(CheckOpen());
  TG_RETURN_IF_ERROR(LoadDevices(answer_by, cancellation));
  return devices_;
}

absl::Status Master::Reset(const std::vector<std::string>& containers) {
  TG_RETURN_IF_ERROR(filter_error_);
  // All tasks at once: one that is down costs one RPC timeout, not one each.
  absl::Mutex mu;
  std::vector<std::string> failed;
  absl::StatusCode code = absl::StatusCode::kOk;
  size_t pending = workers_.size();
  absl::Notification all_done;
  for (const auto& [task, worker] : workers_) {
    worker->CleanupAllAsync(containers, [&, task = task](absl::Status s) {
      absl::MutexLock lock(&mu);
      if (!s.ok()) {
        failed.push_back(absl::StrCat(task, " (", s.message(), ")"));
        if (code == absl::StatusCode::kOk) code = s.code();
      }
      if (--pending == 0) all_done.Notify();
    });
  }
  all_done.WaitForNotification();
  absl::MutexLock lock(&mu);
  if (failed.empty()) return absl::OkStatus();
  return absl::Status(code, absl::StrCat("resetting containers failed on ", failed.size(), " of ",
                                         workers_.size(), " tasks: ", absl::StrJoin(failed, "; ")));
}

namespace {
absl::Status CheckFeeds(const std::vector<FeedSpec>& specs, const std::vector<Tensor>& feeds) {
  if (feeds.size() != specs.size()) {
    return errors::InvalidArgument("expected ", specs.size(), " feeds, got ", feeds.size());
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    const FeedSpec& spec = specs[i];
    const Tensor& t = feeds[i];
    if (!t.IsInitialized()) {
      return errors::InvalidArgument("feed '", spec.name, "' is an uninitialized tensor");
    }
    if (t.dtype() != spec.dtype) {
      return errors::InvalidArgument("feed '", spec.name, "' has type ", DataTypeString(t.dtype()),
                                     ", but '", spec.name, "' expects ",
                                     DataTypeString(spec.dtype));
    }
    if (!spec.shape.IsCompatibleWith(t.shape())) {
      return errors::InvalidArgument("feed '", spec.name, "' has shape ", t.shape().DebugString(),
                                     ", but placeholder '", spec.name, "' has shape ",
                                     spec.shape.DebugString());
    }
  }
  return absl::OkStatus();
}

// A task that cannot be reached or does not answer in time is named: the
// transport's message only knows its address.
absl::Status NameTask(const std::string& device, absl::Status s) {
  if (!absl::IsUnavailable(s) && !absl::IsDeadlineExceeded(s)) return s;
  // Already says which task (e.g. a receive from another task that is down).
  if (absl::StrContains(s.message(), "task /job:")) return s;
  absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(device);
  if (!parsed.ok()) return s;
  return WithContext(s, absl::StrCat("task ", DeviceNameUtils::TaskName(*parsed)));
}

absl::Status CancelledBeforeStart() {
  return errors::Cancelled(
      "step was cancelled before it started: its client cancelled the call "
      "or went away");
}

void CleanupEverywhere(const std::vector<WorkerInterface*>& workers, int64_t step_id) {
  for (WorkerInterface* w : workers) w->CleanupGraphAsync(step_id, [](absl::Status) {});
}
}  // namespace

// What a step's partition callbacks and its canceller share. All partitions
// run at once; the step's error is the first failure that is not an echo of
// another (a receive aborted because its sender failed).
struct Master::Step {
  std::shared_ptr<const ExecutionUnit> unit;
  std::vector<RunGraphArgs> requests;
  std::vector<RunGraphResult> responses;
  std::vector<WorkerInterface*> involved;  // each once
  int64_t step_id = 0;
  bool stats = false;
  bool output_partition_graphs = false;
  std::vector<Tensor>* fetches = nullptr;
  RunMetadata* metadata = nullptr;
  CancellationManager* cancellation = nullptr;
  CancellationManager::Token token = 0;
  StatusCallback done;

  absl::Mutex mu;
  absl::Status root ABSL_GUARDED_BY(mu);
  absl::Status first ABSL_GUARDED_BY(mu);
  size_t pending ABSL_GUARDED_BY(mu) = 0;
  bool cancelled ABSL_GUARDED_BY(mu) = false;
};

absl::Time Master::LastActive() const {
  if (steps_running_.load(std::memory_order_acquire) > 0) return absl::Now();
  const int64_t ended = last_step_end_ns_.load(std::memory_order_acquire);
  return ended == INT64_MIN ? absl::InfinitePast() : absl::FromUnixNanos(ended);
}

void Master::RunUnitAsync(std::shared_ptr<const ExecutionUnit> unit, const RunOptions& options,
                          const std::vector<Tensor>& feeds, std::vector<Tensor>* fetches,
                          RunMetadata* metadata, CancellationManager* cancellation,
                          StatusCallback done) {
  // The step's end is noted before its caller hears of it (LastActive).
  steps_running_.fetch_add(1, std::memory_order_acq_rel);
  done = [this, done = std::move(done)](absl::Status s) {
    last_step_end_ns_.store(absl::ToUnixNanos(absl::Now()), std::memory_order_release);
    steps_running_.fetch_sub(1, std::memory_order_acq_rel);
    done(std::move(s));
  };
  if (absl::Status s = CheckFeeds(unit->feeds, feeds); !s.ok()) {
    done(std::move(s));
    return;
  }
  auto step = std::make_shared<Step>();
  step->step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  step->stats = metadata != nullptr && options.trace_level() != RunOptions::NO_TRACE;
  step->output_partition_graphs = metadata != nullptr && options.output_partition_graphs();
  step->fetches = fetches;
  step->metadata = metadata;
  step->done = std::move(done);
  const int64_t timeout =
      options.timeout_in_ms() > 0 ? options.timeout_in_ms() : config_.operation_timeout_in_ms();
  const size_t n = unit->partitions.size();
  step->requests.resize(n);
  step->responses.resize(n);
  for (size_t p = 0; p < n; ++p) {
    const PartitionUnit& part = unit->partitions[p];
    RunGraphArgs& r = step->requests[p];
    r.graph_handle = part.graph_handle;
    r.step_id = step->step_id;
    r.timeout_in_ms = timeout;
    r.collect_step_stats = step->stats;
    r.feeds.reserve(part.feed_index.size());
    for (int i : part.feed_index) r.feeds.push_back(feeds[i]);
    if (std::find(step->involved.begin(), step->involved.end(), part.worker) ==
        step->involved.end()) {
      step->involved.push_back(part.worker);
    }
  }
  step->unit = std::move(unit);
  if (n == 0) {  // Build never makes such a unit; nothing would ever call `done`
    step->done(errors::Internal("step ", step->step_id, " has no partitions to run"));
    return;
  }
  if (cancellation != nullptr && cancellation->IsCancelled()) {
    step->done(CancelledBeforeStart());
    return;
  }
  // The canceller is registered once every partition is launched: a cleanup
  // before a partition starts would find nothing to cancel. Until then
  // `pending` holds one extra count, so the step cannot finish first.
  {
    absl::MutexLock lock(&step->mu);
    step->pending = n + 1;
  }
  for (size_t p = 0; p < n; ++p) {
    step->unit->partitions[p].worker->RunGraphAsync(
        step->requests[p], &step->responses[p],
        [this, step, p](absl::Status s) { PartitionDone(step, p, std::move(s)); });
  }
  if (cancellation != nullptr) {
    // Cleaning a step up cancels its partitions everywhere. The callback
    // holds the step, not this frame: it may run after the step is done.
    auto cancel = [step] {
      {
        absl::MutexLock lock(&step->mu);
        step->cancelled = true;
      }
      CleanupEverywhere(step->involved, step->step_id);
    };
    if (cancellation->RegisterCallback(&step->token, cancel)) {
      step->cancellation = cancellation;  // read by FinishStep, after the count below
    } else {
      cancel();  // cancelled while the partitions were being launched
    }
  }
  {
    absl::MutexLock lock(&step->mu);
    if (--step->pending > 0) return;
  }
  FinishStep(step);
}

void Master::PartitionDone(const std::shared_ptr<Step>& step, size_t p, absl::Status s) {
  s = NameTask(step->unit->partitions[p].device, std::move(s));
  bool first_failure = false;
  {
    absl::MutexLock lock(&step->mu);
    if (!s.ok()) {
      first_failure = step->first.ok();
      if (step->first.ok()) step->first = s;
      if (step->root.ok() && !IsDerivedError(s)) step->root = s;
    }
  }
  // The first failure ends the step everywhere: cleaning it up aborts its
  // rendezvous on every task, which wakes partitions that wait for a tensor
  // the failed one will never send (also when that one failed before it
  // began, as on a restarted task). Not under `mu`: a local worker may
  // finish partitions, and so call back, right here.
  if (first_failure) CleanupEverywhere(step->involved, step->step_id);
  {
    absl::MutexLock lock(&step->mu);
    if (--step->pending > 0) return;
  }
  FinishStep(step);
}

void Master::FinishStep(const std::shared_ptr<Step>& step) {
  if (step->cancellation != nullptr) step->cancellation->DeregisterCallback(step->token);
  absl::Status root, first;
  bool cancelled;
  {
    absl::MutexLock lock(&step->mu);
    root = step->root;
    first = step->first;
    cancelled = step->cancelled;
  }
  const ExecutionUnit& unit = *step->unit;
  // Every partition is done, so nothing waits on the step's state any more:
  // release it without waiting (a round trip per task off every step). A
  // step without transfers has no such state unless it failed or was
  // cancelled, when peers may have created some for it.
  if (unit.uses_rendezvous || cancelled || !first.ok()) {
    CleanupEverywhere(step->involved, step->step_id);
  }
  if (cancelled && !first.ok()) {
    step->done(errors::Cancelled("step ", step->step_id,
                                 " was cancelled: its client cancelled "
                                 "the call or went away"));
    return;
  }
  if (!first.ok()) {
    // Only echoes: report the first, without the "derived" mark.
    if (root.ok()) root = absl::Status(first.code(), first.message());
    ExplainRestartAsync(unit, std::move(root), std::move(step->done));
    return;
  }
  if (step->fetches != nullptr) {
    step->fetches->assign(unit.num_fetches, Tensor());
    for (size_t p = 0; p < unit.partitions.size(); ++p) {
      const std::vector<int>& index = unit.partitions[p].fetch_index;
      for (size_t i = 0; i < index.size(); ++i) {
        (*step->fetches)[index[i]] = std::move(step->responses[p].fetches[i]);
      }
    }
  }
  if (step->metadata != nullptr) {
    for (size_t p = 0; p < unit.partitions.size(); ++p) {
      if (step->stats) {
        for (auto& dev : *step->responses[p].step_stats.mutable_dev_stats()) {
          *step->metadata->mutable_step_stats()->add_dev_stats() = std::move(dev);
        }
      }
      if (step->output_partition_graphs) {
        *step->metadata->add_partition_graphs() = unit.partitions[p].graph;
      }
    }
  }
  step->done(absl::OkStatus());
}

// A task that restarted lost its registered graphs and variables; its
// devices then report new incarnations. Says so instead of the symptom. A
// task that does not answer within kRestartCheckTimeout (it froze, or its
// host is gone: its own failure already took the silence detector's 40 s)
// is taken as not restarted, so the failure is not held up by as long again.
void Master::ExplainRestartAsync(const ExecutionUnit& unit, absl::Status failure,
                                 StatusCallback done) {
  if (!absl::IsNotFound(failure) && !absl::IsUnavailable(failure) && !absl::IsAborted(failure)) {
    done(std::move(failure));
    return;
  }
  struct Asked {
    absl::Mutex mu;
    std::map<std::string, uint64_t> known;  // device -> incarnation when the session began
    std::vector<GetStatusResult> now;
    std::vector<bool> answered ABSL_GUARDED_BY(mu);
    absl::Status failure;
    StatusCallback done;
    size_t pending ABSL_GUARDED_BY(mu) = 0;
  };
  auto asked = std::make_shared<Asked>();
  {
    absl::MutexLock lock(&cache_mu_);
    asked->known = incarnations_;
  }
  std::vector<WorkerInterface*> involved;
  for (const PartitionUnit& part : unit.partitions) {
    if (std::find(involved.begin(), involved.end(), part.worker) == involved.end()) {
      involved.push_back(part.worker);
    }
  }
  asked->now.resize(involved.size());
  asked->failure = std::move(failure);
  asked->done = std::move(done);
  {
    absl::MutexLock lock(&asked->mu);
    asked->pending = involved.size();
    asked->answered.assign(involved.size(), false);
  }
  const absl::Time deadline = absl::Now() + kRestartCheckTimeout;
  for (size_t i = 0; i < involved.size(); ++i) {
    involved[i]->GetStatusAsync(deadline, &asked->now[i], [asked, i](absl::Status s) {
      std::vector<bool> answered;
      {
        absl::MutexLock lock(&asked->mu);
        asked->answered[i] = s.ok();
        if (--asked->pending > 0) return;
        answered = asked->answered;
      }
      for (size_t j = 0; j < answered.size(); ++j) {
        if (!answered[j]) continue;
        for (const DeviceInfo& d : asked->now[j].devices) {
          auto it = asked->known.find(d.name);
          if (it == asked->known.end() || it->second == d.incarnation) continue;
          asked->done(errors::Aborted(
              "task ", DeviceNameUtils::TaskName(d.name),
              " restarted (device ", d.name,
              " has a new incarnation); its variables and "
              "registered graphs are gone: create a new session. The step failed with: ",
              asked->failure.message()));
          return;
        }
      }
      asked->done(std::move(asked->failure));
    });
  }
}

absl::Status Master::Run(const RunOptions& options,
                         const std::vector<std::pair<std::string, Tensor>>& feeds,
                         const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                         RunMetadata* metadata, CancellationManager* cancellation) {
  return WaitForCallback([&](StatusCallback done) {
    RunAsync(options, feeds, fetches, targets, outputs, metadata, cancellation, std::move(done));
  });
}

void Master::RunAsync(const RunOptions& options,
                      const std::vector<std::pair<std::string, Tensor>>& feeds,
                      const std::vector<std::string>& fetches,
                      const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                      RunMetadata* metadata, CancellationManager* cancellation,
                      StatusCallback done) {
  if (outputs == nullptr && !fetches.empty()) {
    done(errors::InvalidArgument("Run fetches ", fetches.size(),
                                 " tensors but has no outputs vector"));
    return;
  }
  if (cancellation != nullptr && cancellation->IsCancelled()) {
    done(CancelledBeforeStart());  // before building: a build makes RegisterGraph calls
    return;
  }
  std::vector<std::string> feed_names;
  std::vector<Tensor> feed_values;
  feed_names.reserve(feeds.size());
  feed_values.reserve(feeds.size());
  for (const auto& [name, value] : feeds) {
    feed_names.push_back(name);
    feed_values.push_back(value);
  }
  absl::StatusOr<std::shared_ptr<const ExecutionUnit>> unit =
      GetOrBuild(feed_names, fetches, targets);
  if (!unit.ok()) {
    done(unit.status());
    return;
  }
  RunUnitAsync(*std::move(unit), options, feed_values, outputs, metadata, cancellation,
               std::move(done));
}

absl::StatusOr<int64_t> Master::MakeCallable(const CallableOptions& options) {
  std::vector<std::string> feeds(options.feed().begin(), options.feed().end());
  std::vector<std::string> fetches(options.fetch().begin(), options.fetch().end());
  std::vector<std::string> targets(options.target().begin(), options.target().end());
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionUnit> unit,
                      GetOrBuild(feeds, fetches, targets));
  absl::MutexLock lock(&callables_mu_);
  int64_t handle = next_callable_++;
  callables_[handle] = Callable{std::move(unit), options.run_options()};
  return handle;
}

absl::Status Master::RunCallable(int64_t handle, const std::vector<Tensor>& feeds,
                                 std::vector<Tensor>* fetches, RunMetadata* metadata,
                                 CancellationManager* cancellation) {
  return WaitForCallback([&](StatusCallback done) {
    RunCallableAsync(handle, feeds, fetches, metadata, cancellation, std::move(done));
  });
}

void Master::RunCallableAsync(int64_t handle, const std::vector<Tensor>& feeds,
                              std::vector<Tensor>* fetches, RunMetadata* metadata,
                              CancellationManager* cancellation, StatusCallback done) {
  Callable callable;
  {
    absl::MutexLock lock(&callables_mu_);
    auto it = callables_.find(handle);
    if (it == callables_.end()) {
      done(errors::InvalidArgument("no callable with handle ", handle));
      return;
    }
    callable = it->second;
  }
  if (absl::Status s = CheckOpen(); !s.ok()) {
    done(std::move(s));
    return;
  }
  if (fetches == nullptr && callable.unit->num_fetches > 0) {
    done(errors::InvalidArgument("callable ", handle, " fetches ", callable.unit->num_fetches,
                                 " tensors but RunCallable has no fetches vector"));
    return;
  }
  RunUnitAsync(std::move(callable.unit), callable.options, feeds, fetches, metadata, cancellation,
               std::move(done));
}

absl::Status Master::ReleaseCallable(int64_t handle) {
  absl::MutexLock lock(&callables_mu_);
  if (callables_.erase(handle) == 0)
    return errors::InvalidArgument("no callable with handle ", handle);
  return absl::OkStatus();
}

absl::Status Master::Close() {
  absl::flat_hash_map<std::string, std::shared_ptr<const ExecutionUnit>> cache;
  {
    absl::MutexLock lock(&mu_);
    if (closed_.load(std::memory_order_acquire)) return absl::OkStatus();
    closed_.store(true, std::memory_order_release);
    absl::MutexLock cache_lock(&cache_mu_);
    cache.swap(cache_);
  }
  {
    absl::MutexLock lock(&callables_mu_);
    callables_.clear();
  }
  // Every partition at once, each with the same deadline (and the calls
  // end by then, so that none outlives the workers of a Server that is
  // going).
  const absl::Time deadline = absl::Now() + kCloseTimeout;
  absl::Mutex mu;
  absl::Status status;
  size_t left = 0;
  for (const auto& [key, unit] : cache) left += unit->partitions.size();
  for (const auto& [key, unit] : cache) {
    for (const PartitionUnit& part : unit->partitions) {
      part.worker->DeregisterGraphAsync(part.graph_handle, deadline,
                                        [&mu, &status, &left, &part](absl::Status s) {
                                          absl::MutexLock lock(&mu);
                                          if (status.ok())
                                            status = NameTask(part.device, std::move(s));
                                          --left;
                                        });
    }
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](size_t* n) { return *n == 0; }, &left));
  return status;
}

}  // namespace tensorgrid
