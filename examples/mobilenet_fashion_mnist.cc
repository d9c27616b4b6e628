// The users' MobileNetV2 program (tf.keras.applications.MobileNetV2 under
// MultiWorkerMirroredStrategy, Adam 1e-3, 64 images per replica) in C++,
// on Fashion-MNIST. One process without TF_CONFIG; with TF_CONFIG listing
// several workers, every worker runs this same program and the gradients
// and batch norm's moving statistics are all-reduced between them.
//
//   images [64, 28, 28, 1] (each worker: its 64 of the global batch)
//      |
//   Conv1 3×3 ─ BN ─ ReLU6                      (first_stride 1 for 28×28)
//   inverted residual blocks × 17: 1×1 expand ─ BN ─ ReLU6
//                                  3×3 depthwise ─ BN ─ ReLU6
//                                  1×1 project ─ BN (+ the block's input)
//   Conv_1 1×1 ─ BN ─ ReLU6 ─ global average pool ─ Logits (10)
//      |
//   softmax cross-entropy ── Adam ── all-reduce (several workers)
//
//   mobilenet_fashion_mnist --epochs=3                 # one process
//   TF_CONFIG='{"cluster": {"worker": ["localhost:20000", "localhost:20001"]},
//               "task": {"type": "worker", "index": 0}}' mobilenet_fashion_mnist
//   (and index 1 in a second process)
//
// Prints a progress bar and the time of every epoch, and
// "test_accuracy=0.xxxx" last.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/data/dataset.h"
#include "client/data/fashion_mnist.h"
#include "client/distribute/multi_worker_mirrored_strategy.h"
#include "client/distribute/strategy.h"
#include "client/ops/standard_ops.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "core/util/command_line_flags.h"
#include "examples/models/mobilenet_v2.h"

using namespace tensorgrid;  // NOLINT: an example

