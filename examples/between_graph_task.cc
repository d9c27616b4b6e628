#include "examples/between_graph_task.h"

#include <iostream>

#include "core/platform/status.h"

namespace tensorgrid {

absl::Status TaskFlags::Check() const {
  const ClusterResolverOptions& r = resolver;
  const bool cluster_flags = !r.cluster.empty() || !r.ps_hosts.empty() || !r.worker_hosts.empty();
  if (!cluster_flags && (!r.job_name.empty() || r.task_index >= 0)) {
    return errors::InvalidArgument("--job_name needs --ps_hosts/--worker_hosts or --cluster");
  }
  return NewClusterResolver(resolver, Environment::Process()).status();
}

absl::StatusOr<TfConfig> TaskFlags::Resolve() const {
  TG_ASSIGN_OR_RETURN(ResolvedTask task, ResolveCluster(resolver, Environment::Process()));
  std::cerr << task.ToString() << std::endl;
  const std::string gpus = task.ApplyCudaVisibleDevices();  // before the server's devices
  if (!gpus.empty()) std::cerr << gpus << std::endl;
  const TfConfig& config = task.config;
  if (config.cluster.num_tasks("ps") == 0 || config.cluster.num_tasks("worker") == 0) {
    return errors::InvalidArgument("the cluster needs ps and worker tasks, got ",
                                   config.cluster.ToString());
  }
  if (config.task.job != "ps" && config.task.job != "worker") {
    return errors::InvalidArgument("this task is ", config.task.name(),
                                   "; the jobs are ps and worker");
  }
  return config;
}

}  // namespace tensorgrid
