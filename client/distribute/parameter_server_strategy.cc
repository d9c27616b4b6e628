#include "client/distribute/parameter_server_strategy.h"

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace distribute {

absl::StatusOr<std::unique_ptr<ParameterServerStrategy>> ParameterServerStrategy::Create(
    const ClusterSpec& cluster) {
  std::vector<std::string> workers, ps;
  std::string target;
  for (const char* job : {"chief", "worker"}) {
    for (int i = 0; i < cluster.num_tasks(job); ++i) {
      // No device type: the placer puts the replica's ops on the task's GPU
      // when it has one (and the op a GPU kernel), else on its CPU.
      workers.push_back(TaskName(job, i));
      if (target.empty()) {
        TG_ASSIGN_OR_RETURN(std::string address, cluster.TaskAddress(job, i));
        target = "grpc://" + address;
      }
    }
  }
  for (int i = 0; i < cluster.num_tasks("ps"); ++i) {
    ps.push_back(absl::StrCat(TaskName("ps", i), "/device:CPU:0"));
  }
  if (workers.empty() || ps.empty()) {
    return errors::InvalidArgument(
        "ParameterServerStrategy needs at least one \"ps\" task and one \"chief\" or \"worker\" "
        "task; the cluster has ",
        ps.size(), " ps and ", workers.size(), " worker task(s)");
  }
  return std::unique_ptr<ParameterServerStrategy>(
      new ParameterServerStrategy(std::move(workers), std::move(ps), std::move(target)));
}

ParameterServerStrategy::ParameterServerStrategy(std::vector<std::string> workers,
                                                 std::vector<std::string> ps, std::string target)
    : Strategy(std::move(workers)), ps_devices_(std::move(ps)), target_(std::move(target)) {}

training::Variable ParameterServerStrategy::CreateVariable(
    const Scope& scope, const std::string& name, const TensorShape& shape, DataType dtype,
    const training::Initializer& initializer, const training::VariableOptions& options) {
  const std::string& device = ps_devices_[next_ps_++ % ps_devices_.size()];
  return PlainVariable(scope, device, name, shape, dtype, initializer, options);
}

absl::StatusOr<Operation> ParameterServerStrategy::Apply(const Scope& scope,
                                                         const PendingUpdate& update) {
  return ApplyMeanOfLocalGradients(scope, update);
}

}  // namespace distribute
}  // namespace tensorgrid
