// In-graph replication: one client builds one graph with a copy of the model
// (a tower) on every worker task; the variables live on the ps tasks, where
// the towers' gradients are averaged and one Adam op applies them. The model
// and data are examples/fashion_mnist's (784-500-500-10, Adam 1e-4, batch 32
// per tower; examples/fashion_mnist_model.h); the cluster is plain tg_server
// tasks.
//
//            /job:ps/task:0, /job:ps/task:1 (variables round-robin)
//   +----------------------------------------------------------------+
//   | dense/kernel ... global_step    mean(grad_0, grad_1) -> Adam   |
//   +----------------------------------------------------------------+
//       | weights    ^ grads                   | weights    ^ grads
//   +---v------------+------+            +-----v------------+------+
//   | tower_0: batch 32     |            | tower_1: batch 32       |
//   | /job:worker/task:0    |            | /job:worker/task:1      |
//   +-----------------------+            +-------------------------+
//           one session, on worker 0: feeds both towers, runs one train op
//
//   bazel-bin/tools/tg_launch --ps=2 --workers=2 -- bazel-bin/examples/in_graph_replication
//
// The cluster comes from --cluster, --ps_hosts/--worker_hosts or TF_CONFIG
// (which tg_launch sets); the session's master is worker 0 unless --target
// says otherwise. Prints "step S/N, loss L" every --log_every global steps
// and "test_accuracy=0.xxxx" last; tg_launch then stops the cluster.
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
#include "client/ops/standard_ops.h"
#include "client/training/device_setter.h"
#include "client/training/global_step.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/util/command_line_flags.h"
#include "distributed/cluster_spec.h"
#include "examples/fashion_mnist_model.h"

using namespace tensorgrid;  // NOLINT: an example

