// Conv2D forward and both backprops (and DepthwiseConv2dNative's), batch 32,
// at four MobileNetV2-like layers sized so a 2-core machine runs each in
// milliseconds. The kernel is called directly on a CPU device with 1 or 2
// intra-op threads (no graph: the executor's cost is in executor_benchmark).
//
//   input (NHWC or NCHW) --.
//                          Conv2D / BackpropInput / BackpropFilter -> output
//   filter ----------------'
//
// Arguments: layer (index into kLayers), pass (0 forward, 1 backprop input,
// 2 backprop filter), format (0 NHWC, 1 NCHW), threads. The counter FLOPS is
// 2 * multiply-adds per iteration over wall time. bench/run_conv.sh runs this
// beside bench/conv_torch.py (the same layers in PyTorch).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/framework/cancellation.h"
#include "core/framework/device.h"
#include "core/framework/op_def.h"
#include "core/framework/op_kernel.h"

namespace tensorgrid {
namespace {

constexpr int64_t kBatch = 32;

struct Layer {
  const char* name;
  int64_t size, in_depth, out_depth, window, stride;  // square images and windows
  bool depthwise;                                     // out_depth: the multiplier
};

// The same four layers as bench/conv_torch.py; SAME padding.
constexpr Layer kLayers[] = {
    {"conv3x3_s1 28x28x64->64", 28, 64, 64, 3, 1, false},
    {"conv3x3_s2 56x56x32->64", 56, 32, 64, 3, 2, false},
    {"pointwise1x1 28x28x144->32", 28, 144, 32, 1, 1, false},
    {"depthwise3x3 56x56x144", 56, 144, 1, 3, 1, true},
};

void CheckOk(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "setup failed: %s\n", s.ToString().c_str());
    std::abort();
  }
}

Tensor Filled(const std::vector<int64_t>& dims) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.NumElements(); ++i) p[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
  return t;
}

Tensor Sizes(const std::vector<int64_t>& dims) {
  std::vector<int32_t> v(dims.begin(), dims.end());
  return Tensor::FromVector<int32_t>(v, TensorShape({4}));
}

// One kernel on its own device with its inputs, run again and again.
class KernelRun {
 public:
  KernelRun(const Layer& layer, int pass, bool nchw, int threads)
      : device_(NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", threads)) {
    const int64_t out_size = (layer.size + layer.stride - 1) / layer.stride;
    const int64_t out_depth = layer.depthwise ? layer.in_depth * layer.out_depth : layer.out_depth;
    auto image = [&](int64_t s, int64_t d) {
      return nchw ? std::vector<int64_t>{kBatch, d, s, s} : std::vector<int64_t>{kBatch, s, s, d};
    };
    const std::vector<int64_t> input = image(layer.size, layer.in_depth);
    const std::vector<int64_t> output = image(out_size, out_depth);
    const std::vector<int64_t> filter = {layer.window, layer.window, layer.in_depth,
                                         layer.out_depth};
    flops_ = 2.0 * kBatch * out_size * out_size * out_depth * layer.window * layer.window *
             (layer.depthwise ? 1 : layer.in_depth);
    std::string op = layer.depthwise ? "DepthwiseConv2dNative" : "Conv2D";
    if (pass == 0) inputs_ = {{Filled(input), nullptr}, {Filled(filter), nullptr}};
    if (pass == 1) {
      op += "BackpropInput";
      inputs_ = {{Sizes(input), nullptr}, {Filled(filter), nullptr}, {Filled(output), nullptr}};
    }
    if (pass == 2) {
      op += "BackpropFilter";
      inputs_ = {{Filled(input), nullptr}, {Sizes(filter), nullptr}, {Filled(output), nullptr}};
    }
    MakeKernel(op, layer.stride, nchw);
  }

  void Run() {
    OpKernelContext::Params params;
    params.device = device_.get();
    params.kernel = kernel_.get();
    params.inputs = inputs_.data();
    params.call_frame = &frame_;
    params.cancellation = &cancellation_;
    OpKernelContext ctx(params);
    CheckOk(kernel_->Compute(ctx));
  }
  double flops() const { return flops_; }

 private:
  void MakeKernel(const std::string& op_name, int64_t stride, bool nchw) {
    def_.set_name("conv");
    def_.set_op(op_name);
    for (size_t i = 0; i < inputs_.size(); ++i) def_.add_input("in" + std::to_string(i));
    SetAttr(&def_, "T", DT_FLOAT);
    SetAttr(&def_, "padding", "SAME");
    SetAttr(&def_, "data_format", nchw ? "NCHW" : "NHWC");
    SetAttr(&def_, "strides", nchw ? std::vector<int64_t>{1, 1, stride, stride}
                                   : std::vector<int64_t>{1, stride, stride, 1});
    const OpDef* op = OpRegistry::Global()->Find(op_name);
    CheckOk(ValidateNodeDef(*op, &def_));
    auto kernel = KernelRegistry::Global()->CreateKernel(device_.get(), def_, *op);
    CheckOk(kernel.status());
    kernel_ = std::move(*kernel);
  }

  std::unique_ptr<Device> device_;
  NodeDef def_;
  std::unique_ptr<OpKernel> kernel_;
  std::vector<TensorValue> inputs_;
  CallFrame frame_;
  CancellationManager cancellation_;
  double flops_ = 0;
};

void BM_Conv(benchmark::State& state) {
  const Layer& layer = kLayers[state.range(0)];
  const int pass = static_cast<int>(state.range(1));
  const bool nchw = state.range(2) == 1;
  KernelRun run(layer, pass, nchw, static_cast<int>(state.range(3)));
  run.Run();  // builds and caches the primitive
  for (auto _ : state) run.Run();
  static const char* kPasses[] = {"forward", "backprop_input", "backprop_filter"};
  state.SetLabel(std::string(layer.name) + " " + kPasses[pass] + (nchw ? " NCHW" : " NHWC"));
  state.counters["FLOPS"] = benchmark::Counter(
      run.flops(), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::OneK::kIs1000);
}

void Args(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int layer = 0; layer < 4; ++layer)
      for (int pass = 0; pass < 3; ++pass)
        for (int format = 0; format < 2; ++format) b->Args({layer, pass, format, threads});
}
BENCHMARK(BM_Conv)->Apply(Args)->ArgNames({"layer", "pass", "nchw", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tensorgrid

BENCHMARK_MAIN();
