// Models trained for a few steps in a session pinned to /device:GPU:0
// against the same model in a session on the CPU: both start from the same
// weights (the CPU's, assigned into the GPU's variables) and see the same
// batches, so their losses must agree step by step, and the step's compute
// nodes must run on the GPU (from the step stats). The Fashion-MNIST MLP
// (784-500-500-10, ReLU, sparse softmax cross-entropy, Adam), and a small
// MobileNetV2 (convolutions, depthwise convolutions, batch norm, ReLU6).
// Skips with "no GPU" where CUDA sees none.
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status_testutil.h"
#include "devices/gpu/gpu_device.h"
#include "examples/fashion_mnist_model.h"
#include "examples/models/mobilenet_v2.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

constexpr int64_t kBatch = 32;
constexpr int kSteps = 5;

using BuildModel = std::function<fashion_mnist::Classifier(const Scope&)>;

fashion_mnist::Classifier Mlp(const Scope& s) { return fashion_mnist::BuildClassifier(s, 7); }

// MobileNetV2 for 16×16 Fashion-MNIST-like images, a third of the width and
// three stages (strides 1, 2, 2), trained with batch statistics.
fashion_mnist::Classifier MobileNet(const Scope& s) {
  models::MobileNetV2Options o;
  o.input_channels = 1;
  o.first_stride = 1;
  o.alpha = 0.35;
  o.stages = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 1, 2}};
  o.last_channels = 64;
  o.seed = 7;
  models::MobileNetV2 net(s, o);
  fashion_mnist::Classifier c;
  c.images = ops::Placeholder(s, DT_FLOAT);
  c.labels = ops::Placeholder(s, DT_INT64);
  c.logits = net.Apply(s, c.images, /*training=*/true).logits;
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, c.logits, c.labels);
  c.loss = ops::Mean(s, xent.loss, {0});
  auto hits = ops::Equal(s, ops::ArgMax(s, c.logits, 1), c.labels);
  c.correct = ops::Sum(s, ops::Cast(s, hits, DT_FLOAT), {0});
  return c;
}

// One copy of the model on one device, with a way to set its weights.
struct Trainer {
  Trainer(const std::string& device, const BuildModel& build) : root(Scope::NewRootScope()) {
    const Scope s = root.WithDevice(device);
    net = build(s);
    training::Variable step = training::GetOrCreateGlobalStep(s);
    training::AdamOptimizer adam(1e-3);
    absl::StatusOr<Operation> minimize = adam.Minimize(s, net.loss, {}, step);
    EXPECT_TRUE(minimize.ok()) << minimize.status();
    if (minimize.ok()) train = *minimize;
    init = training::GlobalVariablesInitializer(s);
    weights = training::TrainableVariables(s);
    for (const training::Variable& w : weights) {
      Output value = ops::Placeholder(s, DT_FLOAT);
      new_values.push_back(value);
      assigns.push_back(ops::Assign(s, w.handle(), value).operation);
    }
    EXPECT_TRUE(root.status().ok()) << root.status();
    SessionOptions options;
    options.config.set_allow_soft_placement(true);
    session = std::make_unique<ClientSession>(root, options);
  }

  Scope root;
  fashion_mnist::Classifier net;
  Operation train, init;
  std::vector<training::Variable> weights;
  std::vector<Output> new_values;
  std::vector<Operation> assigns;
  std::unique_ptr<ClientSession> session;
};

// Random images in [0, 1) of `image` shape and labels in [0, 10), the same
// for both devices.
std::vector<std::pair<Tensor, Tensor>> Batches(int n, const std::vector<int64_t>& image) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> pixel(0, 1);
  std::uniform_int_distribution<int64_t> label(0, 9);
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int b = 0; b < n; ++b) {
    std::vector<int64_t> dims = {kBatch};
    dims.insert(dims.end(), image.begin(), image.end());
    Tensor images(DT_FLOAT, TensorShape(dims));
    Tensor labels(DT_INT64, TensorShape({kBatch}));
    for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = pixel(rng);
    for (int64_t i = 0; i < kBatch; ++i) labels.data<int64_t>()[i] = label(rng);
    batches.emplace_back(images, labels);
  }
  return batches;
}

