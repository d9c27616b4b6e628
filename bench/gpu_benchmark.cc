// GPU figures against their physical peers, in one binary and one run
// (docs/gpu.md, docs/PERFORMANCE.md; run on a GPU machine by
// scripts/gpu_check.sh). Without a GPU it says so and exits 0.
//
//  1. MatMul n×n fp32, n = 1024 and 4096: a tensorgrid step (a callable whose
//     target is MatMul of two resource variables on /device:GPU:0; the step
//     ends when the GPU has finished) against cublasSgemm called directly,
//     each iteration followed by a stream synchronization, same sizes, same
//     math mode. TFLOP/s = 2n³ / time per step.
//  2. One training step of the 784-500-500-10 MLP with Adam
//     (examples/fashion_mnist_model: the Fashion-MNIST examples' network),
//     batch 32 and 256, every node on /device:GPU:0, the batch fed from host
//     memory each step; bench/gpu_mlp_torch.py times PyTorch's eager step on
//     the same GPU (run beside this by scripts/gpu_run.sh).
//  3. 64 MiB host→device and device→host through the GPU device's
//     DeviceContext from/to pinned host tensors, against cudaMemcpy between
//     cudaHostAlloc'ed memory and cudaMalloc'ed memory. GB/s.
//
//   va ─ ReadVariableOp ─┐
//                        MatMul (target)        all on /device:GPU:0
//   vb ─ ReadVariableOp ─┘
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/device_context.h"
#include "core/framework/device_factory.h"
#include "core/public/session.h"
#include "devices/gpu/gpu_device.h"
#include "examples/fashion_mnist_model.h"
#ifdef TG_HAVE_CUDNN
#include "kernels/gpu/cudnn_conv.h"
#endif

namespace tensorgrid {
namespace {

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}
void CheckCuda(cudaError_t e, const char* what) { Check(CudaStatus(e, what), what); }

// Seconds per call of `step`, after warm-up, over at least `min_seconds`.
double SecondsPer(const std::function<void()>& step, double min_seconds = 1.0) {
  for (int i = 0; i < 3; ++i) step();
  int64_t iters = 0;
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    step();
    ++iters;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < min_seconds);
  return elapsed / static_cast<double>(iters);
}

NodeDef Node(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  n.set_device("/device:GPU:0");
  for (auto& i : inputs) n.add_input(i);
  return n;
}

GraphDef MatMulGraph(int64_t n) {
  GraphDef g;
  for (const char* v : {"a", "b"}) {
    NodeDef handle = Node(std::string("v") + v, "VarHandleOp", {});
    SetAttr(&handle, "dtype", DT_FLOAT);
    SetAttr(&handle, "shape", PartialTensorShape({n, n}));
    SetAttr(&handle, "shared_name", std::string("v") + v);
    *g.add_node() = handle;
    NodeDef feed = Node(std::string("init_") + v, "Placeholder", {});
    feed.set_device("/device:CPU:0");
    SetAttr(&feed, "dtype", DT_FLOAT);
    *g.add_node() = feed;
    NodeDef assign = Node(std::string("assign_") + v, "AssignVariableOp",
                          {std::string("v") + v, std::string("init_") + v});
    SetAttr(&assign, "dtype", DT_FLOAT);
    *g.add_node() = assign;
    NodeDef read = Node(std::string("read_") + v, "ReadVariableOp", {std::string("v") + v});
    SetAttr(&read, "dtype", DT_FLOAT);
    *g.add_node() = read;
  }
  NodeDef m = Node("m", "MatMul", {"read_a", "read_b"});
  SetAttr(&m, "T", DT_FLOAT);
  *g.add_node() = m;
  return g;
}

