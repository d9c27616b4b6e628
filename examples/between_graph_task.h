// The classic between-graph programs' cluster flags: which task this is, by
// any ClusterResolver (distributed/cluster_resolver.h): --ps_hosts/
// --worker_hosts or --cluster with --job_name and --task_index, TF_CONFIG,
// srun (--slurm_jobs) or mpirun (--mpi_jobs), as --cluster_resolver says
// (default auto). What a ps or worker task then does besides training (its
// server, the done signals that end the cluster) is the library's:
// client/training/cluster_task.h.
//
//   TG_RETURN_IF_ERROR(flags.Check());                 // with the other flag checks
//   TG_ASSIGN_OR_RETURN(TfConfig config, flags.Resolve());
//   if (config.task.job == "ps") return training::ServeUntilWorkersDone(config);
#ifndef TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_
#define TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/cluster_resolver.h"
#include "distributed/cluster_spec.h"

namespace tensorgrid {

// The classic program's cluster flags; the program binds them to its Flags
// (BindTaskFlags does it for every resolver's flag).
struct TaskFlags {
  ClusterResolverOptions resolver;

  // Which of them go together: InvalidArgument for --job_name or
  // --task_index without a cluster flag, and for no source at all
  // (NewClusterResolver's choice).
  absl::Status Check() const;
  // The cluster and this task, said once on stderr. InvalidArgument for a
  // cluster without a ps or a worker job, and for a task in neither.
  absl::StatusOr<TfConfig> Resolve() const;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_
