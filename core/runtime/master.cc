#include "core/runtime/master.h"

#include <cstdio>

#include "absl/strings/str_join.h"
#include "core/platform/status.h"

namespace tensorgrid {

Master::Master(const ConfigProto& config, WorkerInterface* worker, std::string device)
    : config_(config), worker_(worker), device_(std::move(device)) {}

Master::~Master() { Close().IgnoreError(); }

absl::Status Master::CheckOpen() const {
  if (closed_) return errors::FailedPrecondition("session is closed");
  return absl::OkStatus();
}

absl::Status Master::Create(const GraphDef& graph) {
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(CheckOpen());
  if (graph_ != nullptr) {
    return errors::AlreadyExists("session already has a graph; use Extend to add nodes");
  }
  TG_ASSIGN_OR_RETURN(graph_, ImportGraphDef(graph));
  return absl::OkStatus();
}

absl::Status Master::Extend(const GraphDef& graph) {
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(CheckOpen());
  if (graph_ == nullptr) {
    TG_ASSIGN_OR_RETURN(graph_, ImportGraphDef(graph));
    return absl::OkStatus();
  }
  // Cached units stay valid: nodes are only ever added.
  return ExtendGraph(graph, graph_.get());
}

absl::StatusOr<std::shared_ptr<const Master::ExecutionUnit>> Master::GetOrBuild(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  std::vector<std::string> sorted_targets = targets;
  std::sort(sorted_targets.begin(), sorted_targets.end());
  const std::string key = absl::StrCat(absl::StrJoin(feeds, ","), "->", absl::StrJoin(fetches, ","),
                                       "/", absl::StrJoin(sorted_targets, ","));
  {
    absl::ReaderMutexLock lock(&mu_);
    TG_RETURN_IF_ERROR(CheckOpen());
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  absl::MutexLock lock(&mu_);
  TG_RETURN_IF_ERROR(CheckOpen());
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionUnit> unit, Build(feeds, fetches, targets));
  cache_[key] = unit;
  return unit;
}

absl::StatusOr<std::shared_ptr<const Master::ExecutionUnit>> Master::Build(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  if (graph_ == nullptr) return errors::FailedPrecondition("session has no graph; call Create first");
  if (fetches.empty() && targets.empty()) {
    return errors::InvalidArgument("a step needs at least one fetch or target");
  }
  std::unique_ptr<Graph> graph = CopyGraph(*graph_);
  auto unit = std::make_shared<ExecutionUnit>();
  TG_RETURN_IF_ERROR(RewriteGraphForExecution(graph.get(), feeds, fetches, targets, &unit->feeds));
  unit->num_fetches = static_cast<int>(fetches.size());
  for (Node* n : graph->nodes()) {
    n->set_assigned_device_name(device_);
    if (config_.log_device_placement()) {
      std::fprintf(stderr, "%s: (%s): %s\n", n->name().c_str(), n->op().c_str(), device_.c_str());
    }
  }
  RegisterGraphRequest request;
  graph->ToGraphDef(&request.graph);
  RegisterGraphResponse response;
  TG_RETURN_IF_ERROR(worker_->RegisterGraph(request, &response));
  unit->graph_handle = response.graph_handle;
  unit->partition = std::move(request.graph);
  return std::shared_ptr<const ExecutionUnit>(std::move(unit));
}

absl::Status Master::RunUnit(const ExecutionUnit& unit, const RunOptions& options,
                             const std::vector<Tensor>& feeds, std::vector<Tensor>* fetches,
                             RunMetadata* metadata) {
  if (feeds.size() != unit.feeds.size()) {
    return errors::InvalidArgument("expected ", unit.feeds.size(), " feeds, got ", feeds.size());
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    const FeedSpec& spec = unit.feeds[i];
    const Tensor& t = feeds[i];
    if (!t.IsInitialized()) {
      return errors::InvalidArgument("feed '", spec.name, "' is an uninitialized tensor");
    }
    if (t.dtype() != spec.dtype) {
      return errors::InvalidArgument("feed '", spec.name, "' has type ", DataTypeString(t.dtype()),
                                     ", but '", spec.name, "' expects ", DataTypeString(spec.dtype));
    }
    if (!spec.shape.IsCompatibleWith(t.shape())) {
      return errors::InvalidArgument("feed '", spec.name, "' has shape ", t.shape().DebugString(),
                                     ", but placeholder '", spec.name, "' has shape ",
                                     spec.shape.DebugString());
    }
  }
  RunGraphRequest request;
  request.graph_handle = unit.graph_handle;
  request.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  request.feeds = feeds;
  request.timeout_in_ms =
      options.timeout_in_ms() > 0 ? options.timeout_in_ms() : config_.operation_timeout_in_ms();
  request.collect_step_stats = metadata != nullptr && options.trace_level() != RunOptions::NO_TRACE;
  RunGraphResponse response;
  TG_RETURN_IF_ERROR(worker_->RunGraph(request, &response));
  *fetches = std::move(response.fetches);
  if (metadata != nullptr) {
    if (request.collect_step_stats) {
      for (auto& dev : *response.step_stats.mutable_dev_stats()) {
        *metadata->mutable_step_stats()->add_dev_stats() = std::move(dev);
      }
    }
    if (options.output_partition_graphs()) *metadata->add_partition_graphs() = unit.partition;
  }
  return absl::OkStatus();
}

absl::Status Master::Run(const RunOptions& options,
                         const std::vector<std::pair<std::string, Tensor>>& feeds,
                         const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                         RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  std::vector<Tensor> feed_values;
  feed_names.reserve(feeds.size());
  feed_values.reserve(feeds.size());
  for (const auto& [name, value] : feeds) {
    feed_names.push_back(name);
    feed_values.push_back(value);
  }
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionUnit> unit,
                      GetOrBuild(feed_names, fetches, targets));
  return RunUnit(*unit, options, feed_values, outputs, metadata);
}

