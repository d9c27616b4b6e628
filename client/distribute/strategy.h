// Distribution strategies: TensorFlow's tf.distribute for the C++ client.
// Pick a strategy, build the model in its scope, train; switching strategy
// does not change the model code.
//
//   distribute::MirroredStrategy strategy({"/device:CPU:0", "/device:CPU:1"});
//   Scope root = Scope::NewRootScope();
//   Scope scope = strategy.scope(root);          // variables built here are distributed
//   training::Variable w(scope, "w", {2, 1}, DT_FLOAT, training::Zeros());
//   training::AdagradOptimizer adagrad(0.05);
//   TG_ASSIGN_OR_RETURN(auto data, strategy.ExperimentalDistributeDataset(
//                                      scope, Dataset::FromTensorSlices({x, y}).Batch(2)));
//   TG_ASSIGN_OR_RETURN(auto step, strategy.Run(scope, [&](distribute::ReplicaContext& ctx)
//                                      -> absl::StatusOr<std::vector<Output>> {
//     Output pred = ops::MatMul(ctx.scope(), ctx.inputs()[0], w);   // this replica's copy of w
//     Output loss = ops::Mean(ctx.scope(), ops::Square(ctx.scope(), ops::Sub(ctx.scope(), pred,
//     ctx.inputs()[1])), {0, 1}); TG_RETURN_IF_ERROR(ctx.Minimize(&adagrad, loss)); return
//     std::vector<Output>{loss};
//   }, data.inputs()));
//   Output loss = strategy.Reduce(scope, distribute::ReduceOp::kMean, step.outputs[0]);
//   Operation init = training::GlobalVariablesInitializer(root);
//   // a Session with strategy.session_config(); run init, then:
//   distribute::FitOptions fit;
//   fit.epochs = 100;
//   TG_RETURN_IF_ERROR(distribute::Fit(session.get(), data, step.train_op, loss, fit).status());
//
// The pieces, as in TensorFlow:
//   - scope(root): training::Variable built through it (or scopes derived
//     from it) is placed and, for mirrored strategies, mirrored by the
//     strategy. Variables built elsewhere are plain.
//   - Run(scope, step_fn, inputs) calls step_fn once per replica this
//     program builds, with a ReplicaContext: the replica's scope (its device,
//     names under "replica_<i>/" for i > 0), its inputs, and Minimize /
//     ApplyGradients, which the strategy completes once every replica has
//     run: gradients are reduced across replicas (the mean, so N replicas
//     with a global batch B compute what one replica with batch B does) and
//     applied. Inside step_fn, a mirrored variable stands for its replica's
//     copy. Run returns each output per replica and the one train op.
//   - Reduce(scope, SUM|MEAN, per_replica[, axis]) combines a per-replica value into
//     one tensor (across every replica in sync, in every process).
//   - ExperimentalDistributeDataset: a dataset of global batches is split
//     evenly across the replicas in sync (replica i gets rows
//     [i*B/N, (i+1)*B/N)); a batch that does not split evenly is
//     InvalidArgument at the step that meets it.
//   - Fit: the common loop, one progress line per epoch.
//
// The strategies:
//   OneDeviceStrategy       one replica, everything on one device
//   MirroredStrategy        one replica per local device; variables mirrored on
//                           each, gradients all-reduced with collective ops
//   CentralStorageStrategy  variables on one device (the CPU), compute
//                           replicated on local devices, gradients averaged there
//   MultiWorkerMirroredStrategy  (multi_worker_mirrored_strategy.h) mirrored
//                           across the worker tasks of a TF_CONFIG cluster
//   ParameterServerStrategy (parameter_server_strategy.h) variables on ps
//                           tasks, one replica per worker task, one client
//
// Errors are returned or recorded on the scope, as everywhere in the
// client. Thread safety: build from one thread, like a Scope.
#ifndef TENSORGRID_CLIENT_DISTRIBUTE_STRATEGY_H_
#define TENSORGRID_CLIENT_DISTRIBUTE_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/data/dataset.h"
#include "client/output.h"
#include "client/scope.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/public/session.h"
#include "proto/config.pb.h"

