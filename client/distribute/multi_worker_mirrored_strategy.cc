#include "client/distribute/multi_worker_mirrored_strategy.h"

#include "absl/strings/str_cat.h"
#include "client/ops/collective_ops.h"
#include "core/framework/device_factory.h"
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

std::vector<std::string> DevicesOf(const TaskId& task, const std::string& type, int local_devices) {
  std::vector<std::string> devices;
  for (int d = 0; d < local_devices; ++d) {
    devices.push_back(absl::StrCat(task.name(), "/device:", type, ":", d));
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
  if (options.local_devices < 0) {
    return errors::InvalidArgument("MultiWorkerMirroredStrategy: local_devices must be >= 0, got ",
                                   options.local_devices);
  }
  // On the GPUs when this worker has any (and so, as in TensorFlow, does
  // every worker).
  TG_ASSIGN_OR_RETURN(const int gpus, LocalDeviceCount(DEVICE_GPU, options.config));
  const std::string type = gpus > 0 ? DEVICE_GPU : DEVICE_CPU;
  const int local_devices =
      options.local_devices > 0 ? options.local_devices : (gpus > 0 ? gpus : 1);
  if (gpus > 0 && local_devices > gpus) {
    return errors::InvalidArgument("MultiWorkerMirroredStrategy: local_devices is ", local_devices,
                                   " but this worker has ", gpus, " GPU", gpus == 1 ? "" : "s");
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
    for (const std::string& d : DevicesOf(workers[w], type, local_devices)) members.push_back(d);
  }
  if (index < 0) {
    return errors::InvalidArgument("MultiWorkerMirroredStrategy: this task (",
                                   tf_config.task.name(),
                                   ") is not a chief or worker task of the cluster");
  }
  ConfigProto config = options.config;
  (*config.mutable_device_count())[DEVICE_CPU] = gpus > 0 ? 1 : local_devices;
  (*config.mutable_device_count())[DEVICE_GPU] = gpus > 0 ? local_devices : 0;
  config.set_collective_group_leader(workers[0].name());
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                      Server::Create(tf_config.cluster, tf_config.task.job, tf_config.task.index,
                                     config, options.server));
  TG_RETURN_IF_ERROR(server->Start());
  auto strategy = std::unique_ptr<MultiWorkerMirroredStrategy>(new MultiWorkerMirroredStrategy(
      DevicesOf(workers[index], type, local_devices), static_cast<int>(workers.size()), index,
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
    : MirroredStrategy(std::move(devices), num_workers, worker_index, options.mirrored),
      num_workers_(num_workers),
      worker_index_(worker_index),
      server_(std::move(server)) {}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() {
  if (server_ != nullptr) server_->Stop();
}

ConfigProto MultiWorkerMirroredStrategy::session_config() const {
  ConfigProto config = MirroredStrategy::session_config();
  config.clear_device_count();  // the server's
  config.add_device_filters(server_->task());
  return config;
}

Output MultiWorkerMirroredStrategy::InitialValue(const Scope& scope, int local_replica,
                                                 const Output& primary, const TensorShape& shape,
                                                 DataType dtype) {
  if (local_replica == 0) bcast_instance_ = NextInstanceKey();
  const float timeout = options().collective_timeout_seconds;
  // On the replica's device even when the variable is not (no kernel of
  // its initializer there): the group's members are the replicas' devices.
  const Scope member = scope.ClearColocation().WithDevice(replica_devices()[local_replica]);
  if (first_replica_id() + local_replica == 0) {
    return ops::CollectiveBcastSend(member, primary, num_replicas_in_sync(), group_key(),
                                    bcast_instance_, shape, timeout);
  }
  return ops::CollectiveBcastRecv(member, dtype, num_replicas_in_sync(), group_key(),
                                  bcast_instance_, shape, timeout);
}

}  // namespace distribute
}  // namespace tensorgrid
