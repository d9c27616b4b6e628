// ClusterResolver: where a task learns its cluster and which task of it it
// is, from whatever started it. One interface, four sources (TensorFlow has
// the same idea: tf.distribute.cluster_resolver):
//
//   flags      --cluster (or --ps_hosts/--worker_hosts) with --job_name, --task_index
//   tf_config  TF_CONFIG, as TensorFlow's launchers and Kubeflow's TFJob write it
//   slurm      srun's SLURM_* variables (slurm_cluster_resolver.h)
//   mpi        mpirun's rank variables plus hosts from --cluster or a hostfile
//              (mpi_cluster_resolver.h)
//
//   ClusterResolverOptions options;           // bound to the program's flags
//   options.resolver = "auto";
//   TG_ASSIGN_OR_RETURN(ResolvedTask task,
//                       ResolveCluster(options, Environment::Process()));
//   std::cerr << task.ToString() << "\n";     // once, at start-up
//   task.ApplyCudaVisibleDevices();           // before any CUDA call
//   ... Server::Create(task.config.cluster, task.config.task.job, ...)
//
// "auto" takes the first source present: flags (any of --cluster,
// --ps_hosts, --worker_hosts, --job_name; but a --cluster with no --job_name
// under mpirun is MPI's host list), then TF_CONFIG, then Slurm (SLURM_PROCID
// set), then MPI (OMPI_COMM_WORLD_RANK or PMIX_RANK set). Errors name the
// flag or variable that is wrong: InvalidArgument for what does not parse
// or does not add up, FailedPrecondition for a launch whose layout is not
// the one assumed (a cyclic Slurm distribution, say).
//
// Resolvers read the environment through an Environment, so tests feed
// them any launcher's variables; they have no side effects.
#ifndef TENSORGRID_DISTRIBUTED_CLUSTER_RESOLVER_H_
#define TENSORGRID_DISTRIBUTED_CLUSTER_RESOLVER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/cluster_spec.h"

namespace tensorgrid {

// Environment variables: the process's, or a fixed map (tests).
class Environment {
 public:
  static Environment Process();
  static Environment FromMap(std::map<std::string, std::string> variables);

  // nullopt when the variable is unset.
  std::optional<std::string> Get(const std::string& name) const;
  // Set and not empty.
  bool Has(const std::string& name) const;

 private:
  bool process_ = false;
  std::map<std::string, std::string> variables_;
};

// Everything the resolvers read besides the environment. Programs bind
// these to their flags of the same names.
struct ClusterResolverOptions {
  std::string resolver = "auto";  // --cluster_resolver=auto|flags|tf_config|slurm|mpi
  // flags (and mpi: --cluster is its host list)
  std::string cluster;                 // --cluster
  std::string ps_hosts, worker_hosts;  // --ps_hosts, --worker_hosts
  std::string job_name;                // --job_name
  int task_index = -1;                 // --task_index; -1: not given (0)
  // slurm and mpi: jobs in rank order, "ps:1,worker:4"; empty: every task a worker.
  std::string slurm_jobs;  // --slurm_jobs
  std::string mpi_jobs;    // --mpi_jobs
  int port_base = 2222;    // --port_base: a node's k-th task listens on port_base + k
  int gpus_per_task = 0;   // --gpus_per_task (slurm): CUDA_VISIBLE_DEVICES per local task
  std::string hostfile;    // --hostfile (mpi): OpenMPI's "host slots=N" lines
  // Port 0 and the like; passed to every ClusterSpec made.
  ClusterSpecOptions spec_options;
};

// A resolver's answer.
struct ResolvedTask {
  TfConfig config;       // the cluster and this task
  std::string resolver;  // "flags", "tf_config", "slurm", "mpi"
  // What the resolver read this from, for the start-up line:
  // "SLURM_PROCID=3 of SLURM_STEP_NODELIST=n[1-2] ...".
  std::string source;
  // Non-empty: the CUDA_VISIBLE_DEVICES this task should have
  // (Slurm with --gpus_per_task).
  std::string cuda_visible_devices;