namespace tensorgrid {
namespace distribute {

enum class ReduceOp { kSum, kMean };

// One value per replica this program builds, in replica order.
struct PerReplica {
  std::vector<Output> values;
};

class Strategy;

// What a step function sees, once per replica.
class ReplicaContext {
 public:
  // Among all replicas in sync (across processes for multi-worker strategies).
  int replica_id_in_sync_group() const { return replica_id_; }
  int num_replicas_in_sync() const;
  // Build this replica's ops here: its device, its name scope.
  const Scope& scope() const { return scope_; }
  // This replica's value of each input given to Run.
  const std::vector<Output>& inputs() const { return inputs_; }

  // Gradients of `loss` (this replica's) for `var_list` (default: every
  // trainable variable made in the strategy's scope); the strategy reduces
  // them across replicas and applies them with `optimizer` once every
  // replica has run, adding one to `global_step` if given. Each replica
  // must make the same calls in the same order.
  absl::Status Minimize(training::Optimizer* optimizer, const Output& loss,
                        const std::vector<training::Variable>& var_list = {},
                        const std::optional<training::Variable>& global_step = std::nullopt);
  // The same with gradients computed by the caller (for the variables as
  // given: mirrored ones stand for this replica's copy).
  absl::Status ApplyGradients(training::Optimizer* optimizer,
                              const std::vector<training::GradAndVar>& grads_and_vars,
                              const std::optional<training::Variable>& global_step = std::nullopt);
  // The sum or mean of `value` over every replica in sync, on this replica
  // (TensorFlow's ReplicaContext.all_reduce), by CollectiveReduce: every
  // replica must make the same AllReduce calls in the same order.
  Output AllReduce(ReduceOp op, const Output& value);

 private:
  friend class Strategy;
  ReplicaContext(Strategy* strategy, int local_index, int replica_id, Scope scope,
                 std::vector<Output> inputs)
      : strategy_(strategy),
        local_index_(local_index),
        replica_id_(replica_id),
        scope_(std::move(scope)),
        inputs_(std::move(inputs)) {}

  Strategy* strategy_;
  int local_index_;
  int replica_id_;
  Scope scope_;
  std::vector<Output> inputs_;
};

using StepFn = std::function<absl::StatusOr<std::vector<Output>>(ReplicaContext& ctx)>;

// What Run built.
struct DistributedStep {
  // outputs[k].values[r]: step_fn's k-th output on replica r.
  std::vector<PerReplica> outputs;
  // Every update the replicas asked for (invalid if none did).
  Operation train_op;
};

// A dataset of global batches, split across the replicas; see
// Strategy::ExperimentalDistributeDataset.
class DistributedDataset {
 public:
  // inputs()[c].values[r]: the placeholder of component c on replica r.
  const std::vector<PerReplica>& inputs() const { return inputs_; }
  // One pass over the dataset: each global batch becomes the feeds of every
  // replica's placeholders.
  class Iterator {
   public:
    // The next batch's feeds, or *end = true. InvalidArgument when a batch
    // does not split evenly across the replicas.
    absl::Status GetNextFeeds(FeedList* feeds, bool* end);
    // Rows in the last global batch.
    int64_t last_batch_size() const { return last_batch_size_; }

   private:
    friend class DistributedDataset;
    Iterator(const DistributedDataset* owner, std::unique_ptr<DatasetIterator> it)
        : owner_(owner), it_(std::move(it)) {}
    const DistributedDataset* owner_;
    std::unique_ptr<DatasetIterator> it_;
    int64_t last_batch_size_ = 0;
  };
  absl::StatusOr<std::unique_ptr<Iterator>> MakeIterator() const;
  // Global batches in one pass (Dataset::Cardinality).
  int64_t cardinality() const { return dataset_.Cardinality(); }

