#include "examples/between_graph_task.h"

#include <iostream>

#include "core/platform/status.h"

namespace tensorgrid {

absl::Status TaskFlags::Check() const {
  const ClusterResolverOptions& r = resolver;
  const bool hosts = !r.ps_hosts.empty() || !r.worker_hosts.empty();
  if (hosts && !r.cluster.empty()) {
    return errors::InvalidArgument("give --cluster or --ps_hosts/--worker_hosts, not both");
  }
  if (!hosts && r.cluster.empty() && (!r.job_name.empty() || r.task_index >= 0)) {
    return errors::InvalidArgument("--job_name needs --ps_hosts/--worker_hosts or --cluster");
  }
  TG_ASSIGN_OR_RETURN(std::unique_ptr<ClusterResolver> chosen,
                      NewClusterResolver(resolver, Environment::Process()));
  if (chosen->name() == "flags" && r.job_name.empty()) {
    return errors::InvalidArgument("give --job_name");
  }
  return absl::OkStatus();
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