Tensor Filled(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  float* p = t.data<float>();
  for (int64_t i = 0; i < n * n; ++i) p[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
  return t;
}

// Where a traced step's host time went: its span from the first node's
// start to the last one's end, the time the kernels held a host thread (for
// GPU kernels, mostly launching them), and the op types that held it
// longest. For finding what to cut from a step bound by the host.
void PrintHostTime(const RunMetadata& meta, const std::string& what) {
  struct Spent {
    int64_t nanos = 0;
    int nodes = 0;
  };
  std::map<std::string, Spent> by_op;
  int64_t first = INT64_MAX, last = INT64_MIN, held = 0;
  int nodes = 0;
  for (const auto& dev : meta.step_stats().dev_stats()) {
    for (const auto& n : dev.node_stats()) {
      first = std::min(first, n.all_start_nanos());
      last = std::max(last, n.all_start_nanos() + n.all_end_rel_nanos());
      const int64_t spent = n.op_end_rel_nanos() - n.op_start_rel_nanos();
      // "name = Op" or "name = Op(...)": the op's type.
      std::string op = n.timeline_label();
      if (size_t eq = op.find(" = "); eq != std::string::npos) op = op.substr(eq + 3);
      op = op.substr(0, op.find_first_of("( "));
      by_op[op].nanos += spent;
      ++by_op[op].nodes;
      held += spent;
      ++nodes;
    }
  }
  if (nodes == 0) return;
  std::vector<std::pair<std::string, Spent>> top(by_op.begin(), by_op.end());
  std::sort(top.begin(), top.end(),
            [](const auto& a, const auto& b) { return a.second.nanos > b.second.nanos; });
  std::printf("  %s: the traced step spans %.0f us; its %d nodes held host threads %.0f us:",
              what.c_str(), (last - first) / 1e3, nodes, held / 1e3);
  for (size_t i = 0; i < top.size() && i < 8; ++i) {
    std::printf(" %s x%d %.0f us;", top[i].first.c_str(), top[i].second.nodes,
                top[i].second.nanos / 1e3);
  }
  std::printf("\n");
}

void MatMulRow(int64_t n) {
  auto created = NewSession(SessionOptions());
  Check(created.status(), "NewSession");
  std::unique_ptr<Session> session = std::move(created).value();
  Check(session->Create(MatMulGraph(n)), "Create");
  std::vector<Tensor> out;
  Check(session->Run({{"init_a", Filled(n)}, {"init_b", Filled(n)}}, {}, {"assign_a", "assign_b"},
                     &out),
        "initializing the variables");
  // Seconds per step of a callable whose target is `target`.
  auto step_seconds = [&](const std::string& target) {
    CallableOptions callable;
    callable.add_target(target);
    auto handle = session->MakeCallable(callable);
    Check(handle.status(), "MakeCallable");
    return SecondsPer([&] { Check(session->RunCallable(*handle, {}, &out, nullptr), "step"); });
  };
  const double tg = step_seconds("m");
  // What the step costs besides the product: one that only reads a
  // variable, and where a traced MatMul step's host time goes.
  const double read_step = step_seconds("read_a");
  RunOptions trace;
  trace.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata meta;
  Check(session->Run(trace, {}, {}, {"m"}, &out, &meta), "traced step");
  std::printf("  MatMul %lld: a step that only reads a variable takes %.1f us\n",
              static_cast<long long>(n), read_step * 1e6);
  PrintHostTime(meta, absl::StrCat("MatMul ", n));

  // The peer: cuBLAS on its own stream and handle, same math mode.
  cudaStream_t stream;
  CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cublasHandle_t blas;
  Check(CublasStatus(cublasCreate(&blas), "cublasCreate"), "cublasCreate");
  cublasSetStream(blas, stream);
  cublasSetMathMode(blas, GpuTf32Allowed() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
  float *a, *b, *c;
  const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  CheckCuda(cudaMalloc(&a, bytes), "cudaMalloc");
  CheckCuda(cudaMalloc(&b, bytes), "cudaMalloc");
  CheckCuda(cudaMalloc(&c, bytes), "cudaMalloc");
  Tensor host = Filled(n);
  CheckCuda(cudaMemcpy(a, host.raw_data(), bytes, cudaMemcpyHostToDevice), "copy");
  CheckCuda(cudaMemcpy(b, host.raw_data(), bytes, cudaMemcpyHostToDevice), "copy");
  const float one = 1, zero = 0;
  const int ni = static_cast<int>(n);
  const double peer = SecondsPer([&] {
    cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, b, ni, a, ni, &zero, c, ni);
    CheckCuda(cudaStreamSynchronize(stream), "sync");
  });
  const double flop = 2.0 * static_cast<double>(n) * n * n;
  std::printf(
      "| MatMul %lldx%lld fp32 | %.1f TFLOP/s (%.1f us/step) | %.1f TFLOP/s (%.1f us) | %.2fx |\n",
      static_cast<long long>(n), static_cast<long long>(n), flop / tg / 1e12, tg * 1e6,
      flop / peer / 1e12, peer * 1e6, peer / tg);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cublasDestroy(blas);
  cudaStreamDestroy(stream);
}

absl::StatusOr<double> MlpStepSeconds(const std::string& device, int64_t batch) {
  Scope root = Scope::NewRootScope();
  Scope scope = root.WithDevice(device);
  fashion_mnist::Classifier net = fashion_mnist::BuildClassifier(scope, /*seed=*/1);
  training::AdamOptimizer adam(1e-4);
  TG_ASSIGN_OR_RETURN(Operation train, adam.Minimize(scope, net.loss));
  Operation init = training::GlobalVariablesInitializer(scope);
  TG_RETURN_IF_ERROR(root.status());
  // Ops without a GPU kernel (BroadcastGradientArgs: shapes) go to the CPU.
  SessionOptions options;
  options.config.set_allow_soft_placement(true);
  ClientSession session(root, options);
  TG_RETURN_IF_ERROR(session.Run({}, {}, {init}, nullptr));
  Tensor images(DT_FLOAT, TensorShape({batch, 784}));
  Tensor labels(DT_INT64, TensorShape({batch}));
  for (int64_t i = 0; i < images.NumElements(); ++i) images.data<float>()[i] = (i % 255) / 255.f;
  for (int64_t i = 0; i < batch; ++i) labels.data<int64_t>()[i] = i % 10;
  CallableOptions callable;
  callable.add_feed(net.images.name());
  callable.add_feed(net.labels.name());
  callable.add_target(train.name());
  TG_ASSIGN_OR_RETURN(auto handle, session.MakeCallable(callable));
  std::vector<Tensor> out;
  absl::Status status;
  const double t = SecondsPer([&] {
    if (status.ok()) status = session.RunCallable(handle, {images, labels}, &out, nullptr);
  });
  TG_RETURN_IF_ERROR(status);
  // The loss after training is finite (the step really ran on the device),
  // and where the step's nodes ran.
  RunOptions trace;
  trace.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata meta;
  TG_RETURN_IF_ERROR(session.Run(trace, {{net.images, images}, {net.labels, labels}}, {net.loss},
                                 {train}, &out, &meta));
  if (!std::isfinite(out[0].scalar<float>())) return errors::Internal("loss is not finite");
  for (const auto& dev : meta.step_stats().dev_stats()) {
    std::printf("  batch %lld: %d nodes on %s\n", static_cast<long long>(batch),
                dev.node_stats_size(), dev.device().c_str());
  }
  PrintHostTime(meta, absl::StrCat("MLP batch ", batch));
  return t;
}

void MlpRows() {
  for (int64_t batch : {32, 256}) {
    auto gpu = MlpStepSeconds("/device:GPU:0", batch);
    if (!gpu.ok()) {
      std::printf("| MLP 784-500-500-10 Adam, batch %lld | failed: %s | | |\n",
                  static_cast<long long>(batch), gpu.status().ToString().c_str());
      continue;
    }
    std::printf("| MLP 784-500-500-10 Adam step, batch %lld | %.3f ms | see gpu_mlp_torch.py | |\n",
                static_cast<long long>(batch), *gpu * 1e3);
  }
}

void CopyRows() {
  std::vector<std::unique_ptr<Device>> devices;
  Check(DeviceFactories().at(DEVICE_GPU)(ConfigProto(), "/job:bench/replica:0/task:0", &devices),
        "making the GPU device");
  auto* gpu = static_cast<GpuDevice*>(devices[0].get());
  const int64_t n = (int64_t{64} << 20) / 4;
  auto pinned = Tensor::Allocate(gpu->pinned_allocator(), DT_FLOAT, TensorShape({n}));
  Check(pinned.status(), "pinned");
  std::memset(pinned->raw_data(), 1, pinned->TotalBytes());
  auto dev = Tensor::Allocate(gpu->GetAllocator(DEVICE_MEMORY), DT_FLOAT, TensorShape({n}));
  Check(dev.status(), "device tensor");
  DeviceContext* ctx = gpu->device_context();
  const double bytes = static_cast<double>(pinned->TotalBytes());
  const double h2d = SecondsPer([&] {
    Check(ctx->CopyCPUTensorToDevice(*pinned, &*dev), "h2d");
    Check(ctx->Sync(), "sync");
  });
  const double d2h = SecondsPer([&] { Check(ctx->CopyDeviceTensorToCPU(*dev, &*pinned), "d2h"); });
  void *host, *device;
  CheckCuda(cudaHostAlloc(&host, pinned->TotalBytes(), cudaHostAllocDefault), "cudaHostAlloc");
  CheckCuda(cudaMalloc(&device, pinned->TotalBytes()), "cudaMalloc");
  std::memset(host, 1, pinned->TotalBytes());
  const double peer_h2d = SecondsPer([&] {
    CheckCuda(cudaMemcpy(device, host, pinned->TotalBytes(), cudaMemcpyHostToDevice), "memcpy");
  });
  const double peer_d2h = SecondsPer([&] {
    CheckCuda(cudaMemcpy(host, device, pinned->TotalBytes(), cudaMemcpyDeviceToHost), "memcpy");
  });
  std::printf("| 64 MiB host->device | %.1f GB/s | %.1f GB/s | %.2fx |\n", bytes / h2d / 1e9,
              bytes / peer_h2d / 1e9, peer_h2d / h2d);
  std::printf("| 64 MiB device->host | %.1f GB/s | %.1f GB/s | %.2fx |\n", bytes / d2h / 1e9,
              bytes / peer_d2h / 1e9, peer_d2h / d2h);
  cudaFreeHost(host);
  cudaFree(device);
}

// The convolution layers of bench/conv_benchmark.cc (batch 32, NHWC) and
// the 3×3 64→64 layer on 56×56; gpu_conv_torch.py times PyTorch's
// cuDNN convolutions (channels_last) at the same layers, in the same math.
struct ConvLayer {
  const char* name;
  int64_t size, in_depth, out_depth, window, stride;  // out_depth: the multiplier if depthwise
  bool depthwise;
};
constexpr ConvLayer kConvLayers[] = {
    {"conv3x3_s1 56x56x64->64", 56, 64, 64, 3, 1, false},
    {"conv3x3_s1 28x28x64->64", 28, 64, 64, 3, 1, false},
    {"conv3x3_s2 56x56x32->64", 56, 32, 64, 3, 2, false},
    {"pointwise1x1 28x28x144->32", 28, 144, 32, 1, 1, false},
    {"depthwise3x3 56x56x144", 56, 144, 1, 3, 1, true},
};

// An int32 vector of sizes (a shape or sizes input, in host memory).
Tensor Sizes(const std::vector<int64_t>& dims) {
  Tensor t(DT_INT32, TensorShape({static_cast<int64_t>(dims.size())}));
  for (size_t i = 0; i < dims.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
  return t;
}

void ConvRows() {
  constexpr int64_t kBatch = 32;
  for (const ConvLayer& l : kConvLayers) {
    Scope root = Scope::NewRootScope();
    const Scope gpu = root.WithDevice("/device:GPU:0");
    const int64_t out_size = (l.size + l.stride - 1) / l.stride;  // SAME
    const int64_t out_depth = l.depthwise ? l.in_depth * l.out_depth : l.out_depth;
    const std::vector<int64_t> x_dims = {kBatch, l.size, l.size, l.in_depth};
    const std::vector<int64_t> w_dims = {l.window, l.window, l.in_depth, l.out_depth};
    const std::vector<int64_t> dy_dims = {kBatch, out_size, out_size, out_depth};
    // Three variables on the GPU, filled with uniform values at the start.
    std::vector<Output> values;
    std::vector<Operation> inits;
    for (const std::vector<int64_t>& dims : {x_dims, w_dims, dy_dims}) {
      auto v = ops::Variable(gpu, PartialTensorShape(dims), DT_FLOAT);
      inits.push_back(
          ops::Assign(gpu, v, ops::RandomUniform(gpu, ops::Const(root, Sizes(dims)), DT_FLOAT))
              .operation);
      values.push_back(v);
    }
    const std::vector<int64_t> strides = {1, l.stride, l.stride, 1};
    Output forward, backprop_input, backprop_filter;
    if (l.depthwise) {
      forward = ops::DepthwiseConv2dNative(gpu, values[0], values[1], strides, "SAME");
      backprop_input = ops::DepthwiseConv2dNativeBackpropInput(
          gpu, ops::Const(root, Sizes(x_dims)), values[1], values[2], strides, "SAME");
      backprop_filter = ops::DepthwiseConv2dNativeBackpropFilter(
          gpu, values[0], ops::Const(root, Sizes(w_dims)), values[2], strides, "SAME");
    } else {
      forward = ops::Conv2D(gpu, values[0], values[1], strides, "SAME");
      backprop_input = ops::Conv2DBackpropInput(gpu, ops::Const(root, Sizes(x_dims)), values[1],
                                                values[2], strides, "SAME");
      backprop_filter = ops::Conv2DBackpropFilter(gpu, values[0], ops::Const(root, Sizes(w_dims)),
                                                  values[2], strides, "SAME");
    }
    Check(root.status(), "building the convolutions");
    ClientSession session(root);
    Check(session.Run({}, {}, inits, nullptr), "initializing the convolution's variables");
    const double flop = 2.0 * kBatch * out_size * out_size * out_depth * l.window * l.window *
                        (l.depthwise ? 1 : l.in_depth);
    const std::pair<const char*, Output> passes[] = {{"forward", forward},
                                                     {"backprop_input", backprop_input},
                                                     {"backprop_filter", backprop_filter}};
    for (const auto& [pass, target] : passes) {
      const double seconds = SecondsPer(
          [&] { Check(session.Run({}, {}, {target.op()}, nullptr), "a convolution step"); });
      std::printf("| %s %s, batch 32 | %.3f ms (%.1f TFLOP/s) | see gpu_conv_torch.py | |\n",
                  l.name, pass, seconds * 1e3, flop / seconds / 1e12);
      // What of the step is host work around the convolution.
      RunOptions trace;
      trace.set_trace_level(RunOptions::FULL_TRACE);
      RunMetadata meta;
      Check(session.Run(trace, {}, {}, {target.op()}, nullptr, &meta), "a traced convolution step");
      PrintHostTime(meta, absl::StrCat(l.name, " ", pass));
    }
  }
#ifdef TG_HAVE_CUDNN
  // Which of cuDNN's APIs ran them (TG_CUDNN_LEGACY_API=1: the legacy one).
  const gpu::CudnnConvApiCounts apis = gpu::CudnnConvApis();
  std::printf(
      "\ncuDNN convolutions planned: %lld with the graph API (%lld of them with asymmetric "
      "padding as it is), %lld with the legacy API%s%s\n",
      static_cast<long long>(apis.graph), static_cast<long long>(apis.graph_asymmetric),
      static_cast<long long>(apis.legacy), apis.legacy > 0 ? "; the last because: " : "",
      apis.last_legacy_reason.c_str());
#endif
}

}  // namespace
}  // namespace tensorgrid

// With --conv_only, the convolution rows alone (gpu_run.sh runs them again
// on cuDNN's legacy API, to compare in the same run).
int main(int argc, char** argv) {
  using namespace tensorgrid;
  const bool conv_only = argc > 1 && std::strcmp(argv[1], "--conv_only") == 0;
  if (VisibleGpuCount() == 0) {
    std::printf("gpu_benchmark: skipped: no GPU (cudaGetDeviceCount found none)\n");
    return 0;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("GPU: %s; TG_GPU_ALLOW_TF32=%s\n\n", prop.name,
              std::getenv("TG_GPU_ALLOW_TF32") ? std::getenv("TG_GPU_ALLOW_TF32") : "unset");
  std::printf("| what | tensorgrid | peer (cuBLAS / cudaMemcpy) | ratio |\n|---|---|---|---|\n");
  if (!conv_only) {
    MatMulRow(1024);
    MatMulRow(4096);
    CopyRows();
    MlpRows();
  }
  ConvRows();
  return 0;
}
