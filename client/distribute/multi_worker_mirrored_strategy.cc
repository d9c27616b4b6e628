#include "client/distribute/multi_worker_mirrored_strategy.h"

#include "absl/strings/str_cat.h"
#include "client/ops/collective_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace distribute {
namespace {

// The tasks that train, in replica order: the chief, then the workers.
std::vector<TaskId> Workers(const ClusterSpec& cluster) {
  std::vector<TaskId> workers;
  for (const char* job : {"chief", "worker"}) {
    for (int i = 0; i < cluster.num_tasks(job); ++i) workers.push_back({job, i});
  }
  return workers;
}

std::vector<std::string> DevicesOf(const TaskId& task, int local_devices) {
  std::vector<std::string> devices;
  for (int d = 0; d < local_devices; ++d) {
    devices.push_back(absl::StrCat(task.name(), "/device:CPU:", d));
  }
  return devices;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MultiWorkerMirroredStrategy>> MultiWorkerMirroredStrategy::Create(
    const Options& options) {
  TfConfig tf_config;
  if (options.tf_config.has_value()) {
    tf_config = *options.tf_config;
  } else {
    TG_ASSIGN_OR_RETURN(tf_config, TfConfig::FromEnvironment());
  }
  if (options.local_devices < 1) {
    return errors::InvalidArgument("MultiWorkerMirroredStrategy: local_devices must be >= 1, got ",
                                   options.local_devices);
  }
  const std::vector<TaskId> workers = Workers(tf_config.cluster);
  if (workers.empty()) {
    return errors::InvalidArgument(
        "MultiWorkerMirroredStrategy: the cluster has no \"chief\" or \"worker\" task");
  }
  int index = -1;
  std::vector<std::string> members;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (workers[w] == tf_config.task) index = static_cast<int>(w);
    for (const std::string& d : DevicesOf(workers[w], options.local_devices)) members.push_back(d);
  }
  if (index < 0) {
    return errors::InvalidArgument("MultiWorkerMirroredStrategy: this task (",
                                   tf_config.task.name(),
                                   ") is not a chief or worker task of the cluster");
  }
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = options.local_devices;
  config.set_collective_group_leader(workers[0].name());
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                      Server::Create(tf_config.cluster, tf_config.task.job, tf_config.task.index,
                                     config, options.server));
  TG_RETURN_IF_ERROR(server->Start());
  auto strategy = std::unique_ptr<MultiWorkerMirroredStrategy>(new MultiWorkerMirroredStrategy(
      DevicesOf(workers[index], options.local_devices), static_cast<int>(workers.size()), index,
      options, std::move(server)));
  strategy->SetGroup(members);
  return strategy;
}

absl::StatusOr<std::unique_ptr<MultiWorkerMirroredStrategy>> MultiWorkerMirroredStrategy::Create() {
  return Create(Options());
}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(std::vector<std::string> devices,
                                                         int num_workers, int worker_index,
                                                         const Options& options,
                                                         std::unique_ptr<Server> server)
    : MirroredStrategy(devices, num_workers * static_cast<int>(devices.size()),
                       worker_index * static_cast<int>(devices.size()), options.mirrored),
      num_workers_(num_workers),
      worker_index_(worker_index),
      server_(std::move(server)) {}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() {
  if (server_ != nullptr) server_->Stop();
}

ConfigProto MultiWorkerMirroredStrategy::session_config() const {
  ConfigProto config;
  config.add_device_filters(server_->task());
  return config;
}

Output MultiWorkerMirroredStrategy::InitialValue(const Scope& scope, int local_replica,
                                                 const Output& primary, const TensorShape& shape,
                                                 DataType dtype) {
  if (local_replica == 0) bcast_instance_ = NextInstanceKey();
  const float timeout = options().collective_timeout_seconds;
  if (first_replica_id() + local_replica == 0) {
    return ops::CollectiveBcastSend(scope, primary, num_replicas_in_sync(), group_key(),
                                    bcast_instance_, shape, timeout);
  }
  return ops::CollectiveBcastRecv(scope, dtype, num_replicas_in_sync(), group_key(),
                                  bcast_instance_, shape, timeout);
}

}  // namespace distribute
}  // namespace tensorgrid