namespace {

struct Options {
  int64_t batch_size = 64, epochs = 3, seed = 1, stages = 7, first_stride = 1;
  int64_t train_examples = 60000, test_examples = 10000, intra_op_threads = 0;
  double alpha = 1.0, learning_rate = 1e-3, bn_momentum = 0.99;
  std::string data_dir = kFashionMnistDir;
  int64_t bytes_per_pack = distribute::MirroredStrategy::Options().bytes_per_pack;
};

absl::Status CheckFlags(const Options& o, int argc, char** argv) {
  if (argc > 1) return errors::InvalidArgument("unexpected argument '", argv[1], "'");
  const std::pair<const char*, double> positive[] = {
      {"batch_size", o.batch_size},         {"epochs", o.epochs},
      {"learning_rate", o.learning_rate},   {"alpha", o.alpha},
      {"train_examples", o.train_examples}, {"test_examples", o.test_examples}};
  for (const auto& [flag, value] : positive) {
    if (!(value > 0)) return errors::InvalidArgument("--", flag, "=", value, " is not positive");
  }
  if (o.stages < 1 || o.stages > 7) {
    return errors::InvalidArgument("--stages=", o.stages, " is not in 1..7");
  }
  if (!(o.bn_momentum >= 0 && o.bn_momentum < 1)) {
    return errors::InvalidArgument("--bn_momentum=", o.bn_momentum, " is not in [0, 1)");
  }
  if (o.intra_op_threads < 0) {
    return errors::InvalidArgument("--intra_op_threads=", o.intra_op_threads, " is negative");
  }
  if (o.bytes_per_pack < 0) {
    return errors::InvalidArgument("--bytes_per_pack=", o.bytes_per_pack, " is negative");
  }
  return absl::OkStatus();  // first_stride: checked by the model
}

// MultiWorkerMirroredStrategy when TF_CONFIG is set, else one device here.
absl::StatusOr<std::unique_ptr<distribute::Strategy>> MakeStrategy(const Options& o,
                                                                   std::string* target) {
  const char* tf_config = std::getenv("TF_CONFIG");
  if (tf_config == nullptr || *tf_config == '\0') {  // unset or empty: this process alone
    return std::make_unique<distribute::OneDeviceStrategy>("/device:CPU:0");
  }
  distribute::MultiWorkerMirroredStrategy::Options options;
  options.mirrored.bytes_per_pack = o.bytes_per_pack;
  // The server's devices are made here: a session's config cannot change them later.
  options.config.set_intra_op_parallelism_threads(static_cast<int>(o.intra_op_threads));
  TG_ASSIGN_OR_RETURN(auto strategy, distribute::MultiWorkerMirroredStrategy::Create(options));
  *target = strategy->target();
  std::printf("worker %d of %d at %s\n", strategy->worker_index(), strategy->num_workers(),
              strategy->server()->address().c_str());
  return std::unique_ptr<distribute::Strategy>(std::move(strategy));
}

// The first `n` rows of `data` (all when n is larger).
MnistData Head(const MnistData& data, int64_t n) {
  n = std::min(n, data.labels.dim_size(0));
  return {data.images.Slice(0, n), data.labels.Slice(0, n)};
}

absl::Status Main(const Options& o) {
  std::string target;
  TG_ASSIGN_OR_RETURN(std::unique_ptr<distribute::Strategy> strategy, MakeStrategy(o, &target));
  const int replicas = strategy->num_replicas_in_sync();
  TG_ASSIGN_OR_RETURN(MnistData train_all, LoadFashionMnist(o.data_dir, MnistSplit::kTrain));
  TG_ASSIGN_OR_RETURN(MnistData test_all, LoadFashionMnist(o.data_dir, MnistSplit::kTest));
  const MnistData train = Head(train_all, o.train_examples);
  const MnistData test = Head(test_all, o.test_examples);
  const int64_t global_batch = o.batch_size * replicas;
  if (train.labels.dim_size(0) < global_batch) {
    return errors::InvalidArgument(
        "--train_examples: ", train.labels.dim_size(0), " training images are fewer than one ",
        "global batch of ", global_batch, " (--batch_size=", o.batch_size, " x ", replicas,
        " replicas); a last partial batch is dropped, so nothing would train");
  }
  const Dataset dataset = Dataset::FromTensorSlices({train.images, train.labels})
                              .Shuffle(10000, o.seed)
                              .Batch(global_batch, /*drop_remainder=*/true)
                              .Prefetch(2);

  Scope root = Scope::NewRootScope();
  Scope scope = strategy->scope(root);
  models::MobileNetV2Options net_options;
  net_options.alpha = o.alpha;
  net_options.input_channels = 1;
  net_options.first_stride = static_cast<int>(o.first_stride);
  net_options.stages.resize(o.stages);
  net_options.seed = o.seed;
  net_options.bn_momentum = o.bn_momentum;
  const models::MobileNetV2 net(scope, net_options);
  training::AdamOptimizer adam(o.learning_rate);
  TG_ASSIGN_OR_RETURN(distribute::DistributedDataset data,
                      strategy->ExperimentalDistributeDataset(scope, dataset));
  auto step_fn = [&](distribute::ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
    const Scope& s = ctx.scope();
    Output images = ops::Reshape(s, ctx.inputs()[0], {-1, 28, 28, 1});
    models::MobileNetV2::Forward forward = net.Apply(s, images, /*training=*/true);
    std::function<Output(const Output&)> mean_across_replicas;
    if (replicas > 1) {
      mean_across_replicas = [&](const Output& v) {
        return ctx.AllReduce(distribute::ReduceOp::kMean, v);
      };
    }
    Operation update =
        models::UpdateMovingStatistics(s, forward.moving_updates, mean_across_replicas);
    auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, forward.logits, ctx.inputs()[1]);
    // The moving statistics are updated whenever the loss is computed.
    Output loss = ops::Identity(s.WithControlDependencies({update}), ops::Mean(s, xent.loss, {0}));
    TG_RETURN_IF_ERROR(ctx.Minimize(&adam, loss, net.trainable_variables()));
    return std::vector<Output>{loss};
  };
  TG_ASSIGN_OR_RETURN(distribute::DistributedStep step,
                      strategy->Run(scope, step_fn, data.inputs()));
  Output loss = strategy->Reduce(scope, distribute::ReduceOp::kMean, step.outputs[0]);
  // Evaluation with the moving statistics, on this worker's own copies.
  auto eval_images = ops::Placeholder(root.WithOpName("eval_images"), DT_FLOAT);
  auto eval_labels = ops::Placeholder(root.WithOpName("eval_labels"), DT_INT64);
  Output logits =
      net.Apply(root, ops::Reshape(root, eval_images, {-1, 28, 28, 1}), /*training=*/false).logits;
  auto hits = ops::Equal(root, ops::ArgMax(root, logits, 1), eval_labels);
  Output correct = ops::Sum(root.WithOpName("correct"), ops::Cast(root, hits, DT_FLOAT), {0});
  Operation init = training::GlobalVariablesInitializer(root);

