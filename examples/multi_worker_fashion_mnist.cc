// MultiWorkerMirroredStrategy: two worker processes train one Fashion-MNIST
// model (784-128-10 by default, --hidden=500,500 for 784-500-500-10; ReLU,
// Adam) in lockstep. Each worker starts its own
// task's server from TF_CONFIG, takes its half of every global batch, and
// the gradients are all-reduced across the workers (CollectiveReduce over
// the worker service), so both hold identical variables after every step.
//
//   worker 0 (chief), localhost:20000          worker 1, localhost:20001
//  +---------------------------------+        +---------------------------------+
//  | dense/kernel ... (its copy)     |        | dense/kernel ... (its copy)     |
//  | rows [0, B/2) of each batch     |        | rows [B/2, B) of each batch     |
//  | forward, backward               |        | forward, backward               |
//  +---------------+-----------------+        +----------------+----------------+
//                  +------ ring all-reduce of the gradients ----+
//                          (mean; initial values broadcast from the chief)
//
//   # two terminals (or two background processes):
//   TF_CONFIG='{"cluster": {"worker": ["localhost:20000", "localhost:20001"]},
//               "task": {"type": "worker", "index": 0}}' multi_worker_fashion_mnist
//   TF_CONFIG='{"cluster": {"worker": ["localhost:20000", "localhost:20001"]},
//               "task": {"type": "worker", "index": 1}}' multi_worker_fashion_mnist
//   # or without TF_CONFIG: multi_worker_fashion_mnist --task_index=0 (and 1)
//   # or under Slurm or MPI: srun -n 2 multi_worker_fashion_mnist (every task a
//   # worker at its node's port 2222 + SLURM_LOCALID; docs/multi_host.md)
//   # or one command: tg_launch --workers=2
//   --task_binary=bazel-bin/examples/multi_worker_fashion_mnist
//
// The first worker started waits for the other at its first collective, at
// most --collective_timeout_s, then fails naming the worker that never came.
// The global batch is --batch_size (per replica) × the replicas in sync
// (the workers × --local_devices).
// The gradients travel in buckets of at most --bytes_per_pack bytes, the last
// layer's first, each all-reduced while the earlier layers' backprop runs;
// --trace_file=step.json (given to every worker: the traced step runs the
// collectives too) traces one more step after training, and worker k writes
// it to step_worker<k>.json (Chrome trace JSON: chrome://tracing or
// ui.perfetto.dev) and prints how much all-reduce time hid behind backprop.
// Every worker prints one progress line per epoch, its step time, and
// "test_accuracy=0.xxxx" at the end.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/data/dataset.h"
#include "client/data/fashion_mnist.h"
#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/overlap.h"
#include "client/ops/standard_ops.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "core/runtime/trace.h"
#include "core/util/command_line_flags.h"
#include "distributed/cluster_resolver.h"
#include "examples/fashion_mnist_model.h"

using namespace tensorgrid;  // NOLINT: an example

