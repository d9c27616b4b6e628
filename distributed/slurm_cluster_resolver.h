// SlurmClusterResolver: the cluster of one `srun` step, from the variables
// srun gives every task. With
//
//   srun -N 2 -n 5 tg_server --cluster_resolver=slurm --slurm_jobs=ps:1,worker:4
//
// and SLURM_STEP_NODELIST=n[1-2], SLURM_STEP_TASKS_PER_NODE=3,2, ranks 0-2
// run on n1 and 3-4 on n2 (srun's default block distribution), each at
// port_base + its SLURM_LOCALID:
//
//   ps=n1:2222;worker=n1:2223,n1:2224,n2:2222,n2:2223
//
// Hosts stay in Slurm's order (n2 before n10: never sorted as strings). A
// task checks that its own entry is SLURMD_NODENAME:port_base+SLURM_LOCALID
// and fails with FailedPrecondition otherwise (a cyclic distribution, an
// arbitrary one), since the other tasks compute the same table and would
// look for it there. With gpus_per_task N, local task k gets GPUs
// kN..kN+N-1 (ResolvedTask::cuda_visible_devices).
//
// Variables read: SLURM_PROCID, SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE,
// SLURM_LOCALID, SLURMD_NODENAME, and SLURM_STEP_NUM_TASKS when set (a check).
#ifndef TENSORGRID_DISTRIBUTED_SLURM_CLUSTER_RESOLVER_H_
#define TENSORGRID_DISTRIBUTED_SLURM_CLUSTER_RESOLVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/cluster_resolver.h"

namespace tensorgrid {

class SlurmClusterResolver final : public EnvironmentClusterResolver {
 public:
  using EnvironmentClusterResolver::EnvironmentClusterResolver;
  std::string name() const override { return "slurm"; }
  bool Present() const override { return env_.Has("SLURM_PROCID"); }
  absl::StatusOr<ResolvedTask> Resolve() const override;
};

namespace slurm {

// Slurm's hostlist syntax, expanded in order: "n[1-3,7]" -> n1 n2 n3 n7;
// "a1,b[01-10]" -> a1 b01 ... b10 (a range keeps its lower bound's zero
// padding); several bracket groups multiply out, the first outermost:
// "r[1-2]-n[1-2]" -> r1-n1 r1-n2 r2-n1 r2-n2. InvalidArgument quoting the
// list for unbalanced or nested brackets, an empty name or range, a range
// that runs backwards or is not decimal, and lists of over 1,000,000 hosts.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view hostlist);

// SLURM_STEP_TASKS_PER_NODE's syntax: "2(x3),1" -> 2 2 2 1. InvalidArgument
// for counts that are not positive integers.
absl::StatusOr<std::vector<int>> ExpandTasksPerNode(absl::string_view tasks_per_node);

}  // namespace slurm
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_SLURM_CLUSTER_RESOLVER_H_