 private:
  friend class Strategy;
  Dataset dataset_;
  std::vector<PerReplica> inputs_;
  std::vector<std::vector<std::string>> feed_names_;  // [component][local replica]
  int num_replicas_in_sync_ = 1;
  int first_replica_ = 0;
};

class Strategy {
 public:
  virtual ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  // Replicas that train in lockstep, in every process.
  int num_replicas_in_sync() const { return num_replicas_in_sync_; }
  // The devices of the replicas this program builds, in replica order.
  const std::vector<std::string>& replica_devices() const { return devices_; }
  // The global id of this program's first replica (non-zero only for
  // multi-worker strategies).
  int first_replica_id() const { return first_replica_; }

  // `root` with the strategy's variable creator (see the top of this file).
  Scope scope(const Scope& root) const;

  // Calls step_fn for each replica; inputs[k].values[r] is replica r's k-th
  // input (each PerReplica needs one value per local replica). The replicas'
  // Minimize/ApplyGradients calls are completed here.
  absl::StatusOr<DistributedStep> Run(const Scope& scope, const StepFn& step_fn,
                                      const std::vector<PerReplica>& inputs = {});

  // The sum or mean over every replica in sync of `value` (one per local
  // replica, same dtype and shape). Built on the first replica's device.
  virtual Output Reduce(const Scope& scope, ReduceOp op, const PerReplica& value);
  // TensorFlow's reduce(op, value, axis): each replica's value is first
  // summed along `axis` (negative counts from the end), then combined across
  // replicas; kMean divides by the number of elements along `axis` on every
  // replica together (so replicas may hold different numbers of examples).
  // An axis out of range fails when the result is computed.
  Output Reduce(const Scope& scope, ReduceOp op, const PerReplica& value, int axis);

  // Placeholders on each replica for the components of `dataset`, whose
  // elements must be global batches (dimension 0 = the batch). Looks at the
  // first element for dtypes and shapes: InvalidArgument for an empty or
  // failed dataset, or a first batch that does not split evenly.
  absl::StatusOr<DistributedDataset> ExperimentalDistributeDataset(const Scope& scope,
                                                                   const Dataset& dataset);

  // One op that copies the primary of every mirrored variable made in this
  // strategy's scope into its other copies. A Saver sees only the primaries
  // (a mirrored variable converts to its primary): run this after restoring
  // a checkpoint, so every replica starts from the restored values.
  Operation CopyPrimaryToReplicas(const Scope& scope) const;

  // What a session running this strategy's graphs needs (device counts,
  // collective settings, soft placement when a replica is on a GPU); the
  // base of any config you pass.
  virtual ConfigProto session_config() const;

  // For strategy implementations and ReplicaContext.
  struct PendingUpdate {
    training::Optimizer* optimizer = nullptr;
    std::optional<training::Variable> global_step;
    // [local replica] -> this replica's (gradient, component) pairs, in the
    // order of `vars`.
    std::vector<std::vector<training::GradAndVar>> grads;
    std::vector<training::Variable> vars;  // as created in the scope (mirrored or plain)
  };

 protected:
  // One replica on each of `devices`, in each of `num_workers` programs
  // (multi-worker strategies; this one is `worker_index`).
  explicit Strategy(std::vector<std::string> devices, int num_workers = 1, int worker_index = 0);

  // Builds variable `name` the strategy's way (the VariableCreator hook).
  virtual training::Variable CreateVariable(const Scope& scope, const std::string& name,
                                            const TensorShape& shape, DataType dtype,
                                            const training::Initializer& initializer,
                                            const training::VariableOptions& options) = 0;
  // Reduces an update's gradients across replicas and applies them; the op
  // that does it all. `scope` has no variable creator.
  virtual absl::StatusOr<Operation> Apply(const Scope& scope, const PendingUpdate& update) = 0;