namespace {

struct Options {
  std::string workers = "localhost:20000,localhost:20001";
  std::string cluster, job_name = "worker";  // tg_launch --task_binary passes these
  int task_index = -1;                       // -1: TF_CONFIG, srun or mpirun
  std::string cluster_resolver = "auto", mpi_hostfile;
  int32_t port_base = 2222;
  int64_t batch_size = 64, epochs = 2, seed = 1, collective_timeout_s = 60, local_devices = 0;
  double learning_rate = 1e-3;
  std::string data_dir = kFashionMnistDir;
  std::string hidden = "128";  // hidden layer widths
  int64_t bytes_per_pack = distribute::MirroredStrategy::Options().bytes_per_pack;
  int64_t intra_op_threads = 0;
  std::string trace_file;
};

// --hidden: positive widths, comma-separated.
absl::StatusOr<std::vector<int64_t>> HiddenWidths(const std::string& flag) {
  std::vector<int64_t> widths;
  for (absl::string_view w : absl::StrSplit(flag, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(w, &v) || v <= 0) {
      return errors::InvalidArgument("--hidden=", flag, ": '", w, "' is not a positive width");
    }
    widths.push_back(v);
  }
  return widths;
}

// What Flags::Parse leaves to the program: positional arguments (none), the ranges.
absl::Status CheckFlags(const Options& o, int argc, char** argv) {
  if (argc > 1) return errors::InvalidArgument("unexpected argument '", argv[1], "'");
  if (o.task_index < -1) {
    return errors::InvalidArgument("--task_index=", o.task_index, " is not an index or -1");
  }
  const std::pair<const char*, double> positive[] = {
      {"batch_size", o.batch_size},
      {"epochs", o.epochs},
      {"learning_rate", o.learning_rate},
      {"collective_timeout_s", o.collective_timeout_s},
      {"seed", o.seed}};
  for (const auto& [flag, value] : positive) {
    if (value <= 0) return errors::InvalidArgument("--", flag, "=", value, " is not positive");
  }
  if (o.intra_op_threads < 0) {
    return errors::InvalidArgument("--intra_op_threads=", o.intra_op_threads, " is negative");
  }
  if (o.bytes_per_pack < 0) {
    return errors::InvalidArgument("--bytes_per_pack=", o.bytes_per_pack, " is negative");
  }
  if (o.local_devices < 0) {
    return errors::InvalidArgument("--local_devices=", o.local_devices, " is negative");
  }
  return HiddenWidths(o.hidden).status();
}

// The cluster: --task_index with --workers (or --cluster), else TF_CONFIG,
// srun's or mpirun's (ClusterResolver; every task a worker).
absl::StatusOr<TfConfig> Cluster(const Options& o) {
  if (o.task_index < 0) {
    if (!o.cluster.empty()) return errors::InvalidArgument("--cluster needs --task_index");
    ClusterResolverOptions resolver;
    resolver.resolver = o.cluster_resolver;
    resolver.port_base = o.port_base;
    resolver.hostfile = o.mpi_hostfile;
    absl::StatusOr<ResolvedTask> task = ResolveCluster(resolver, Environment::Process());
    if (!task.ok()) {
      return WithContext(task.status(), "without --task_index, TF_CONFIG, srun or mpirun");
    }
    std::fprintf(stderr, "%s\n", task->ToString().c_str());
    return task->config;
  }
  TG_ASSIGN_OR_RETURN(ClusterSpec cluster,
                      ClusterSpec::FromFlag(o.cluster.empty() ? "worker=" + o.workers : o.cluster));
  const std::string job = o.cluster.empty() ? "worker" : o.job_name;
  if (o.task_index >= cluster.num_tasks(job)) {
    return errors::InvalidArgument("--task_index=", o.task_index, " but the cluster has ",
                                   cluster.num_tasks(job), " ", job, " task(s)");
  }
  TfConfig config;
  config.cluster = cluster;
  config.task = {job, o.task_index};
  return config;
}

// 784-<hidden>-10: the layers ("dense", "dense_1", ... as Keras names
// them), their variables made once in the strategy's scope (mirrored on
// every replica), and the forward pass any replica builds.
struct Mlp {
  using Dense = fashion_mnist::Dense;

  Mlp(const Scope& scope, const std::vector<int64_t>& hidden, int64_t seed) {
    int64_t in = 784;
    for (size_t l = 0; l <= hidden.size(); ++l) {
      const bool last = l == hidden.size();
      const int64_t out = last ? 10 : hidden[l];
      layers.emplace_back(scope, l == 0 ? "dense" : absl::StrCat("dense_", l), in, out,
                          last ? Dense::Activation::kNone : Dense::Activation::kRelu,
                          seed + static_cast<int64_t>(l));
      in = out;
    }
  }

  Output Logits(const Scope& s, Output images) const {
    for (const Dense& layer : layers) images = layer.Apply(s, images);
    return images;
  }

