// MpiClusterResolver: the cluster of an `mpirun` launch. MPI tells a rank
// its number (OMPI_COMM_WORLD_RANK, or PMIX_RANK) and the world's size
// (OMPI_COMM_WORLD_SIZE), not its peers' addresses, so those come from the
// command line, the same for every rank:
//
//   mpirun -np 3 tg_server --cluster_resolver=mpi --cluster="ps=h1:2222;worker=h1:2223,h2:2222"
//       rank r is the r-th task as written: ps 0, worker 0, worker 1
//   mpirun -np 3 tg_server --cluster_resolver=mpi --mpi_jobs=ps:1,worker:2
//       --cluster=h1:2222,h1:2223,h2:2222
//       rank r at the r-th address, jobs in rank order
//   mpirun -np 3 --hostfile hosts tg_server --cluster_resolver=mpi
//       --hostfile=hosts --mpi_jobs=ps:1,worker:2
//       OpenMPI's hostfile ("h1 slots=2", "h2 slots=1"): ranks fill each
//       host's slots in turn (OpenMPI's default --map-by slot), the k-th
//       rank on a host at port_base + k
//
// With a hostfile, a rank whose OMPI_COMM_WORLD_LOCAL_RANK differs from the
// one that mapping gives fails with FailedPrecondition (mpirun --map-by node).
// The world's size, when given, must match the tasks the cluster has.
#ifndef TENSORGRID_DISTRIBUTED_MPI_CLUSTER_RESOLVER_H_
#define TENSORGRID_DISTRIBUTED_MPI_CLUSTER_RESOLVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/cluster_resolver.h"

namespace tensorgrid {

class MpiClusterResolver final : public EnvironmentClusterResolver {
 public:
  using EnvironmentClusterResolver::EnvironmentClusterResolver;
  std::string name() const override { return "mpi"; }
  bool Present() const override {
    return env_.Has("OMPI_COMM_WORLD_RANK") || env_.Has("PMIX_RANK");
  }
  absl::StatusOr<ResolvedTask> Resolve() const override;
};

namespace mpi {

// One host of an OpenMPI hostfile and its slots.
struct HostSlots {
  std::string host;
  int slots = 1;
  friend bool operator==(const HostSlots& a, const HostSlots& b) {
    return a.host == b.host && a.slots == b.slots;
  }
};

// OpenMPI's hostfile text: one host per line, optionally "slots=N" (default
// 1) and "max_slots=M" (ignored); '#' starts a comment; blank lines are
// skipped; a host listed twice adds its slots. InvalidArgument naming
// `name` and the line number for anything else.
absl::StatusOr<std::vector<HostSlots>> ParseHostfile(absl::string_view name,
                                                     absl::string_view text);

}  // namespace mpi
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_MPI_CLUSTER_RESOLVER_H_
