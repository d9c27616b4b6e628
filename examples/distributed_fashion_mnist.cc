// Between-graph replication: TensorFlow's classic distributed MNIST program
// (784-500-500-10, ReLU, Adam 1e-4, batch 32) on Fashion-MNIST. Every task
// runs this binary; ps tasks serve the variables, each worker builds the
// same graph and trains through its own server, and worker 0 is the chief
// (initializes, checkpoints, evaluates). Asynchronous by default: each
// worker's step updates the variables on its own. With --is_sync a
// SyncReplicasOptimizer averages one gradient from every worker per global
// step; the chief applies it and the workers wait for that.
//
//   /job:ps/task:0                         /job:ps/task:1
//  +------------------------------+       +------------------------------+
//  | global_step dense/bias ...   |       | dense/kernel dense_1/kernel  |
//  | Adam slots, done_queue_0     |       | ... Adam slots, done_queue_1 |
//  +------------------------------+       +------------------------------+
//        ^ grads    | weights                   ^ grads    | weights
//  +-----+----------v-----------+         +-----+----------v-----------+
//  | /job:worker/task:0 (chief) |         | /job:worker/task:1         |
//  | forward, backward, its own |         | the same graph, its own    |
//  | shuffle of the 60,000      |         | shuffle; steps interleave  |
//  +----------------------------+         +----------------------------+
//  When a worker is done it enqueues a token into every done_queue_<k>;
//  ps task k dequeues one per worker, then stops its server and exits 0
//  (training::ServeUntilWorkersDone, client/training/cluster_task.h).
//
//   examples/run_distributed_fashion_mnist.sh --steps=6000     # 2 ps + 2 workers
//   distributed_fashion_mnist --ps_hosts=localhost:2222,localhost:2223
//       --worker_hosts=localhost:2224,localhost:2225 --job_name=worker --task_index=0   # one task
//
// The cluster comes from --ps_hosts/--worker_hosts, --cluster (tg_launch's
// syntax), TF_CONFIG, srun (--slurm_jobs=ps:1,worker:2) or mpirun
// (--mpi_jobs), as --cluster_resolver says (docs/multi_host.md). Workers print "worker W: step S
// (global step G), loss L" every --log_every of their own steps; the chief prints
// "test_accuracy=0.xxxx" last. With --logdir the chief writes TensorBoard's
// event files there (the graph; loss, batch accuracy and global_step/sec
// every --log_every global steps; docs/tensorboard.md). TG_AUTH_TOKEN_FILE (and the TG_TLS_* files)
// guard every task, the done signals included, as for tg_server.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client_session.h"
#include "client/data/fashion_mnist.h"
#include "client/training/cluster_task.h"
#include "client/training/device_setter.h"
#include "client/training/global_step.h"
#include "client/training/hooks.h"
#include "client/training/profiler_hook.h"
#include "client/training/monitored_session.h"
#include "client/training/optimizer.h"
#include "client/training/sync_replicas_optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/util/command_line_flags.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc_security.h"
#include "distributed/server.h"
#include "examples/between_graph_task.h"
#include "examples/fashion_mnist_model.h"

using namespace tensorgrid;  // NOLINT: an example

