#include "examples/between_graph_task.h"

#include <cstdlib>

#include "core/platform/status.h"

namespace tensorgrid {

absl::Status TaskFlags::Check() const {
  const bool hosts = !ps_hosts.empty() || !worker_hosts.empty();
  if (hosts && !cluster.empty()) {
    return errors::InvalidArgument("give --cluster or --ps_hosts/--worker_hosts, not both");
  }
  if ((hosts || !cluster.empty()) && job_name.empty()) {
    return errors::InvalidArgument("give --job_name");
  }
  if (!hosts && cluster.empty() && !job_name.empty()) {
    return errors::InvalidArgument("--job_name needs --ps_hosts/--worker_hosts or --cluster");
  }
  if (job_name.empty() && std::getenv("TF_CONFIG") == nullptr) {
    return errors::InvalidArgument("give --ps_hosts/--worker_hosts or --cluster, or set TF_CONFIG");
  }
  return absl::OkStatus();
}

absl::StatusOr<TfConfig> TaskFlags::Resolve() const {
  TfConfig config;
  if (job_name.empty()) {
    TG_ASSIGN_OR_RETURN(config, TfConfig::FromEnvironment());
  } else {
    TG_ASSIGN_OR_RETURN(config.cluster, cluster.empty()
                                            ? ClusterSpec::FromHostsFlags(ps_hosts, worker_hosts)
                                            : ClusterSpec::FromFlag(cluster));
    config.task = {job_name, task_index};
  }
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
