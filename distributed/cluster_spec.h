// ClusterSpec: the jobs of a cluster and the "host:port" address of each of
// their tasks, plus TF_CONFIG, TensorFlow's JSON description of a cluster and
// of the task this process plays in it.
//
// Three ways to describe a cluster, all validated the same way:
//
//   TG_ASSIGN_OR_RETURN(ClusterSpec a, ClusterSpec::FromFlag(
//       "ps=localhost:2222;worker=localhost:2223,localhost:2224"));
//   TG_ASSIGN_OR_RETURN(ClusterSpec b, ClusterSpec::FromHostsFlags(
//       "localhost:2222", "localhost:2223,localhost:2224"));   // --ps_hosts --worker_hosts
//   TG_ASSIGN_OR_RETURN(TfConfig c, TfConfig::FromEnvironment());  // TF_CONFIG
//   a.TaskAddress("worker", 1);  // "localhost:2224"
//
// Rules: a job name is a letter followed by letters, digits or '_'; every job
// has at least one task; an address is host:port with a port in 0..65535
// (0, "pick a free port", only with ClusterSpecOptions::allow_port_zero); no
// address appears twice in the cluster (port 0 aside); job "chief" has at
// most one task. Errors are InvalidArgument quoting the offending part.
//
// A ClusterSpec is an immutable value; copies are cheap enough for start-up
// code and it is safe to share between threads.
#ifndef TENSORGRID_DISTRIBUTED_CLUSTER_SPEC_H_
#define TENSORGRID_DISTRIBUTED_CLUSTER_SPEC_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {

struct ClusterSpecOptions {
  // Accept port 0 ("bind any free port"); servers report the real port once
  // they listen. Several tasks may then share "localhost:0".
  bool allow_port_zero = false;
};

class ClusterSpec {
 public:
  using JobMap = std::map<std::string, std::vector<std::string>>;

  // One task of the cluster: "/job:ps/replica:0/task:0" and its address.
  struct Task {
    std::string name;
    std::string address;
  };

  // The empty cluster (no jobs); the factories never return one.
  ClusterSpec() = default;

  // job name -> task addresses, task i at index i.
  static absl::StatusOr<ClusterSpec> FromMap(const JobMap& jobs,
                                             const ClusterSpecOptions& options = {});
  // "ps=localhost:2222;worker=localhost:2223,localhost:2224": jobs separated
  // by ';', tasks by ','; whitespace around any part is ignored, and so are
  // empty jobs (";;", a trailing ';'). A job named twice is an error.
  static absl::StatusOr<ClusterSpec> FromFlag(absl::string_view flag,
                                              const ClusterSpecOptions& options = {});
  // TensorFlow's --ps_hosts=a,b --worker_hosts=c,d. `ps_hosts` may be empty
  // (no ps job); `worker_hosts` may not.
  static absl::StatusOr<ClusterSpec> FromHostsFlags(absl::string_view ps_hosts,
                                                    absl::string_view worker_hosts,
                                                    const ClusterSpecOptions& options = {});

  // Job names, sorted.
  std::vector<std::string> jobs() const;
  bool HasJob(absl::string_view job) const;
  // 0 for a job that is not in the cluster.
  int num_tasks(absl::string_view job) const;
  // NotFound naming the job or index and what the cluster has instead.
  absl::StatusOr<std::string> TaskAddress(absl::string_view job, int index) const;
  // Every task, by job name then index.
  std::vector<Task> AllTasks() const;
  const JobMap& job_map() const { return jobs_; }
  bool empty() const { return jobs_.empty(); }

  // The FromFlag syntax: FromFlag(spec.ToString()) == spec.
  std::string ToString() const;
  // {"ps":["localhost:2222"],"worker":["localhost:2223","localhost:2224"]}
  std::string ToJson() const;

  friend bool operator==(const ClusterSpec& a, const ClusterSpec& b) { return a.jobs_ == b.jobs_; }
  friend bool operator!=(const ClusterSpec& a, const ClusterSpec& b) { return !(a == b); }

 private:
  explicit ClusterSpec(JobMap jobs) : jobs_(std::move(jobs)) {}

  JobMap jobs_;
};

// "/job:<job>/replica:0/task:<index>", the name of one task.
std::string TaskName(absl::string_view job, int index);

// Which task of the cluster this process is.
struct TaskId {
  std::string job;
  int index = 0;

  // "/job:worker/replica:0/task:1"
  std::string name() const { return TaskName(job, index); }
  friend bool operator==(const TaskId& a, const TaskId& b) {
    return a.job == b.job && a.index == b.index;
  }
  friend bool operator!=(const TaskId& a, const TaskId& b) { return !(a == b); }
};

// TensorFlow's TF_CONFIG:
//   {"cluster": {"chief": [...], "worker": [...], "ps": [...], "evaluator": [...]},
//    "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"}
// "cluster" and "task" are required, "rpc_layer" is optional ("grpc", the
// only layer served; others are InvalidArgument) and other keys (such as
// "environment") are ignored. As in TensorFlow, an "evaluator" task
// need not be listed in the cluster: it runs outside it. At most one
// evaluator and one chief. Kubeflow's TFJob names the chief "master" and
// adds "environment": "cloud"; "master" is kept as the job's name (device
// names say /job:master) and counts as the chief: a cluster has at most one
// master, and not both a chief and a master.
struct TfConfig {
  ClusterSpec cluster;
  TaskId task;
  std::string rpc_layer;

  // InvalidArgument for JSON that does not parse (with the parser's message),
  // a value of the wrong JSON type, or a cluster or task that breaks the
  // rules above, each quoting the offending part.
  static absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view json,
                                                const ClusterSpecOptions& options = {});
  // Only the cluster of a TF_CONFIG, checked the same way; its "task" is not
  // needed or looked at (`*has_task` says whether it has one): for a tool
  // that starts every task of the cluster.
  static absl::StatusOr<ClusterSpec> ClusterOf(absl::string_view json,
                                               const ClusterSpecOptions& options = {},
                                               bool* has_task = nullptr);
  // Parses the TF_CONFIG environment variable; NotFound if it is unset or empty.
  static absl::StatusOr<TfConfig> FromEnvironment(const ClusterSpecOptions& options = {});

  // ParseTfConfig(config.ToJson()) == config.
  std::string ToJson() const;

  friend bool operator==(const TfConfig& a, const TfConfig& b) {
    return a.cluster == b.cluster && a.task == b.task && a.rpc_layer == b.rpc_layer;
  }
  friend bool operator!=(const TfConfig& a, const TfConfig& b) { return !(a == b); }
};

// TensorFlow's rule: the chief task if the cluster has a chief (or master)
// job, otherwise worker 0. An evaluator is its own chief (it runs alone, outside the
// training cluster).
bool IsChief(const TfConfig& config);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_CLUSTER_SPEC_H_