  std::vector<Dense> layers;
};

// One more training step, traced: the Chrome trace to `path`, and how its
// all-reduces overlapped backprop.
absl::Status TraceOneStep(Session* session, const distribute::DistributedDataset& data,
                          const Operation& train_op, const std::string& path,
                          const std::string& me) {
  TG_ASSIGN_OR_RETURN(auto it, data.MakeIterator());
  FeedList feeds;
  bool end = false;
  TG_RETURN_IF_ERROR(it->GetNextFeeds(&feeds, &end));
  if (end) return errors::FailedPrecondition("no batch to trace");
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  TG_RETURN_IF_ERROR(session->Run(options, feeds, {}, {train_op.name()}, nullptr, &metadata));
  TG_RETURN_IF_ERROR(WriteFileAtomically(path, ToChromeTrace(metadata)));
  std::printf("%s: traced one step in %s: %s\n", me.c_str(), path.c_str(),
              distribute::MeasureAllReduceOverlap(metadata.step_stats()).ToString().c_str());
  return absl::OkStatus();
}

absl::Status Main(const Options& o) {
  TG_ASSIGN_OR_RETURN(TfConfig tf_config, Cluster(o));
  distribute::MultiWorkerMirroredStrategy::Options options;
  options.tf_config = tf_config;
  options.local_devices = static_cast<int>(o.local_devices);
  options.mirrored.collective_timeout_seconds = static_cast<float>(o.collective_timeout_s);
  options.mirrored.bytes_per_pack = o.bytes_per_pack;
  options.config.set_intra_op_parallelism_threads(static_cast<int>(o.intra_op_threads));
  TG_ASSIGN_OR_RETURN(auto strategy, distribute::MultiWorkerMirroredStrategy::Create(options));
  const std::string me = absl::StrCat("worker ", strategy->worker_index());
  const int64_t global_batch = o.batch_size * strategy->num_replicas_in_sync();
  // tg_launch waits for this line.
  std::printf("tg_server ready %s %s\n", strategy->server()->task().c_str(),
              strategy->server()->address().c_str());
  std::printf("%s: %d replicas in sync, global batch %lld\n", me.c_str(),
              strategy->num_replicas_in_sync(), static_cast<long long>(global_batch));
  // As TensorFlow's "Using MirroredStrategy with devices (...)".
  std::printf("%s: replicas on %s\n", me.c_str(),
              absl::StrJoin(strategy->replica_devices(), ", ").c_str());
  std::fflush(stdout);

  TG_ASSIGN_OR_RETURN(MnistData train, LoadFashionMnist(o.data_dir, MnistSplit::kTrain));
  TG_ASSIGN_OR_RETURN(MnistData test, LoadFashionMnist(o.data_dir, MnistSplit::kTest));
  // Every worker walks the same global batches and keeps its share of each.
  const Dataset dataset = Dataset::FromTensorSlices({train.images, train.labels})
                              .Shuffle(10000, o.seed)
                              .Batch(global_batch, /*drop_remainder=*/true)
                              .Prefetch(2);

  Scope root = Scope::NewRootScope();
  Scope scope = strategy->scope(root);
  TG_ASSIGN_OR_RETURN(const std::vector<int64_t> hidden, HiddenWidths(o.hidden));
  const Mlp model(scope, hidden, o.seed);
  training::AdamOptimizer adam(o.learning_rate);
  TG_ASSIGN_OR_RETURN(distribute::DistributedDataset data,
                      strategy->ExperimentalDistributeDataset(scope, dataset));
  auto step_fn = [&](distribute::ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
    const Scope& s = ctx.scope();
    Output logits = model.Logits(s, ctx.inputs()[0]);  // this replica's copies of the variables
    auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, ctx.inputs()[1]);
    Output loss = ops::Mean(s, xent.loss, {0});
    TG_RETURN_IF_ERROR(ctx.Minimize(&adam, loss));
    return std::vector<Output>{loss};
  };
  TG_ASSIGN_OR_RETURN(distribute::DistributedStep step,
                      strategy->Run(scope, step_fn, data.inputs()));
  Output loss = strategy->Reduce(scope, distribute::ReduceOp::kMean, step.outputs[0]);
  // Evaluation, outside any replica: the primary copies, on this worker only.
  auto images = ops::Placeholder(root.WithOpName("eval_images"), DT_FLOAT);
  auto labels = ops::Placeholder(root.WithOpName("eval_labels"), DT_INT64);
  auto hits = ops::Equal(root, ops::ArgMax(root, model.Logits(root, images), 1), labels);
  Output correct = ops::Sum(root.WithOpName("correct"), ops::Cast(root, hits, DT_FLOAT), {0});
  Operation init = training::GlobalVariablesInitializer(root);