namespace {

struct Options {
  std::string cluster, ps_hosts, worker_hosts, target, data_dir = kFashionMnistDir;
  int64_t steps = 6000, batch_size = 32, log_every = 100, seed = 1;
  double learning_rate = 1e-4;
};

// What Flags::Parse leaves to the program: positional arguments (none), the ranges.
absl::Status CheckFlags(const Options& o, int argc, char** argv) {
  if (argc > 1) return errors::InvalidArgument("unexpected argument '", argv[1], "'");
  const std::pair<const char*, double> positive[] = {{"steps", o.steps},
                                                     {"batch_size", o.batch_size},
                                                     {"learning_rate", o.learning_rate},
                                                     {"log_every", o.log_every},
                                                     {"seed", o.seed}};
  for (const auto& [flag, value] : positive) {
    if (value <= 0) return errors::InvalidArgument("--", flag, "=", value, " is not positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ResolveCluster(const Options& o) {
  ClusterSpec cluster;
  if (!o.cluster.empty()) {
    TG_ASSIGN_OR_RETURN(cluster, ClusterSpec::FromFlag(o.cluster));
  } else if (!o.worker_hosts.empty()) {
    TG_ASSIGN_OR_RETURN(cluster, ClusterSpec::FromHostsFlags(o.ps_hosts, o.worker_hosts));
  } else {
    absl::StatusOr<TfConfig> config = TfConfig::FromEnvironment();
    if (!config.ok())
      return WithContext(config.status(), "no --cluster or --worker_hosts, and TF_CONFIG");
    cluster = config->cluster;
  }
  if (cluster.num_tasks("ps") == 0 || cluster.num_tasks("worker") == 0) {
    return errors::InvalidArgument("the cluster needs ps and worker tasks, got ",
                                   cluster.ToString());
  }
  return cluster;
}

// One copy of the forward and backward pass, on a worker's device.
struct Tower {
  fashion_mnist::Classifier net;  // images, labels -> loss, correct
  std::vector<training::GradAndVar> grads;
};

struct Model {
  std::vector<Tower> towers;
  Operation train, init;
};

absl::StatusOr<Model> BuildModel(const Scope& root, const ClusterSpec& cluster, const Options& o) {
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = cluster.num_tasks("ps");
  Scope on_ps = root.WithDeviceFunction(ReplicaDeviceSetter(setter));
  training::Variable global_step = training::GetOrCreateGlobalStep(on_ps);
  // The model's variables, built once on the ps tasks and shared by every tower.
  const std::vector<fashion_mnist::Dense> layers =
      fashion_mnist::MakeClassifierLayers(on_ps, o.seed);
  training::AdamOptimizer adam(o.learning_rate);
  Model m;
  for (int k = 0; k < cluster.num_tasks("worker"); ++k) {
    Scope tower = root.WithDevice(TaskName("worker", k)).NewSubScope(absl::StrCat("tower_", k));
    Tower t;
    t.net = fashion_mnist::BuildClassifier(tower, layers);
    TG_ASSIGN_OR_RETURN(t.grads, adam.ComputeGradients(tower, t.net.loss));
    m.towers.push_back(std::move(t));
  }
  // Each variable's gradients averaged where the variable lives.
  std::vector<training::GradAndVar> averaged;
  const float scale = 1.0f / m.towers.size();
  for (size_t i = 0; i < m.towers[0].grads.size(); ++i) {
    const training::Variable& var = m.towers[0].grads[i].second;
    Scope by_var = root.ColocateWith(var.op()).NewSubScope("average");
    std::vector<Output> grads;
    for (const Tower& t : m.towers) grads.push_back(t.grads[i].first);
    averaged.emplace_back(ops::Mul(by_var, ops::AddN(by_var, grads), ops::Const(by_var, scale)),
                          var);
  }
  TG_ASSIGN_OR_RETURN(m.train, adam.ApplyGradients(root, averaged, global_step));
  m.init = training::GlobalVariablesInitializer(root);
  TG_RETURN_IF_ERROR(root.status());
  return m;
}

absl::Status Train(ClientSession& session, const Model& m, const Options& o,
                   const MnistData& train) {
  CallableOptions call;  // every tower's batch in, every tower's loss out, one train op
  for (const Tower& t : m.towers) {
    call.add_feed(t.net.images.name());
    call.add_feed(t.net.labels.name());
    call.add_fetch(t.net.loss.name());
  }
  call.add_target(m.train.name());
  TG_ASSIGN_OR_RETURN(ClientSession::CallableHandle step_fn, session.MakeCallable(call));
  TG_ASSIGN_OR_RETURN(auto batches, fashion_mnist::TrainingBatches(train, o.batch_size, o.seed));
  const absl::Time start = absl::Now();
  std::vector<Tensor> feeds, batch, out;
  double loss_sum = 0;
  bool end = false;
  for (int64_t step = 1; step <= o.steps; ++step) {
    feeds.clear();
    for (size_t k = 0; k < m.towers.size(); ++k) {
      TG_RETURN_IF_ERROR(batches->GetNext(&batch, &end));
      feeds.insert(feeds.end(), batch.begin(), batch.end());
    }
    TG_RETURN_IF_ERROR(session.RunCallable(step_fn, feeds, &out, nullptr));
    for (const Tensor& loss : out) loss_sum += loss.scalar<float>() / out.size();
    if (step % o.log_every == 0) {
      std::printf("step %lld/%lld, loss %.4f\n", (long long)step, (long long)o.steps,
                  loss_sum / o.log_every);
      loss_sum = 0;
    }
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("trained %lld steps of %zu towers in %.1f s: %.1f steps/s\n", (long long)o.steps,
              m.towers.size(), seconds, o.steps / seconds);
  return session.ReleaseCallable(step_fn);
}

absl::Status Run(const Options& o) {
  TG_ASSIGN_OR_RETURN(ClusterSpec cluster, ResolveCluster(o));
  TG_ASSIGN_OR_RETURN(MnistData train, LoadFashionMnist(o.data_dir, MnistSplit::kTrain));
  TG_ASSIGN_OR_RETURN(MnistData test, LoadFashionMnist(o.data_dir, MnistSplit::kTest));
  Scope root = Scope::NewRootScope();
  TG_ASSIGN_OR_RETURN(Model m, BuildModel(root, cluster, o));
  SessionOptions options;
  options.target = o.target;
  if (options.target.empty()) {
    TG_ASSIGN_OR_RETURN(std::string worker0, cluster.TaskAddress("worker", 0));
    options.target = "grpc://" + worker0;
  }
  ClientSession session(root, options);
  TG_RETURN_IF_ERROR(session.Run({}, {}, {m.init}, nullptr));
  TG_RETURN_IF_ERROR(Train(session, m, o, train));
  // Tower 0 counts what it gets right on the 10,000 test images.
  TG_ASSIGN_OR_RETURN(double accuracy, fashion_mnist::TestAccuracy(session, m.towers[0].net, test));
  std::printf("test_accuracy=%.4f\n", accuracy);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen, also into a pipe
  Options o;
  const std::vector<Flag> flag_list = {
      Flag("cluster", &o.cluster,
           "the cluster, \"ps=h:p,h:p;worker=h:p,h:p\"\n"
           "(empty: --ps_hosts/--worker_hosts, else TF_CONFIG)"),
      Flag("ps_hosts", &o.ps_hosts, "the ps tasks, H:P,... (with --worker_hosts)"),
      Flag("worker_hosts", &o.worker_hosts, "the worker tasks, H:P,...: one tower each"),
      Flag("target", &o.target, "the session's master, grpc://H:P (empty: worker 0)"),
      Flag("steps", &o.steps, "train until the global step is this"),
      Flag("batch_size", &o.batch_size, "examples per tower and step"),
      Flag("learning_rate", &o.learning_rate, "Adam's learning rate"),
      Flag("log_every", &o.log_every, "steps between progress lines"),
      Flag("data_dir", &o.data_dir, "the Fashion-MNIST files"),
      Flag("seed", &o.seed, "seed of the initial weights and the shuffle"),
  };
  const std::string usage = Flags::Usage(
      "in_graph_replication [--cluster=SPEC | --ps_hosts=H:P,... --worker_hosts=H:P,...]\n"
      "           [--target=grpc://H:P] [--steps=N] [--batch_size=N] [--learning_rate=X]\n"
      "       (without a cluster flag, TF_CONFIG's cluster: run it under tg_launch)",
      flag_list);
  bool help = false;
  absl::Status flags = Flags::Parse(&argc, argv, flag_list, &help);
  if (flags.ok() && !help) flags = CheckFlags(o, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "in_graph_replication: %s\n\n%s", std::string(flags.message()).c_str(),
                 usage.c_str());
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
