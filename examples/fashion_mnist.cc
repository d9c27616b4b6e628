// Training in C++: the classic distributed MNIST example's model (784-500-500-10,
// ReLU, softmax cross-entropy, Adam 1e-4, batch 32) on Fashion-MNIST, trained
// locally, checkpointed, resumed, and evaluated on the 10,000 test images.
//
//   Dataset: 60,000 images, shuffled each epoch, batches of 32, prefetched
//      |  images [32,784] float                       labels [32] int64
//      v                                                   |
//   dense   784x500 + ReLU      variables dense/kernel, dense/bias (Glorot, 0)
//   dense_1 500x500 + ReLU                                 |
//   dense_2 500x10  -> logits --> sparse softmax xent <----+
//                                      |
//                  loss = mean --> Adam(1e-4).Minimize(loss, global_step)
//   on the local CPU (--device=gpu: every node with a GPU kernel on GPU:0);
//   every --save_every steps: Saver -> DIR/model-<step>
//   with --logdir: the graph, then loss and accuracy every --log_every steps
//   and test_accuracy at the end, in TensorBoard's event files
//   with --export_dir: a SavedModel of the trained model, signature
//   serving_default: images [?,784] -> classes [?] int64, probabilities [?,10]
//
//   bazel run --config=opt //examples:fashion_mnist -- --steps=6000 --checkpoint_dir=/tmp/fm
//
// --steps is the last global step, as TensorFlow's StopAtStepHook(last_step):
// a run that finds a checkpoint in --checkpoint_dir restores it and trains on
// from its global step, over the batches an uninterrupted run would see.
// Prints "step S/N, loss L, E examples/s" every --log_every steps (a progress
// bar on a terminal), and "test_accuracy=0.xxxx" as its last line.
// `tensorboard --logdir DIR` shows what --logdir=DIR recorded (docs/tensorboard.md);
// `tg_run --saved_model=DIR --input='images=[[...784 values...]]'` runs the
// export (docs/saved_model.md), and so would TensorFlow Serving.
// The classifier, its batches and the accuracy: examples/fashion_mnist_model.h.
#include "client/data/fashion_mnist.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "client/client_session.h"
#include "client/data/dataset.h"
#include "client/ops/standard_ops.h"
#include "client/saved_model/builder.h"
#include "client/saved_model/constants.h"
#include "client/training/global_step.h"
#include "client/training/optimizer.h"
#include "client/training/saver.h"
#include "client/training/summary_writer.h"
#include "client/training/variables.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/command_line_flags.h"
#include "examples/fashion_mnist_model.h"

using namespace tensorgrid;  // NOLINT: an example

