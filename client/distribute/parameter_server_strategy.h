// ParameterServerStrategy: variables on the ps tasks, one replica on each
// worker task, one client driving them all (in-graph replication, like
// TensorFlow 1.x's ParameterServerStrategy in graph mode). A worker's
// replica computes on the worker's GPU when it has one, else on its CPU;
// variables go round-robin over the ps tasks' CPUs in creation order; each step every worker
// computes the gradients of its share of the global batch, their mean is
// taken on the variable's ps task, and one update is applied there. Steps
// are synchronous: N workers with global batch B compute what one replica
// with batch B would.
//
//   TG_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromFlag("ps=...;worker=...,..."));
//   TG_ASSIGN_OR_RETURN(auto strategy, distribute::ParameterServerStrategy::Create(cluster));
//   ... build as with any strategy (strategy.h) ...
//   SessionOptions options;
//   options.target = strategy->target();   // the chief (or worker 0)
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_PARAMETER_SERVER_STRATEGY_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_PARAMETER_SERVER_STRATEGY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/distribute/strategy.h"
#include "distributed/cluster_spec.h"

namespace tensorgrid {
namespace distribute {

class ParameterServerStrategy : public Strategy {
 public:
  // InvalidArgument unless the cluster has at least one "ps" task and one
  // "chief" or "worker" task (the chief, if any, is a worker too).
  static absl::StatusOr<std::unique_ptr<ParameterServerStrategy>> Create(
      const ClusterSpec& cluster);

  // "grpc://" + the chief's (or worker 0's) address.
  const std::string& target() const { return target_; }
  ConfigProto session_config() const override { return ConfigProto(); }
  // The ps device variable `i` (in creation order) goes to.
  const std::vector<std::string>& ps_devices() const { return ps_devices_; }

 protected:
  training::Variable CreateVariable(const Scope& scope, const std::string& name,
                                    const TensorShape& shape, DataType dtype,
                                    const training::Initializer& initializer,
                                    const training::VariableOptions& options) override;
  absl::StatusOr<Operation> Apply(const Scope& scope, const PendingUpdate& update) override;

 private:
  ParameterServerStrategy(std::vector<std::string> workers, std::vector<std::string> ps,
                          std::string target);
  std::vector<std::string> ps_devices_;
  std::string target_;
  int next_ps_ = 0;
};

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_PARAMETER_SERVER_STRATEGY_H_