  GraphDef graph;
  TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
  SessionOptions session_options;
  session_options.target = target;
  session_options.config = strategy->session_config();
  session_options.config.set_intra_op_parallelism_threads(static_cast<int>(o.intra_op_threads));
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(session_options));
  TG_RETURN_IF_ERROR(session->Create(graph));
  TG_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, nullptr));
  std::printf(
      "MobileNetV2 (alpha %.2f, %lld stages): %zu trainable variables, %d replica(s), "
      "global batch %lld\n",
      o.alpha, static_cast<long long>(o.stages), net.trainable_variables().size(), replicas,
      static_cast<long long>(global_batch));
  std::fflush(stdout);

  distribute::FitOptions fit;
  fit.epochs = static_cast<int>(o.epochs);
  fit.progress_bar = true;
  TG_ASSIGN_OR_RETURN(distribute::FitHistory history,
                      distribute::Fit(session.get(), data, step.train_op, loss, fit));

  TG_ASSIGN_OR_RETURN(
      auto it, Dataset::FromTensorSlices({test.images, test.labels}).Batch(500).MakeIterator());
  std::vector<Tensor> batch, out;
  double right = 0;
  for (bool end = false;;) {
    TG_RETURN_IF_ERROR(it->GetNext(&batch, &end));
    if (end) break;
    TG_RETURN_IF_ERROR(session->Run({{"eval_images", batch[0]}, {"eval_labels", batch[1]}},
                                    {correct.name()}, {}, &out));
    right += out[0].scalar<float>();
  }
  std::printf("final_loss=%.4f\ntest_accuracy=%.4f\n", history.loss.back(),
              right / test.labels.dim_size(0));
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const std::vector<Flag> flag_list = {
      Flag("epochs", &o.epochs, "passes over the training images"),
      Flag("batch_size", &o.batch_size, "images per replica and step"),
      Flag("learning_rate", &o.learning_rate, "Adam's learning rate"),
      Flag("alpha", &o.alpha, "width multiplier (1.0: the paper's channels)"),
      Flag("stages", &o.stages, "how many of the paper's 7 stages of blocks to build"),
      Flag("first_stride", &o.first_stride, "the first convolution's stride (2 in the paper)"),
      Flag("bn_momentum", &o.bn_momentum,
           "batch norm's moving averages: a short run needs less (0.9 for a few hundred steps)"),
      Flag("train_examples", &o.train_examples, "train on the first N training images"),
      Flag("test_examples", &o.test_examples, "evaluate on the first N test images"),
      Flag("intra_op_threads", &o.intra_op_threads,
           "threads per kernel (0: one per core; with several TF_CONFIG workers on one machine, "
           "its cores over the workers)"),
      Flag("bytes_per_pack", &o.bytes_per_pack,
           "with TF_CONFIG: gradient bucket size for the all-reduces (0: each gradient alone)"),
      Flag("data_dir", &o.data_dir, "the Fashion-MNIST files"),
      Flag("seed", &o.seed, "seed of the initial weights and the shuffle"),
  };
  const std::string usage = Flags::Usage("mobilenet_fashion_mnist [flags]", flag_list);
  bool help = false;
  absl::Status flags = Flags::Parse(&argc, argv, flag_list, &help);
  if (flags.ok() && !help) flags = CheckFlags(o, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "mobilenet_fashion_mnist: %s\n%s", flags.ToString().c_str(),
                 usage.c_str());
    return 2;
  }
  if (help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  const absl::Status s = Main(o);
  if (!s.ok()) std::fprintf(stderr, "mobilenet_fashion_mnist: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : 1;
}