namespace {

struct Options {
  int64_t steps = 6000, batch_size = 32, log_every = 100, save_every = 1000, seed = 1;
  int32_t threads = 0;  // intra-op threads; 0: one per core
  double learning_rate = 1e-4;
  std::string checkpoint_dir, logdir, export_dir, data_dir = kFashionMnistDir;
  std::string device = "cpu";  // cpu | gpu
};

// What Flags::Parse leaves to the program: positional arguments (none), the ranges.
absl::Status CheckFlags(const Options& o, int argc, char** argv) {
  if (argc > 1) return errors::InvalidArgument("unexpected argument '", argv[1], "'");
  if (o.threads < 0) return errors::InvalidArgument("--threads=", o.threads, " is negative");
  if (o.device != "cpu" && o.device != "gpu") {
    return errors::InvalidArgument("--device=", o.device, ": cpu or gpu");
  }
  const std::pair<const char*, double> positive[] = {{"steps", o.steps},
                                                     {"batch_size", o.batch_size},
                                                     {"learning_rate", o.learning_rate},
                                                     {"save_every", o.save_every},
                                                     {"log_every", o.log_every},
                                                     {"seed", o.seed}};
  for (const auto& [flag, value] : positive) {
    if (value <= 0) return errors::InvalidArgument("--", flag, "=", value, " is not positive");
  }
  return absl::OkStatus();
}

struct Model {
  fashion_mnist::Classifier net;  // images, labels -> loss, correct
  Operation train, init;
  training::Variable global_step;
};

absl::StatusOr<Model> BuildModel(const Scope& root, const Options& o) {
  Model m;
  m.net = fashion_mnist::BuildClassifier(root, o.seed);
  m.global_step = training::GetOrCreateGlobalStep(root);
  training::AdamOptimizer adam(o.learning_rate);
  TG_ASSIGN_OR_RETURN(m.train, adam.Minimize(root, m.net.loss, {}, m.global_step));
  m.init = training::GlobalVariablesInitializer(root);  // after Minimize: Adam's slots too
  TG_RETURN_IF_ERROR(root.status());
  return m;
}

// Exports the trained model as a SavedModel whose serving_default signature
// classifies images: the whole graph, every variable's value now.
absl::Status Export(ClientSession& session, const Scope& root, const training::Saver& saver,
                    const Model& m, const std::string& export_dir) {
  const Scope serving = root.NewSubScope("serving");
  Output probabilities = ops::Softmax(serving.WithOpName("probabilities"), m.net.logits);
  Output classes = ops::ArgMax(serving.WithOpName("classes"), m.net.logits, 1);
  SignatureDef signature;
  signature.set_method_name(kPredictMethodName);
  (*signature.mutable_inputs())["images"] = BuildTensorInfo(m.net.images, {-1, 784});
  (*signature.mutable_outputs())["probabilities"] = BuildTensorInfo(probabilities, {-1, 10});
  (*signature.mutable_outputs())["classes"] = BuildTensorInfo(classes, {-1});
  SavedModelBuilder builder(export_dir);
  TG_RETURN_IF_ERROR(builder.AddMetaGraphAndVariables(
      session, root, saver, {kSavedModelTagServe}, {{kDefaultServingSignatureDefKey, signature}}));
  TG_RETURN_IF_ERROR(builder.Save());
  std::printf("exported %s (signature %s: images -> classes, probabilities)\n",
              export_dir.c_str(), kDefaultServingSignatureDefKey);
  return absl::OkStatus();
}

absl::StatusOr<MnistData> Load(const Options& o, MnistSplit split) {
  auto data = LoadFashionMnist(o.data_dir, split);
  if (absl::IsNotFound(data.status()) && o.data_dir != kFashionMnistDir) {
    return errors::NotFound(data.status().message(), " (Debian's ", kFashionMnistPackage,
                            " package installs Fashion-MNIST in ", kFashionMnistDir, ")");
  }
  return data;
}

// Restores the latest checkpoint in o.checkpoint_dir, or initializes every
// variable. Returns the global step to start from.
absl::StatusOr<int64_t> RestoreOrInitialize(ClientSession& session, training::Saver& saver,
                                            const Model& m, const Options& o) {
  auto latest = o.checkpoint_dir.empty() ? absl::StatusOr<std::string>(errors::NotFound(""))
                                         : training::LatestCheckpoint(o.checkpoint_dir);
  if (latest.ok()) {
    TG_RETURN_IF_ERROR(saver.Restore(session, *latest));
  } else if (absl::IsNotFound(latest.status())) {
    TG_RETURN_IF_ERROR(session.Run({}, {}, {m.init}, nullptr));
  } else {
    return latest.status();
  }
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(session.Run({m.global_step}, &out));
  const int64_t step = out[0].scalar<int64_t>();
  if (latest.ok()) {
    std::printf("restored %s: resuming from global step %lld\n", latest->c_str(), (long long)step);
  } else if (!o.checkpoint_dir.empty()) {
    std::printf("no checkpoint in %s: starting from step 0\n", o.checkpoint_dir.c_str());
  }
  return step;
}

// "step 1200/6000, loss 0.4123, 3250 examples/s": a plain line, or on a
// terminal a progress bar redrawn in place.
void Report(bool tty, int64_t step, int64_t last, double loss, double examples_per_s) {
  if (!tty) {
    std::printf("step %lld/%lld, loss %.4f, %.0f examples/s\n", (long long)step, (long long)last,
                loss, examples_per_s);
    return;
  }
  constexpr int kWidth = 30;
  const int done = static_cast<int>(kWidth * step / last);
  std::printf("\r[%s%s] step %lld/%lld, loss %.4f, %.0f examples/s\x1b[K%s",
              std::string(done, '#').c_str(), std::string(kWidth - done, '.').c_str(),
              (long long)step, (long long)last, loss, examples_per_s, step == last ? "\n" : "");
  std::fflush(stdout);
}

// Training batches from a fresh permutation of the images each epoch, past
// the first `skip` (those the steps before a restored checkpoint took).
absl::StatusOr<std::unique_ptr<DatasetIterator>> Batches(const MnistData& train, const Options& o,
                                                         int64_t skip) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<DatasetIterator> it,
                      fashion_mnist::TrainingBatches(train, o.batch_size, o.seed));
  std::vector<Tensor> batch;
  bool end = false;
  for (int64_t i = 0; i < skip; ++i) TG_RETURN_IF_ERROR(it->GetNext(&batch, &end));
  return it;
}