  // Helpers for the strategies.
  // One plain variable on `device`.
  static training::Variable PlainVariable(const Scope& scope, const std::string& device,
                                          const std::string& name, const TensorShape& shape,
                                          DataType dtype, const training::Initializer& initializer,
                                          const training::VariableOptions& options);
  // The mean over local replicas of each variable's gradient, colocated with
  // the (plain) variable, then one ApplyGradients.
  absl::StatusOr<Operation> ApplyMeanOfLocalGradients(const Scope& scope,
                                                      const PendingUpdate& update);
  // The trainable variables made in this strategy's scope so far.
  const std::vector<training::Variable>& trainable_variables() const { return trainable_; }
  // The device that reductions and shared values use: the first replica's.
  const std::string& host_device() const { return devices_.front(); }

  // Collectives among the replicas in sync: one group (by default this
  // program's replica devices), instance keys handed out in build order.
  int NextInstanceKey() { return next_instance_key_++; }
  int group_key() const { return group_key_; }
  // Sets the group key from the names of every member device (all processes').
  void SetGroup(const std::vector<std::string>& member_devices);
  // How long a collective waits for its peers.
  virtual float collective_timeout_seconds() const { return 60; }

 private:
  friend class ReplicaContext;
  class Creator;
  absl::Status AddUpdate(int local_index, training::Optimizer* optimizer,
                         std::vector<training::GradAndVar> grads,
                         std::vector<training::Variable> vars,
                         const std::optional<training::Variable>& global_step);

  std::vector<std::string> devices_;
  int num_replicas_in_sync_;
  int first_replica_;
  std::shared_ptr<const Creator> creator_;
  std::vector<training::Variable> trainable_;
  // Updates asked for during the current Run, in call order.
  std::vector<PendingUpdate> pending_;
  std::vector<int> calls_;  // per local replica: updates asked for so far in this Run
  bool in_run_ = false;     // step functions are running: no new variables
  int group_key_ = 1;
  int next_instance_key_ = 1;
  // ReplicaContext::AllReduce: the instance key of each call, made by replica 0.
  std::vector<int> all_reduce_keys_;
  std::vector<int> all_reduce_calls_;  // per local replica, in this Run
};

// One replica on one device ("/device:CPU:0", "/job:worker/task:1/device:CPU:0").
class OneDeviceStrategy : public Strategy {
 public:
  explicit OneDeviceStrategy(const std::string& device);

 protected:
  training::Variable CreateVariable(const Scope& scope, const std::string& name,
                                    const TensorShape& shape, DataType dtype,
                                    const training::Initializer& initializer,
                                    const training::VariableOptions& options) override;
  absl::StatusOr<Operation> Apply(const Scope& scope, const PendingUpdate& update) override;
};

// One replica per device of this process; trainable variables mirrored on
// each device; gradients all-reduced (mean) with CollectiveReduce in buckets
// (Options::bytes_per_pack), each started as soon as its gradients exist. Non-trainable variables
// (the global step) live on the first device only, unless made with
// VariableSynchronization::kOnWrite (batch norm's moving statistics).
class MirroredStrategy : public Strategy {
 public:
  struct Options {
    // Gradient buckets (TensorFlow's CommunicationOptions.bytes_per_pack,
    // PyTorch DDP's bucket_cap_mb): taken from the last variable to the
    // first (the order backprop computes them), gradients of one dtype are
    // packed into one all-reduce up to this many bytes; a gradient at least
    // this big is all-reduced alone; 0: every gradient alone. Each bucket's
    // all-reduce starts as soon as its gradients exist, during backprop.
    int64_t bytes_per_pack = 256 * 1024;
    // How long a collective waits for its peers.
    float collective_timeout_seconds = 60;
  };
  // `devices`: empty means every local GPU ("/device:GPU:0", ...), as in
  // TensorFlow, or where there is none the CPUs of ConfigProto
  // device_count {"CPU": 2} ("/device:CPU:0", "/device:CPU:1").
  explicit MirroredStrategy(std::vector<std::string> devices = {});
  MirroredStrategy(std::vector<std::string> devices, const Options& options);