  // "cluster resolver slurm (SLURM_PROCID=1 ...): this task is
  //  /job:worker/replica:0/task:0 at n1:2223; cluster ps=n1:2222;worker=..."
  std::string ToString() const;
  // Sets CUDA_VISIBLE_DEVICES to cuda_visible_devices unless the process
  // already has it; returns a line saying which (empty when there was none
  // to set). Call before any CUDA call.
  std::string ApplyCudaVisibleDevices() const;
};

class ClusterResolver {
 public:
  virtual ~ClusterResolver() = default;
  // "flags", "tf_config", "slurm", "mpi".
  virtual std::string name() const = 0;
  // Whether its source is there at all (what "auto" asks).
  virtual bool Present() const = 0;
  // The cluster and this task.
  virtual absl::StatusOr<ResolvedTask> Resolve() const = 0;
};

// --cluster or --ps_hosts/--worker_hosts, with --job_name and --task_index.
class FlagsClusterResolver final : public ClusterResolver {
 public:
  explicit FlagsClusterResolver(ClusterResolverOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "flags"; }
  bool Present() const override;
  absl::StatusOr<ResolvedTask> Resolve() const override;

 private:
  const ClusterResolverOptions options_;
};

// A resolver that reads the environment (TF_CONFIG, Slurm's, MPI's variables).
class EnvironmentClusterResolver : public ClusterResolver {
 public:
  EnvironmentClusterResolver(ClusterResolverOptions options, Environment env)
      : options_(std::move(options)), env_(std::move(env)) {}

 protected:
  const ClusterResolverOptions options_;
  const Environment env_;
};

// TF_CONFIG (TfConfig::ParseTfConfig), Kubeflow's TFJob's included.
class TfConfigClusterResolver final : public EnvironmentClusterResolver {
 public:
  using EnvironmentClusterResolver::EnvironmentClusterResolver;
  std::string name() const override { return "tf_config"; }
  bool Present() const override { return env_.Has("TF_CONFIG"); }
  absl::StatusOr<ResolvedTask> Resolve() const override;
};

// The resolver options.resolver names, or for "auto" the first present.
// InvalidArgument for an unknown name, for flags that belong to another
// resolver (--job_name with --cluster_resolver=slurm), and, for "auto",
// when no source is present.
absl::StatusOr<std::unique_ptr<ClusterResolver>> NewClusterResolver(
    const ClusterResolverOptions& options, const Environment& env);

// NewClusterResolver, then Resolve.
absl::StatusOr<ResolvedTask> ResolveCluster(const ClusterResolverOptions& options,
                                            const Environment& env);

// Shared by the Slurm and MPI resolvers.
namespace cluster_resolver_internal {

// "ps:1,worker:4" -> {{"ps", 1}, {"worker", 4}}, in order. InvalidArgument
// naming `flag` for an item that is not JOB:COUNT with a positive count, a
// job name the cluster rules refuse, or a job given twice.
absl::StatusOr<std::vector<std::pair<std::string, int>>> ParseJobCounts(absl::string_view flag,
                                                                        absl::string_view value);

// Ranks 0..addresses.size()-1 in order onto `jobs` (empty: all workers):
// the cluster, and rank `rank`'s task. InvalidArgument naming `flag` when
// the counts do not add up to the number of addresses.
absl::StatusOr<TfConfig> AssignRanks(absl::string_view flag, absl::string_view jobs,
                                     const std::vector<std::string>& addresses, int rank,
                                     const ClusterSpecOptions& spec_options);

// A variable that must hold a non-negative integer: InvalidArgument naming
// it when unset or not one.
absl::StatusOr<int> GetIndexVariable(const Environment& env, const std::string& name);

}  // namespace cluster_resolver_internal
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_CLUSTER_RESOLVER_H_