  GraphDef graph;
  TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
  SessionOptions session_options;
  session_options.target = strategy->target();
  session_options.config = strategy->session_config();
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(session_options));
  TG_RETURN_IF_ERROR(session->Create(graph));
  // Collective: the chief's initial values reach every worker.
  TG_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, nullptr));

  distribute::FitOptions fit;
  fit.epochs = static_cast<int>(o.epochs);
  const absl::Time start = absl::Now();
  TG_ASSIGN_OR_RETURN(distribute::FitHistory history,
                      distribute::Fit(session.get(), data, step.train_op, loss, fit));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("%s: %lld steps, %.2f ms/step, %.0f examples/s (global)\n", me.c_str(),
              static_cast<long long>(history.steps), 1000 * seconds / history.steps,
              history.steps * global_batch / seconds);
  if (!o.trace_file.empty()) {
    std::string path = o.trace_file;
    const size_t dot = path.rfind('.');
    const size_t at = dot == std::string::npos || dot < path.rfind('/') + 1 ? path.size() : dot;
    path.insert(at, absl::StrCat("_worker", strategy->worker_index()));
    TG_RETURN_IF_ERROR(TraceOneStep(session.get(), data, step.train_op, path, me));
  }

  // Every worker holds the same variables; each evaluates its own copy.
  TG_ASSIGN_OR_RETURN(
      auto it, Dataset::FromTensorSlices({test.images, test.labels}).Batch(1000).MakeIterator());
  std::vector<Tensor> batch, out;
  double right = 0;
  for (bool end = false;;) {
    TG_RETURN_IF_ERROR(it->GetNext(&batch, &end));
    if (end) break;
    TG_RETURN_IF_ERROR(session->Run({{"eval_images", batch[0]}, {"eval_labels", batch[1]}},
                                    {correct.name()}, {}, &out));
    right += out[0].scalar<float>();
  }
  std::printf("%s: test_accuracy=%.4f\n", me.c_str(), right / test.labels.dim_size(0));
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const std::vector<Flag> flag_list = {
      Flag("workers", &o.workers, "the worker tasks, H:P,..., when TF_CONFIG is not set"),
      Flag("task_index", &o.task_index,
           "this worker's index in --workers (-1: TF_CONFIG, srun or mpirun)"),
      Flag("cluster_resolver", &o.cluster_resolver,
           "without --task_index: auto, tf_config, slurm or mpi"),
      Flag("port_base", &o.port_base, "under srun: a node's k-th task's port is this + k"),
      Flag("hostfile", &o.mpi_hostfile, "under mpirun: OpenMPI's hostfile of the workers"),
      Flag("cluster", &o.cluster,
           "or the cluster as \"chief=h:p;worker=h:p,h:p\" (tg_launch's syntax)"),
      Flag("job_name", &o.job_name, "with --cluster: this task's job, chief or worker"),
      Flag("batch_size", &o.batch_size, "examples per replica and step"),
      Flag("local_devices", &o.local_devices,
           "replicas on each worker: on its GPUs when it has any, else its CPUs (0: one per GPU, "
           "or one CPU)"),
      Flag("epochs", &o.epochs, "passes over the 60,000 training images"),
      Flag("learning_rate", &o.learning_rate, "Adam's learning rate"),
      Flag("collective_timeout_s", &o.collective_timeout_s,
           "how long a worker waits for the others at a collective"),
      Flag("data_dir", &o.data_dir, "the Fashion-MNIST files"),
      Flag("seed", &o.seed, "seed of the initial weights and the shuffle"),
      Flag("hidden", &o.hidden, "hidden layer widths, comma-separated (500,500: 784-500-500-10)"),
      Flag("bytes_per_pack", &o.bytes_per_pack,
           "gradient bucket size for the all-reduces (0: each gradient alone)"),
      Flag("intra_op_threads", &o.intra_op_threads,
           "threads per kernel of this worker (0: one per core; with several workers on one "
           "machine, its cores over the workers)"),
      Flag("trace_file", &o.trace_file,
           "after training, every worker traces one step: worker k writes the Chrome trace "
           "JSON to this path with _worker<k> before its extension"),
  };
  const std::string usage = Flags::Usage("multi_worker_fashion_mnist [flags]", flag_list);
  bool help = false;
  absl::Status flags = Flags::Parse(&argc, argv, flag_list, &help);
  if (flags.ok() && !help) flags = CheckFlags(o, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "multi_worker_fashion_mnist: %s\n%s", flags.ToString().c_str(),
                 usage.c_str());
    return 2;
  }
  if (help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  const absl::Status s = Main(o);
  if (!s.ok()) std::fprintf(stderr, "multi_worker_fashion_mnist: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : 1;
}
