// MultiWorkerMirroredStrategy: synchronous data parallelism across the
// worker tasks of a cluster described by TF_CONFIG (TensorFlow's
// tf.distribute.MultiWorkerMirroredStrategy). Every worker runs the same
// program; each builds its own replicas (one per local GPU, or one CPU
// where the worker has no GPU: Options::local_devices) and starts its own
// task's server. Variables are mirrored on every replica
// of every worker: their initial values are broadcast from the chief's first
// replica, and each step's gradients are all-reduced (mean) across all
// replicas with CollectiveReduce over the worker service, so every worker's
// variables stay identical.
//
//   // TF_CONFIG='{"cluster": {"worker": ["localhost:20000", "localhost:20001"]},
//   //             "task": {"type": "worker", "index": 0}}'
//   TG_ASSIGN_OR_RETURN(auto strategy, distribute::MultiWorkerMirroredStrategy::Create());
//   Scope root = Scope::NewRootScope();
//   ... build as with any strategy (strategy.h) ...
//   SessionOptions options;
//   options.target = strategy->target();            // this worker's own server
//   options.config = strategy->session_config();
//
// Workers are the "chief" task (if any) followed by the "worker" tasks;
// other jobs ("ps", "evaluator") take no part. The first collective waits
// for every worker to join, at most `collective_timeout_seconds`, then fails
// with DeadlineExceeded naming the workers that never joined: start the
// workers within that time of one another. Every step that runs a
// collective (training steps, Reduce, the initializer) must be run by every
// worker, the same number of times, in the same order.
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_MIRRORED_STRATEGY_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_MIRRORED_STRATEGY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/distribute/strategy.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"

namespace tensorgrid {
namespace distribute {

class MultiWorkerMirroredStrategy : public MirroredStrategy {
 public:
  struct Options {
    // The cluster and this task; unset: the TF_CONFIG environment variable.
    std::optional<TfConfig> tf_config;
    // Replicas on each worker: on its GPUs (GPU:0 .. GPU:n-1) when this
    // worker has any, else on its CPUs. 0: one per GPU, or one CPU. Every
    // worker must have the same devices (as in TensorFlow).
    int local_devices = 0;
    MirroredStrategy::Options mirrored;
    // The server of this task (bind host, security, ...).
    ServerOptions server;
    // What configures the server's devices, as tf.distribute.Server's
    // config: intra_op_parallelism_threads (threads per kernel: 0, one per
    // core; set it when several workers share a machine), gpu_options, ...
    // The strategy sets device_count and collective_group_leader over it.
    // A session's own config cannot change a server's devices once they
    // exist (as in TensorFlow).
    ConfigProto config;
  };

  // Parses the cluster, checks this task is a worker (or the chief), and
  // starts its server. InvalidArgument for a cluster without workers or a
  // task of another job, or more local_devices than this worker has GPUs;
  // NotFound when TF_CONFIG is unset; the server's error when it cannot
  // bind.
  static absl::StatusOr<std::unique_ptr<MultiWorkerMirroredStrategy>> Create(
      const Options& options);
  static absl::StatusOr<std::unique_ptr<MultiWorkerMirroredStrategy>> Create();
  ~MultiWorkerMirroredStrategy() override;

  // "grpc://host:port" of this task's server: open sessions here.
  std::string target() const { return server_->target(); }
  // Only this task's devices (the others are reached by collectives).
  ConfigProto session_config() const override;
  int worker_index() const { return worker_index_; }
  int num_workers() const { return num_workers_; }
  bool is_chief() const { return worker_index_ == 0; }
  Server* server() const { return server_.get(); }

 protected:
  // Broadcast from the chief's first replica.
  Output InitialValue(const Scope& scope, int local_replica, const Output& primary,
                      const TensorShape& shape, DataType dtype) override;

 private:
  MultiWorkerMirroredStrategy(std::vector<std::string> devices, int num_workers, int worker_index,
                              const Options& options, std::unique_ptr<Server> server);

  const int num_workers_;
  const int worker_index_;
  std::unique_ptr<Server> server_;
  int bcast_instance_ = 0;
};

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_MULTI_WORKER_MIRRORED_STRATEGY_H_