absl::StatusOr<int64_t> Master::MakeCallable(const CallableOptions& options) {
  std::vector<std::string> feeds(options.feed().begin(), options.feed().end());
  std::vector<std::string> fetches(options.fetch().begin(), options.fetch().end());
  std::vector<std::string> targets(options.target().begin(), options.target().end());
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionUnit> unit, GetOrBuild(feeds, fetches, targets));
  absl::MutexLock lock(&callables_mu_);
  int64_t handle = next_callable_++;
  callables_[handle] = Callable{std::move(unit), options.run_options()};
  return handle;
}

absl::Status Master::RunCallable(int64_t handle, const std::vector<Tensor>& feeds,
                                 std::vector<Tensor>* fetches, RunMetadata* metadata) {
  Callable callable;
  {
    absl::MutexLock lock(&callables_mu_);
    auto it = callables_.find(handle);
    if (it == callables_.end()) return errors::InvalidArgument("no callable with handle ", handle);
    callable = it->second;
  }
  {
    absl::ReaderMutexLock lock(&mu_);
    TG_RETURN_IF_ERROR(CheckOpen());
  }
  return RunUnit(*callable.unit, callable.options, feeds, fetches, metadata);
}

absl::Status Master::ReleaseCallable(int64_t handle) {
  absl::MutexLock lock(&callables_mu_);
  if (callables_.erase(handle) == 0) return errors::InvalidArgument("no callable with handle ", handle);
  return absl::OkStatus();
}

absl::Status Master::Close() {
  absl::flat_hash_map<std::string, std::shared_ptr<const ExecutionUnit>> cache;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    cache.swap(cache_);
  }
  {
    absl::MutexLock lock(&callables_mu_);
    callables_.clear();
  }
  absl::Status status;
  for (const auto& [key, unit] : cache) {
    absl::Status s = worker_->DeregisterGraph(unit->graph_handle);
    if (status.ok()) status = s;
  }
  return status;
}

}  // namespace tensorgrid