// Trains from global step `step` to o.steps; with a `summaries` writer, the
// mean loss and training accuracy of every o.log_every steps go there too.
absl::Status Train(ClientSession& session, training::Saver& saver, const Model& m, const Options& o,
                   const MnistData& train, int64_t step, training::SummaryWriter* summaries) {
  if (step >= o.steps) {
    std::printf("global step %lld >= --steps=%lld: nothing to train\n", (long long)step,
                (long long)o.steps);
    return absl::OkStatus();
  }
  TG_ASSIGN_OR_RETURN(std::unique_ptr<DatasetIterator> it, Batches(train, o, step));
  CallableOptions call;  // the fast path: feeds, fetches and target fixed once
  call.add_feed(m.net.images.name());
  call.add_feed(m.net.labels.name());
  call.add_fetch(m.net.loss.name());
  call.add_fetch(m.net.correct.name());
  call.add_target(m.train.name());
  TG_ASSIGN_OR_RETURN(ClientSession::CallableHandle train_step, session.MakeCallable(call));

  const bool tty = isatty(STDOUT_FILENO);
  const int64_t first = step;
  const absl::Time start = absl::Now();
  absl::Time since = start;
  std::vector<Tensor> batch, out;
  bool end = false;
  double loss_sum = 0, correct_sum = 0;
  int64_t losses = 0;
  std::string saved;  // the latest checkpoint
  while (step < o.steps) {
    TG_RETURN_IF_ERROR(it->GetNext(&batch, &end));
    TG_RETURN_IF_ERROR(session.RunCallable(train_step, batch, &out, nullptr));
    loss_sum += out[0].scalar<float>();
    correct_sum += out[1].scalar<float>();
    ++losses;
    ++step;
    if (step % o.log_every == 0 || step == o.steps) {
      const double seconds = absl::ToDoubleSeconds(absl::Now() - since);
      Report(tty, step, o.steps, loss_sum / losses, losses * o.batch_size / seconds);
      if (summaries != nullptr) {
        TG_RETURN_IF_ERROR(summaries->AddScalars(
            {{"loss", loss_sum / losses}, {"accuracy", correct_sum / (losses * o.batch_size)}},
            step));
      }
      since = absl::Now();
      loss_sum = 0;
      correct_sum = 0;
      losses = 0;
    }
    if (!o.checkpoint_dir.empty() && (step % o.save_every == 0 || step == o.steps)) {
      TG_ASSIGN_OR_RETURN(saved, saver.Save(session, o.checkpoint_dir + "/model", step));
      if (!tty) std::printf("saved %s\n", saved.c_str());
    }
  }
  if (tty && !saved.empty()) std::printf("saved %s\n", saved.c_str());  // the bar hid the others
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("trained steps %lld..%lld in %.1f s: %.1f steps/s, %.0f examples/s\n",
              (long long)first + 1, (long long)step, seconds, (step - first) / seconds,
              (step - first) * o.batch_size / seconds);
  return session.ReleaseCallable(train_step);
}