namespace {

struct Options {
  TaskFlags task;  // which task this is: --ps_hosts ... --task_index, TF_CONFIG, srun, mpirun
  int32_t task_index = 0;
  std::string bind;  // the server's --bind, as tg_server's
  std::string checkpoint_dir, logdir, trace_dir, data_dir = kFashionMnistDir;
  bool is_sync = false;
  int64_t replicas_to_aggregate = 0;  // 0: every worker
  int64_t sync_timeout_s = 300;
  int64_t steps = 6000, batch_size = 32, log_every = 100, save_every = 1000, seed = 1;
  double learning_rate = 1e-4;
};

// What Flags::Parse leaves to the program: positional arguments (none), the ranges,
// and which cluster flags go together.
absl::Status CheckFlags(Options& o, int argc, char** argv) {
  if (argc > 1) return errors::InvalidArgument("unexpected argument '", argv[1], "'");
  if (o.task_index < 0) {
    return errors::InvalidArgument("--task_index=", o.task_index, " is negative");
  }
  if (!o.task.resolver.job_name.empty()) o.task.resolver.task_index = o.task_index;
  if (o.replicas_to_aggregate < 0) {
    return errors::InvalidArgument("--replicas_to_aggregate=", o.replicas_to_aggregate,
                                   " is negative");
  }
  const std::pair<const char*, double> positive[] = {{"sync_timeout_s", o.sync_timeout_s},
                                                     {"steps", o.steps},
                                                     {"batch_size", o.batch_size},
                                                     {"learning_rate", o.learning_rate},
                                                     {"save_every", o.save_every},
                                                     {"log_every", o.log_every},
                                                     {"seed", o.seed}};
  for (const auto& [flag, value] : positive) {
    if (value <= 0) return errors::InvalidArgument("--", flag, "=", value, " is not positive");
  }
  return o.task.Check();
}

struct Model {
  fashion_mnist::Classifier net;  // images, labels -> loss, correct
  Operation train;
  training::Variable global_step;
  std::unique_ptr<training::AdamOptimizer> adam;
  std::unique_ptr<training::SyncReplicasOptimizer> sync;  // with --is_sync
};

// `workers` and `index`: how many replicas there are and which this is.
absl::StatusOr<Model> BuildModel(const Scope& scope, const Options& o, int workers, int index) {
  Model m;
  m.global_step = training::GetOrCreateGlobalStep(scope);  // first, as the classic program
  m.net = fashion_mnist::BuildClassifier(scope, o.seed);
  m.adam = std::make_unique<training::AdamOptimizer>(o.learning_rate);
  if (o.is_sync) {  // every step averages one gradient from each worker
    const int aggregate =
        o.replicas_to_aggregate > 0 ? static_cast<int>(o.replicas_to_aggregate) : workers;
    if (aggregate > workers) {
      return errors::InvalidArgument("--replicas_to_aggregate=", aggregate, " is more than the ",
                                     workers, " workers");
    }
    m.sync = std::make_unique<training::SyncReplicasOptimizer>(
        m.adam.get(), aggregate, workers, training::SyncReplicasOptimizer::WorkerIndex(index));
    TG_ASSIGN_OR_RETURN(m.train, m.sync->Minimize(scope, m.net.loss, {}, m.global_step));
  } else {
    TG_ASSIGN_OR_RETURN(m.train, m.adam->Minimize(scope, m.net.loss, {}, m.global_step));
  }
  TG_RETURN_IF_ERROR(scope.status());
  return m;
}

// A worker: trains until the global step reaches --steps, then (the chief)
// evaluates, tells every ps task it is done, and prints the accuracy.
absl::Status RunWorker(const TfConfig& config, Server& server, const Options& o) {
  const int index = config.task.index, num_ps = config.cluster.num_tasks("ps");
  const bool chief = index == 0;
  TG_ASSIGN_OR_RETURN(MnistData train, LoadFashionMnist(o.data_dir, MnistSplit::kTrain));
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = num_ps;  // variables round-robin over the ps tasks
  setter.worker_device = config.task.name();
  Scope scope = root.WithDeviceFunction(ReplicaDeviceSetter(setter));
  TG_ASSIGN_OR_RETURN(Model m, BuildModel(scope, o, config.cluster.num_tasks("worker"), index));
  const std::vector<Operation> say_done = training::WorkerDoneOps(root, config);

  training::MonitoredTrainingSessionOptions options;
  options.master = server.target();
  options.is_chief = chief;
  // This worker's session needs the ps tasks and itself, not the other workers.
  options.config.add_device_filters("/job:ps");
  options.config.add_device_filters(config.task.name());
  options.checkpoint_dir = o.checkpoint_dir;
  if (!o.checkpoint_dir.empty()) options.save_checkpoint_steps = o.save_every;
  options.wait_for_chief_poll_interval = absl::Milliseconds(200);
  if (chief && !o.logdir.empty()) {  // TensorBoard's scalars, on the chief only
    options.summary_dir = o.logdir;
    options.save_summaries_steps = o.log_every;
    options.summary_scalars = {{"loss", m.net.loss},
                               {"accuracy", fashion_mnist::BatchAccuracy(scope, m.net)}};
  }
  if (m.sync && !chief) {
    // A worker waits for the chief's update each step: at most the chief's
    // wait for a full step and its update, unless the chief died. Bounded,
    // so that a dead chief ends the other workers too.
    options.config.set_operation_timeout_in_ms((2 * o.sync_timeout_s + 60) * 1000);
  }
  if (m.sync) {  // the chief's aggregation loop; the others' local step
    training::SyncReplicasHookOptions sync_hook;
    sync_hook.master = options.master;
    sync_hook.config = options.config;
    sync_hook.aggregation_timeout = absl::Seconds(o.sync_timeout_s);
    options.hooks.push_back(m.sync->MakeSessionRunHook(chief, sync_hook));
  }
  if (!o.trace_dir.empty()) {  // a Chrome trace of a step every --log_every global steps
    training::ProfilerHookOptions profiling;
    profiling.save_steps = o.log_every;
    profiling.output_dir = absl::StrCat(o.trace_dir, "/worker", index);
    options.hooks.push_back(std::make_shared<training::ProfilerHook>(profiling));
  }
  options.hooks.push_back(training::StopAtStepHook::AtStep(o.steps));
  TG_ASSIGN_OR_RETURN(auto session, training::MonitoredTrainingSession::Create(scope, options));

  // Each worker its own shuffle of the whole training set, as the classic program.
  TG_ASSIGN_OR_RETURN(auto batches,
                      fashion_mnist::TrainingBatches(train, o.batch_size, o.seed + index));
  const absl::Time start = absl::Now();
  std::vector<Tensor> batch, out;
  int64_t step = 0;
  double loss_sum = 0;
  for (bool end = false; !session->should_stop();) {
    TG_RETURN_IF_ERROR(batches->GetNext(&batch, &end));
    absl::Status s = session->Run({{m.net.images, batch[0]}, {m.net.labels, batch[1]}},
                                  {m.net.loss, m.global_step}, {m.train}, &out);
    if (m.sync && !chief && absl::IsOutOfRange(s)) break;  // the chief has stopped aggregating
    TG_RETURN_IF_ERROR(s);
    loss_sum += out[0].scalar<float>();
    if (++step % o.log_every == 0) {
      std::printf("worker %d: step %lld (global step %lld), loss %.4f\n", index, (long long)step,
                  (long long)out[1].scalar<int64_t>(), loss_sum / o.log_every);
      loss_sum = 0;
    }
  }
  TG_RETURN_IF_ERROR(session->Close());  // the chief's last checkpoint
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);

