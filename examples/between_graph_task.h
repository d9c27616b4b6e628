// The classic between-graph programs' cluster flags: which task this is
// (--ps_hosts/--worker_hosts or --cluster, --job_name and --task_index, or
// else TF_CONFIG). What a ps or worker task then does besides training (its
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
#include "distributed/cluster_spec.h"

namespace tensorgrid {

// The classic program's cluster flags; the program binds them to its Flags.
struct TaskFlags {
  std::string ps_hosts, worker_hosts;  // "H:P,...", together
  std::string cluster;                 // or "ps=H:P,...;worker=H:P,..."
  std::string job_name;                // "ps" or "worker"; empty: TF_CONFIG
  int task_index = 0;                  // the program checks that it is not negative

  // Which of them go together: InvalidArgument for --cluster and the hosts
  // flags both, either without --job_name or --job_name without them, and
  // none of them without TF_CONFIG in the environment.
  absl::Status Check() const;
  // The cluster and this task, from the flags or else TF_CONFIG.
  // InvalidArgument for a cluster without a ps or a worker job, and for a
  // task in neither.
  absl::StatusOr<TfConfig> Resolve() const;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_EXAMPLES_BETWEEN_GRAPH_TASK_H_