absl::Status Run(const Options& o) {
  // Refused before training rather than after it (an export never writes
  // over a directory).
  if (!o.export_dir.empty() && PathExists(o.export_dir)) {
    return errors::AlreadyExists("--export_dir '", o.export_dir,
                                 "' already exists; a SavedModel is never written over another "
                                 "(remove it, or name a new directory)");
  }
  TG_ASSIGN_OR_RETURN(MnistData train, Load(o, MnistSplit::kTrain));
  TG_ASSIGN_OR_RETURN(MnistData test, Load(o, MnistSplit::kTest));
  Scope root = Scope::NewRootScope();
  // On a GPU: the model there, what has no GPU kernel (shape arithmetic, the
  // int64 global step's increment) on the CPU by soft placement.
  const Scope model = o.device == "gpu" ? root.WithDevice("/device:GPU:0") : root;
  TG_ASSIGN_OR_RETURN(Model m, BuildModel(model, o));
  training::Saver saver(root);  // every variable: weights, Adam's slots and powers, global_step
  SessionOptions session_options;
  session_options.config.set_intra_op_parallelism_threads(o.threads);
  session_options.config.set_allow_soft_placement(o.device == "gpu");
  ClientSession session(root, session_options);
  if (o.device == "gpu") {
    TG_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, session.session()->ListDevices());
    if (std::none_of(devices.begin(), devices.end(),
                     [](const DeviceInfo& d) { return d.type == "GPU"; })) {
      return errors::FailedPrecondition(
          "--device=gpu: no GPU here (CUDA sees none, or this build has no CUDA; docs/gpu.md)");
    }
  }
  TG_ASSIGN_OR_RETURN(int64_t step, RestoreOrInitialize(session, saver, m, o));
  std::unique_ptr<training::SummaryWriter> summaries;
  if (!o.logdir.empty()) {
    TG_ASSIGN_OR_RETURN(summaries, training::SummaryWriter::Create(o.logdir));
    GraphDef graph;
    TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
    TG_RETURN_IF_ERROR(summaries->AddGraph(graph));
  }
  TG_RETURN_IF_ERROR(Train(session, saver, m, o, train, step, summaries.get()));
  TG_ASSIGN_OR_RETURN(double accuracy, fashion_mnist::TestAccuracy(session, m.net, test));
  if (!o.export_dir.empty()) TG_RETURN_IF_ERROR(Export(session, root, saver, m, o.export_dir));
  std::printf("test_accuracy=%.4f\n", accuracy);
  if (summaries == nullptr) return absl::OkStatus();
  TG_RETURN_IF_ERROR(summaries->AddScalar("test_accuracy", accuracy, std::max(step, o.steps)));
  return summaries->Close();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const std::vector<Flag> flag_list = {
      Flag("steps", &o.steps, "train until the global step is this"),
      Flag("batch_size", &o.batch_size, "examples per step"),
      Flag("learning_rate", &o.learning_rate, "Adam's learning rate"),
      Flag("checkpoint_dir", &o.checkpoint_dir,
           "restore the latest checkpoint here if there is one; save every\n"
           "--save_every steps and at the end (empty: no checkpoints)"),
      Flag("save_every", &o.save_every, "steps between checkpoints"),
      Flag("logdir", &o.logdir,
           "write TensorBoard event files here: the graph, loss and accuracy\n"
           "every --log_every steps, test_accuracy (empty: none)"),
      Flag("log_every", &o.log_every, "steps between progress reports"),
      Flag("export_dir", &o.export_dir,
           "export the trained model here as a SavedModel (a new directory;\n"
           "docs/saved_model.md)"),
      Flag("data_dir", &o.data_dir, "the Fashion-MNIST files"),
      Flag("seed", &o.seed, "seed of the initial weights and the shuffle"),
      Flag("threads", &o.threads, "threads per kernel (0: one per core)"),
      Flag("device", &o.device, "cpu, or gpu: the model on /device:GPU:0 (docs/gpu.md)"),
  };
  const std::string usage = Flags::Usage(
      "fashion_mnist [--steps=N] [--batch_size=N] [--learning_rate=X] [--checkpoint_dir=DIR]",
      flag_list);
  bool help = false;
  absl::Status flags = Flags::Parse(&argc, argv, flag_list, &help);
  if (flags.ok() && !help) flags = CheckFlags(o, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "fashion_mnist: %s\n\n%s", std::string(flags.message()).c_str(),
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