  ConfigProto session_config() const override;
  // With CollectiveReduce across the group (every process's replicas).
  using Strategy::Reduce;  // the axis form
  Output Reduce(const Scope& scope, ReduceOp op, const PerReplica& value) override;

 protected:
  // For MultiWorkerMirroredStrategy: the local devices, in each of
  // `num_workers` programs, this one `worker_index`.
  MirroredStrategy(std::vector<std::string> devices, int num_workers, int worker_index,
                   const Options& options);
  training::Variable CreateVariable(const Scope& scope, const std::string& name,
                                    const TensorShape& shape, DataType dtype,
                                    const training::Initializer& initializer,
                                    const training::VariableOptions& options) override;
  absl::StatusOr<Operation> Apply(const Scope& scope, const PendingUpdate& update) override;

  // All-reduces tensors[r][k] (of shapes[k]) across the group: out[r][k] on
  // replica r's device, in buckets of Options::bytes_per_pack.
  std::vector<std::vector<Output>> AllReduce(const Scope& scope,
                                             const std::vector<std::vector<Output>>& tensors,
                                             const std::vector<TensorShape>& shapes, ReduceOp op);
  // The initial value of local component `local_replica` of a mirrored
  // variable, built in `scope` (the component's device); `primary` is
  // component 0's initial value. By default component 0 takes it and the
  // others copy it, so all start equal even with random initializers.
  virtual Output InitialValue(const Scope& scope, int local_replica, const Output& primary,
                              const TensorShape& shape, DataType dtype);
  const Options& options() const { return options_; }
  float collective_timeout_seconds() const override { return options_.collective_timeout_seconds; }

 private:
  Options options_;
};

// Variables on one device (default "/device:CPU:0"), compute replicated on
// `compute_devices` (default: every local GPU, or CPU:0 and CPU:1 where
// there is none); gradients averaged on the variables' device and applied
// once.
class CentralStorageStrategy : public Strategy {
 public:
  explicit CentralStorageStrategy(std::vector<std::string> compute_devices = {},
                                  std::string parameter_device = "/device:CPU:0");
  ConfigProto session_config() const override;

 protected:
  training::Variable CreateVariable(const Scope& scope, const std::string& name,
                                    const TensorShape& shape, DataType dtype,
                                    const training::Initializer& initializer,
                                    const training::VariableOptions& options) override;
  absl::StatusOr<Operation> Apply(const Scope& scope, const PendingUpdate& update) override;

 private:
  std::string parameter_device_;
};

// The common training loop.
struct FitOptions {
  int epochs = 1;
  // Stop an epoch after this many steps (-1: at the end of the dataset).
  int64_t steps_per_epoch = -1;
  // Where the per-epoch progress line goes (null: nowhere).
  std::ostream* log = &std::cout;
  // Keras's verbose=1: also a progress bar, redrawn in place ('\r') at most
  // twice a second, "  120/937 [===>..........] - 12s - loss: 0.4512".
  bool progress_bar = false;
};
struct FitHistory {
  std::vector<double> loss;  // per epoch: the mean of the fetched loss
  int64_t steps = 0;
};
// Per epoch: iterates `data` once, running `train_op` and fetching `loss`
// (a scalar, e.g. Strategy::Reduce(kMean) of the replicas' losses) each
// step; prints "epoch 3/10: 12 steps in 4.1 s, loss 0.0123, 3400 examples/s".
absl::StatusOr<FitHistory> Fit(Session* session, const DistributedDataset& data,
                               const Operation& train_op, const Output& loss,
                               const FitOptions& options = FitOptions());

}  // namespace distribute
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DISTRIBUTE_STRATEGY_H_