// Trains `build` on both devices with batches of `image`-shaped images and
// expects the same losses, and the `compute` ops of the step on the GPU.
void ExpectTrainsAsOnTheCpu(const BuildModel& build, const std::vector<int64_t>& image,
                            const std::set<std::string>& compute) {
  Trainer cpu("/device:CPU:0", build), gpu("/device:GPU:0", build);
  ASSERT_OK(cpu.session->Run({}, {}, {cpu.init}, nullptr));
  ASSERT_OK(gpu.session->Run({}, {}, {gpu.init}, nullptr));
  // The GPU model starts from the CPU model's weights.
  std::vector<Output> cpu_weights;
  for (const training::Variable& w : cpu.weights) cpu_weights.push_back(w.value());
  std::vector<Tensor> start;
  ASSERT_OK(cpu.session->Run(cpu_weights, &start));
  ASSERT_EQ(start.size(), gpu.new_values.size());
  ClientSession::FeedType feeds;
  for (size_t i = 0; i < start.size(); ++i) feeds.emplace(gpu.new_values[i], start[i]);
  ASSERT_OK(gpu.session->Run(feeds, {}, gpu.assigns, nullptr));

  std::set<std::string> on_gpu, elsewhere;
  for (const auto& [images, labels] : Batches(kSteps, image)) {
    std::vector<Tensor> cpu_out, gpu_out;
    ASSERT_OK(cpu.session->Run({{cpu.net.images, images}, {cpu.net.labels, labels}},
                               {cpu.net.loss, cpu.net.correct}, {cpu.train}, &cpu_out));
    RunOptions trace;
    trace.set_trace_level(RunOptions::FULL_TRACE);
    RunMetadata metadata;
    ASSERT_OK(gpu.session->Run(trace, {{gpu.net.images, images}, {gpu.net.labels, labels}},
                               {gpu.net.loss, gpu.net.correct}, {gpu.train}, &gpu_out, &metadata));
    const float cpu_loss = cpu_out[0].scalar<float>(), gpu_loss = gpu_out[0].scalar<float>();
    EXPECT_NEAR(cpu_loss, gpu_loss, 1e-3 * std::max(1.0f, std::fabs(cpu_loss)));
    // Correct counts: at most one near-tie of two logits may fall differently.
    EXPECT_NEAR(cpu_out[1].scalar<float>(), gpu_out[1].scalar<float>(), 1.0f);
    std::cout << "loss: CPU " << cpu_loss << ", GPU " << gpu_loss << "\n";
    for (const DeviceStepStats& dev : metadata.step_stats().dev_stats()) {
      const bool is_gpu = dev.device().find("GPU") != std::string::npos;
      for (const NodeExecStats& node : dev.node_stats()) {
        (is_gpu ? on_gpu : elsewhere).insert(node.node_name());
      }
    }
  }
  GraphDef graph;
  ASSERT_OK(gpu.root.ToGraphDef(&graph));
  std::map<std::string, std::string> op_of;
  for (const NodeDef& node : graph.node()) op_of[node.name()] = node.op();
  for (const std::string& name : elsewhere) {
    std::cout << "not on the GPU: " << name << " (" << op_of[name] << ")\n";
  }
  // The step's arithmetic, forward and backward, ran on the GPU.
  ASSERT_FALSE(on_gpu.empty()) << "no step stats from the GPU";
  for (const std::string& name : elsewhere) {
    const auto op = op_of.find(name);
    if (op == op_of.end() || !compute.count(op->second)) continue;
    ADD_FAILURE() << name << " (" << op->second << ") did not run on the GPU";
  }
}

bool NoGpu() {
  if (VisibleGpuCount() > 0) return false;
  std::cout << "skipped: no GPU: CUDA sees no device on this machine\n";
  return true;
}

TEST(GpuTrainingTest, MlpTrainsOnTheGpuAsOnTheCpu) {
  if (NoGpu()) GTEST_SKIP() << "no GPU: CUDA sees no device on this machine";
  ExpectTrainsAsOnTheCpu(
      Mlp, {784},
      {"MatMul", "BiasAdd", "Relu", "ReluGrad", "BiasAddGrad", "ApplyAdam", "Mean", "Sum", "ArgMax",
       "Equal", "RealDiv", "Mul", "SparseSoftmaxCrossEntropyWithLogits"});
}

TEST(GpuTrainingTest, MobileNetV2TrainsOnTheGpuAsOnTheCpu) {
  if (NoGpu()) GTEST_SKIP() << "no GPU: CUDA sees no device on this machine";
  ExpectTrainsAsOnTheCpu(
      MobileNet, {16, 16, 1},
      {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
       "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
       "FusedBatchNormV3", "FusedBatchNormGradV3", "Relu6", "Relu6Grad", "ApplyAdam", "MatMul"});
}

}  // namespace
}  // namespace tensorgrid