  SessionOptions finish_options;  // the variables are still on the ps tasks
  finish_options.target = server.target();
  finish_options.config = options.config;
  ClientSession finish(root, finish_options);
  TG_RETURN_IF_ERROR(finish.Run({m.global_step}, &out));
  std::printf("worker %d: trained %lld steps in %.1f s (%.1f steps/s); global step now %lld\n",
              index, (long long)step, seconds, step / seconds, (long long)out[0].scalar<int64_t>());
  double accuracy = 0;
  if (chief) {
    TG_ASSIGN_OR_RETURN(MnistData test, LoadFashionMnist(o.data_dir, MnistSplit::kTest));
    TG_ASSIGN_OR_RETURN(accuracy, fashion_mnist::TestAccuracy(finish, m.net, test));
  }
  TG_RETURN_IF_ERROR(WithContext(finish.Run({}, {}, say_done, nullptr), "telling the ps tasks"));
  if (chief) std::printf("test_accuracy=%.4f\n", accuracy);
  return absl::OkStatus();
}

absl::Status Run(const Options& o) {
  TG_ASSIGN_OR_RETURN(TfConfig config, o.task.Resolve());
  // A ps task serves the variables until every worker has said it is done
  // (or until SIGTERM/SIGINT); a worker trains, through its own server.
  training::ServeUntilDoneOptions serve;
  TG_ASSIGN_OR_RETURN(serve.server.security, RpcSecurity::FromEnvironment());
  serve.server.bind_host = o.bind;  // empty: the host of this task's cluster entry
  if (config.task.job == "ps") return training::ServeUntilWorkersDone(config, serve);
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                      training::StartTaskServer(config, serve.server));
  absl::Status s = RunWorker(config, *server, o);
  server->Stop();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen, also into a pipe
  Options o;
  const std::vector<Flag> flag_list = {
      Flag("cluster_resolver", &o.task.resolver.resolver,
           "where the cluster comes from: flags, tf_config, slurm, mpi or auto"),
      Flag("ps_hosts", &o.task.resolver.ps_hosts, "the ps tasks, H:P,... (with --worker_hosts)"),
      Flag("worker_hosts", &o.task.resolver.worker_hosts,
           "the worker tasks, H:P,...; worker 0 is the chief"),
      Flag("cluster", &o.task.resolver.cluster,
           "or the cluster as \"ps=h:p,h:p;worker=h:p,h:p\"\n"
           "(none: TF_CONFIG, srun or mpirun gives the cluster and the task)"),
      Flag("job_name", &o.task.resolver.job_name, "this task's job: ps or worker"),
      Flag("task_index", &o.task_index, "this task's index in its job"),
      Flag("slurm_jobs", &o.task.resolver.slurm_jobs, "under srun: ranks in order, ps:1,worker:2"),
      Flag("mpi_jobs", &o.task.resolver.mpi_jobs, "under mpirun: ranks in order, ps:1,worker:2"),
      Flag("hostfile", &o.task.resolver.hostfile, "under mpirun: OpenMPI's hostfile"),
      Flag("port_base", &o.task.resolver.port_base,
           "srun, mpirun --hostfile: a node's k-th task's port is this + k"),
      Flag("gpus_per_task", &o.task.resolver.gpus_per_task,
           "under srun: CUDA_VISIBLE_DEVICES per local task"),
      Flag("bind", &o.bind,
           "host this task's server listens on (default: its cluster entry's;\n"
           "0.0.0.0 on a real network)"),
      Flag("is_sync", &o.is_sync,
           "synchronous replicas: each global step averages one\n"
           "gradient from every worker (SyncReplicasOptimizer)"),
      Flag("replicas_to_aggregate", &o.replicas_to_aggregate,
           "with --is_sync: gradients averaged per global step (0: the\n"
           "number of workers; fewer leaves the rest as backup workers)"),
      Flag("sync_timeout_s", &o.sync_timeout_s,
           "with --is_sync: the chief fails, naming the workers whose gradients\n"
           "are missing, after waiting this many seconds for a global step; the\n"
           "other workers' steps fail after 2 * this + 60 s (a dead chief)"),
      Flag("steps", &o.steps, "train until the global step is this"),
      Flag("batch_size", &o.batch_size, "examples per worker step"),
      Flag("learning_rate", &o.learning_rate, "Adam's learning rate"),
      Flag("checkpoint_dir", &o.checkpoint_dir,
           "the chief restores from and saves here (empty: no checkpoints)"),
      Flag("save_every", &o.save_every, "global steps between the chief's checkpoints"),
      Flag("logdir", &o.logdir,
           "the chief writes TensorBoard event files here: the graph, loss\n"
           "and accuracy every --log_every global steps (empty: none)"),
      Flag("log_every", &o.log_every, "a worker's own steps between its progress lines"),
      Flag("trace_dir", &o.trace_dir,
           "each worker writes a Chrome trace of a step every --log_every global\n"
           "steps into DIR/worker<index>/timeline-<global step>.json (its own and\n"
           "the ps tasks' nodes)"),
      Flag("data_dir", &o.data_dir, "the Fashion-MNIST files"),
      Flag("seed", &o.seed, "seed of the initial weights and the shuffles"),
  };
  const std::string usage = Flags::Usage(
      "distributed_fashion_mnist --ps_hosts=H:P,... --worker_hosts=H:P,... --job_name=ps|worker\n"
      "           [--task_index=N] [--steps=N] [--checkpoint_dir=DIR] [--is_sync]\n"
      "       TF_CONFIG='{\"cluster\": {...}, \"task\": {...}}' distributed_fashion_mnist "
      "[--steps=N]",
      flag_list);
  bool help = false;
  absl::Status flags = Flags::Parse(&argc, argv, flag_list, &help);
  if (flags.ok() && !help) flags = CheckFlags(o, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "distributed_fashion_mnist: %s\n\n%s",
                 std::string(flags.message()).c_str(), usage.c_str());
    return 2;
  }
  if (help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  const absl::Status s = Run(o);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", absl::StatusCodeToString(s.code()).c_str(),
                 std::string(s.message()).c_str());
  }
  return s.ok() ? 0 : 1;
}
