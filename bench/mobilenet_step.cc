// One training step of examples/models' MobileNetV2 (forward, backward, Adam,
// the moving statistics' update) through a ClientSession, the images fed
// each step; the peer is bench/mobilenet_torch.py on the same network,
// batch and thread count (bench/run_mobilenet.sh runs both). Prints
// "tensorgrid_ms_per_step=12.34", the median of --steps steps after three
// warm-up steps. --device=gpu puts the network on /device:GPU:0 (ops with
// no GPU kernel on the CPU, soft placement), against mobilenet_torch.py
// --device=cuda.
//
//   mobilenet_step --threads=2 --batch=64 --alpha=1.0 --stages=7 [--device=gpu]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/util/command_line_flags.h"
#include "examples/models/mobilenet_v2.h"

using namespace tensorgrid;  // NOLINT: a benchmark

namespace {

struct Options {
  int64_t threads = 2, batch = 64, stages = 7, first_stride = 1, size = 28, channels = 1;
  int64_t steps = 20;
  int64_t inter_op_threads = 0;  // 0: --threads
  double alpha = 1.0;
  std::string device = "cpu";  // cpu | gpu
};

absl::Status Main(const Options& o) {
  if (o.device != "cpu" && o.device != "gpu") {
    return errors::InvalidArgument("--device=", o.device, ": cpu or gpu");
  }
  Scope top = Scope::NewRootScope();
  const Scope root = o.device == "gpu" ? top.WithDevice("/device:GPU:0") : top;
  models::MobileNetV2Options net_options;
  net_options.alpha = o.alpha;
  net_options.input_channels = o.channels;
  net_options.first_stride = static_cast<int>(o.first_stride);
  if (o.stages < 1 || o.stages > 7) return errors::InvalidArgument("--stages not in 1..7");
  net_options.stages.resize(o.stages);
  const models::MobileNetV2 net(root, net_options);
  auto images = ops::Placeholder(root, DT_FLOAT);
  auto labels = ops::Placeholder(root, DT_INT64);
  models::MobileNetV2::Forward forward = net.Apply(root, images, /*training=*/true);
  Operation update = models::UpdateMovingStatistics(root, forward.moving_updates);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, forward.logits, labels);
  Output loss = ops::Mean(root, xent.loss, {0});
  training::AdamOptimizer adam(1e-3);
  TG_ASSIGN_OR_RETURN(Operation train, adam.Minimize(root, loss, net.trainable_variables()));
  TG_RETURN_IF_ERROR(top.status());
  SessionOptions options;
  options.config.set_allow_soft_placement(o.device == "gpu");
  options.config.set_intra_op_parallelism_threads(static_cast<int>(o.threads));
  options.config.set_inter_op_parallelism_threads(
      static_cast<int>(o.inter_op_threads > 0 ? o.inter_op_threads : o.threads));
  ClientSession session(top, options);
  if (o.device == "gpu") {
    TG_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, session.session()->ListDevices());
    if (std::none_of(devices.begin(), devices.end(),
                     [](const DeviceInfo& d) { return d.type == "GPU"; })) {
      return errors::FailedPrecondition("--device=gpu: no GPU here (docs/gpu.md)");
    }
  }
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(session.Run({}, {}, {training::GlobalVariablesInitializer(root)}, &out));

  Tensor x(DT_FLOAT, TensorShape({o.batch, o.size, o.size, o.channels}));
  Tensor y(DT_INT64, TensorShape({o.batch}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = (i * 7919 % 1000) / 1000.0f;
  for (int64_t i = 0; i < o.batch; ++i) y.data<int64_t>()[i] = i % 10;
  std::vector<double> ms;
  for (int64_t step = 0; step < o.steps + 3; ++step) {
    const auto start = std::chrono::steady_clock::now();
    TG_RETURN_IF_ERROR(session.Run({{images, x}, {labels, y}}, {loss}, {train, update}, &out));
    const double elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (step >= 3) ms.push_back(elapsed);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("tensorgrid_ms_per_step=%.2f\n", ms[ms.size() / 2]);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const std::vector<Flag> flag_list = {
      Flag("threads", &o.threads, "intra-op (and inter-op) threads"),
      Flag("inter_op_threads", &o.inter_op_threads, "inter-op threads, if not --threads"),
      Flag("batch", &o.batch, "images per step"),
      Flag("alpha", &o.alpha, "width multiplier"),
      Flag("stages", &o.stages, "how many of the paper's 7 stages"),
      Flag("first_stride", &o.first_stride, "the first convolution's stride"),
      Flag("size", &o.size, "image rows and columns"),
      Flag("channels", &o.channels, "image channels"),
      Flag("steps", &o.steps, "timed steps"),
      Flag("device", &o.device, "cpu, or gpu: the network on /device:GPU:0"),
  };
  bool help = false;
  absl::Status flags = Flags::Parse(&argc, argv, flag_list, &help);
  if (!flags.ok() || help || argc > 1 || o.steps < 1 || o.batch < 1 || o.threads < 1) {
    std::fprintf(stderr, "%s%s", flags.ok() ? "" : (flags.ToString() + "\n").c_str(),
                 Flags::Usage("mobilenet_step [flags]", flag_list).c_str());
    return help ? 0 : 2;
  }
  const absl::Status s = Main(o);
  if (!s.ok()) std::fprintf(stderr, "mobilenet_step: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : 1;
}
