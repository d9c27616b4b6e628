#include "kernels/gpu/cudnn_conv.h"

#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/tensor.h"
#include "core/platform/status.h"
#include "kernels/conv/bounded_cache.h"
#include "kernels/gpu/cudnn_graph.h"
#include "kernels/gpu/cwise_ops.cu.h"

// cuDNN 9 marks its convolution API of descriptors and cudnnFind*
// deprecated in favour of its graph API; this file runs a convolution that
// the graph API has no plan for (or all of them, with TG_CUDNN_LEGACY_API=1)
// through it.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tensorgrid {
namespace gpu {
namespace {

using conv::ConvPass;

// What the plans or cudnnFind*AlgorithmEx's algorithms timed for a
// convolution may use as workspace; less when the device has less free.
constexpr size_t kFindWorkspaceBytes = size_t{256} << 20;
// How often each of the graph API's plans for a convolution is timed
// (after one untimed run).
constexpr int kTimedRuns = 3;

bool LegacyApiOnly() {
  static const bool legacy = [] {
    const char* v = std::getenv("TG_CUDNN_LEGACY_API");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return legacy;
}

// A GPU's cuDNN handle and the lock its users hold.
struct Handle {
  absl::Mutex mu;
  cudnnHandle_t handle = nullptr;
};

absl::StatusOr<Handle*> HandleFor(int ordinal) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* handles = new absl::flat_hash_map<int, Handle*>;  // kept for the process
  absl::MutexLock lock(&mu);
  if (auto it = handles->find(ordinal); it != handles->end()) return it->second;
  // cudnnCreate binds the handle to the current device.
  int previous = 0;
  TG_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&previous), "cudaGetDevice"));
  TG_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ordinal), "cudaSetDevice"));
  cudnnHandle_t handle = nullptr;
  const cudnnStatus_t created = cudnnCreate(&handle);
  cudaSetDevice(previous);
  TG_RETURN_IF_ERROR(cudnn::StatusOf(created, absl::StrCat("cudnnCreate for GPU ", ordinal)));
  auto* h = new Handle;
  h->handle = handle;
  (*handles)[ordinal] = h;
  return h;
}

// The four descriptors of a convolution, destroyed with it.
struct Descriptors {
  cudnnTensorDescriptor_t input = nullptr, output = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  ~Descriptors() {
    if (input != nullptr) cudnnDestroyTensorDescriptor(input);
    if (output != nullptr) cudnnDestroyTensorDescriptor(output);
    if (filter != nullptr) cudnnDestroyFilterDescriptor(filter);
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
  }
};

// The convolution as cuDNN runs it: symmetric padding, the input grown by
// the rest of TensorFlow's padding (extra_*) when that is not symmetric.
struct Layout {
  bool nhwc = true;
  int64_t n = 0, c = 0, k = 0, groups = 1;
  int64_t in_h = 0, in_w = 0;  // the input as the op has it
  int64_t h = 0, w = 0;        // the input as cuDNN reads it
  int64_t extra_top = 0, extra_left = 0;
  int64_t r = 0, s = 0, pad_h = 0, pad_w = 0;
  int64_t out_h = 0, out_w = 0;

  bool padded() const { return h != in_h || w != in_w; }
  int64_t filter_elements() const { return k * (c / groups) * r * s; }
  // Floats per position of a row (NHWC: a pixel's channels) and planes of
  // rows (NHWC: images; NCHW: images × channels).
  int64_t unit() const { return nhwc ? c : 1; }
  int64_t planes() const { return nhwc ? n : n * c; }
};

absl::StatusOr<Layout> LayoutOf(const ConvGeometry& g) {
  Layout l;
  l.nhwc = g.format == DataFormat::kNHWC;
  l.n = g.batch;
  l.c = g.in_depth;
  l.k = g.out_depth;
  l.groups = g.groups;
  l.in_h = g.rows.input;
  l.in_w = g.cols.input;
  l.r = g.rows.window;
  l.s = g.cols.window;
  l.pad_h = std::min(g.rows.pad_before, g.rows.pad_after);
  l.pad_w = std::min(g.cols.pad_before, g.cols.pad_after);
  l.extra_top = g.rows.pad_before - l.pad_h;
  l.extra_left = g.cols.pad_before - l.pad_w;
  l.h = l.in_h + l.extra_top + (g.rows.pad_after - l.pad_h);
  l.w = l.in_w + l.extra_left + (g.cols.pad_after - l.pad_w);
  l.out_h = g.rows.output;
  l.out_w = g.cols.output;
  // cuDNN's descriptors count in int.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (l.n * l.c * l.h * l.w > kMax || l.n * l.k * l.out_h * l.out_w > kMax ||
      l.filter_elements() > kMax) {
    return errors::Unimplemented(
        "the convolution's tensors have 2^31 elements or more, more than cuDNN's descriptors "
        "count");
  }
  return l;
}

absl::Status Describe(const Layout& l, const ConvGeometry& g, Descriptors* d) {
  const cudnnTensorFormat_t format = l.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnCreateTensorDescriptor(&d->input), "a tensor descriptor"));
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnCreateTensorDescriptor(&d->output), "a tensor descriptor"));
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnCreateFilterDescriptor(&d->filter), "a filter descriptor"));
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnCreateConvolutionDescriptor(&d->conv), "a convolution descriptor"));
  TG_RETURN_IF_ERROR(cudnn::StatusOf(cudnnSetTensor4dDescriptor(d->input, format, CUDNN_DATA_FLOAT,
                                                                i(l.n), i(l.c), i(l.h), i(l.w)),
                                     "the input's descriptor"));
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnSetTensor4dDescriptor(d->output, format, CUDNN_DATA_FLOAT, i(l.n),
                                                 i(l.k), i(l.out_h), i(l.out_w)),
                      "the output's descriptor"));
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnSetFilter4dDescriptor(d->filter, CUDNN_DATA_FLOAT, format, i(l.k),
                                                 i(l.c / l.groups), i(l.r), i(l.s)),
                      "the filter's descriptor"));
  TG_RETURN_IF_ERROR(cudnn::StatusOf(
      cudnnSetConvolution2dDescriptor(d->conv, i(l.pad_h), i(l.pad_w), i(g.rows.stride),
                                      i(g.cols.stride), i(g.rows.dilation), i(g.cols.dilation),
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "the convolution's descriptor"));
  TG_RETURN_IF_ERROR(cudnn::StatusOf(cudnnSetConvolutionGroupCount(d->conv, i(l.groups)),
                                     "cudnnSetConvolutionGroupCount"));
  // What cudnnFind may time: CUDNN_DEFAULT_MATH would let it use TF32 tensor
  // cores for float on Ampere and newer, so fp32 asks for FMA math.
  TG_RETURN_IF_ERROR(cudnn::StatusOf(
      cudnnSetConvolutionMathType(d->conv, GpuTf32Allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
      "cudnnSetConvolutionMathType"));
  // cuDNN's own output size must be TensorFlow's.
  int n, k, h, w;
  TG_RETURN_IF_ERROR(cudnn::StatusOf(
      cudnnGetConvolution2dForwardOutputDim(d->conv, d->input, d->filter, &n, &k, &h, &w),
      "cudnnGetConvolution2dForwardOutputDim"));
  if (n != l.n || k != l.k || h != l.out_h || w != l.out_w) {
    return errors::Internal("cuDNN computes a ", n, "x", k, "x", h, "x", w,
                            " output (NCHW order) for the convolution, TensorFlow's rules ", l.n,
                            "x", l.k, "x", l.out_h, "x", l.out_w);
  }
  return absl::OkStatus();
}

// How a convolution runs: the fastest of the graph API's plans, or, where
// it has none, the fastest legacy algorithm.
struct Choice {
  std::unique_ptr<cudnn::ConvPlan> plan;
  // The plan takes the input as it is, with TensorFlow's padding (else the
  // input padded to symmetric padding, where TensorFlow's is not).
  bool unpadded = false;
  int algorithm = 0;  // without a plan
  size_t workspace = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
};

// The first (fastest) of cudnnFind*'s results that ran, fits `limit` bytes
// of workspace and does not use TF32 unless allowed.
template <typename Perf>
absl::StatusOr<std::unique_ptr<Choice>> Fastest(const Perf* results, int count, size_t limit,
                                                ConvPass pass) {
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    const bool tensor_ops =
        r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > limit || (tensor_ops && !GpuTf32Allowed())) {
      continue;
    }
    auto choice = std::make_unique<Choice>();
    choice->algorithm = static_cast<int>(r.algo);
    choice->workspace = r.memory;
    choice->math = GpuTf32Allowed() ? r.mathType : CUDNN_FMA_MATH;
    return choice;
  }
  return errors::Internal("cuDNN has no algorithm for the ", conv::ConvPassName(pass),
                          " convolution that runs in fp32 with at most ", limit,
                          " bytes of workspace (", count, " tried)");
}

// GPU, the alignment of the buffers in bytes, and geometry and pass.
using ChoiceKey = std::tuple<int, int64_t, conv::ConvKey>;

BoundedCache<ChoiceKey, Choice>& Choices() {
  static auto* cache = new BoundedCache<ChoiceKey, Choice>(kCudnnConvCacheCapacity);
  return *cache;
}

// A temporary buffer of `bytes` in the GPU's memory (freed in stream order
// when the tensor goes), or none for 0 bytes.
absl::StatusOr<Tensor> DeviceBuffer(GpuDevice* gpu, size_t bytes) {
  if (bytes == 0) return Tensor();
  return Tensor::Allocate(gpu->GetAllocator(DEVICE_MEMORY), DT_UINT8,
                          TensorShape({static_cast<int64_t>(bytes)}));
}

// Times the algorithms of `pass` on the buffers (the one the pass writes is
// overwritten) and returns the fastest that fits.
absl::StatusOr<std::unique_ptr<Choice>> Find(GpuDevice* gpu, cudnnHandle_t handle,
                                             const Descriptors& d, ConvPass pass, float* x,
                                             float* w, float* y) {
  // Algorithms are timed with as much workspace as we can get, up to
  // kFindWorkspaceBytes; those that need more are not considered.
  size_t limit = kFindWorkspaceBytes;
  absl::StatusOr<Tensor> workspace = DeviceBuffer(gpu, limit);
  if (!workspace.ok()) {
    limit = 0;
    workspace = Tensor();
  }
  void* ws = workspace->raw_data();
  int count = 0;
  switch (pass) {
    case ConvPass::kForward: {
      cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      TG_RETURN_IF_ERROR(cudnn::StatusOf(
          cudnnFindConvolutionForwardAlgorithmEx(handle, d.input, x, d.filter, w, d.conv, d.output,
                                                 y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                                 results, ws, limit),
          "cudnnFindConvolutionForwardAlgorithmEx"));
      return Fastest(results, count, limit, pass);
    }
    case ConvPass::kBackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      TG_RETURN_IF_ERROR(
          cudnn::StatusOf(cudnnFindConvolutionBackwardDataAlgorithmEx(
                              handle, d.filter, w, d.output, y, d.conv, d.input, x,
                              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, results, ws, limit),
                          "cudnnFindConvolutionBackwardDataAlgorithmEx"));
      return Fastest(results, count, limit, pass);
    }
    case ConvPass::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      TG_RETURN_IF_ERROR(
          cudnn::StatusOf(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                              handle, d.input, x, d.output, y, d.conv, d.filter, w,
                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, results, ws, limit),
                          "cudnnFindConvolutionBackwardFilterAlgorithmEx"));
      return Fastest(results, count, limit, pass);
    }
  }
  return errors::Internal("unknown convolution pass");
}

// Runs `pass` with algorithm `choice` and its workspace.
absl::Status Convolve(cudnnHandle_t handle, const Descriptors& d, ConvPass pass,
                      const Choice& choice, void* ws, float* x, float* w, float* y) {
  const float one = 1, zero = 0;
  const std::string what = absl::StrCat("the ", conv::ConvPassName(pass),
                                        " convolution (algorithm ", choice.algorithm, ")");
  TG_RETURN_IF_ERROR(cudnn::StatusOf(cudnnSetConvolutionMathType(d.conv, choice.math),
                                     "cudnnSetConvolutionMathType"));
  switch (pass) {
    case ConvPass::kForward:
      return cudnn::StatusOf(
          cudnnConvolutionForward(handle, &one, d.input, x, d.filter, w, d.conv,
                                  static_cast<cudnnConvolutionFwdAlgo_t>(choice.algorithm), ws,
                                  choice.workspace, &zero, d.output, y),
          what);
    case ConvPass::kBackwardData:
      return cudnn::StatusOf(
          cudnnConvolutionBackwardData(handle, &one, d.filter, w, d.output, y, d.conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(choice.algorithm),
                                       ws, choice.workspace, &zero, d.input, x),
          what);
    case ConvPass::kBackwardFilter:
      return cudnn::StatusOf(cudnnConvolutionBackwardFilter(
                                 handle, &one, d.input, x, d.output, y, d.conv,
                                 static_cast<cudnnConvolutionBwdFilterAlgo_t>(choice.algorithm), ws,
                                 choice.workspace, &zero, d.filter, w),
                             what);
  }
  return errors::Internal("unknown convolution pass");
}

// The largest power of two up to 16 that divides every address: what
// cuDNN's graph API may assume of the buffers.
int64_t AlignmentOf(const void* x, const void* w, const void* y) {
  const auto bits = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(w) |
                    reinterpret_cast<uintptr_t>(y) | uintptr_t{16};
  return static_cast<int64_t>(bits & (~bits + 1));
}

// The convolution on the padded input (`exact`: on the input as it is,
// with TensorFlow's padding before and after).
cudnn::ConvProblem ProblemOf(const Layout& l, const ConvGeometry& g, ConvPass pass,
                             int64_t alignment, bool exact) {
  cudnn::ConvProblem p;
  p.pass = pass;
  p.nhwc = l.nhwc;
  p.n = l.n;
  p.c = l.c;
  p.k = l.k;
  p.groups = l.groups;
  p.h = l.h;
  p.w = l.w;
  p.r = l.r;
  p.s = l.s;
  p.out_h = l.out_h;
  p.out_w = l.out_w;
  p.pad_top = p.pad_bottom = l.pad_h;
  p.pad_left = p.pad_right = l.pad_w;
  if (exact) {
    p.h = l.in_h;
    p.w = l.in_w;
    p.pad_top = g.rows.pad_before;
    p.pad_bottom = g.rows.pad_after;
    p.pad_left = g.cols.pad_before;
    p.pad_right = g.cols.pad_after;
  }
  p.stride_h = g.rows.stride;
  p.stride_w = g.cols.stride;
  p.dilation_h = g.rows.dilation;
  p.dilation_w = g.cols.dilation;
  p.alignment = alignment;
  return p;
}

// Times the graph API's plans for the problem on the buffers (the one the
// pass writes is overwritten) and returns the fastest that ran.
absl::StatusOr<std::unique_ptr<Choice>> FastestPlan(GpuDevice* gpu, Handle& handle,
                                                    const cudnn::ConvProblem& problem, float* x,
                                                    float* w, float* y)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(handle.mu) {
  cudnn::ConvPlanOptions options;  // at most 8 plans
  options.allow_tf32 = GpuTf32Allowed();
  options.workspace_limit = kFindWorkspaceBytes;
  TG_ASSIGN_OR_RETURN(
      std::vector<std::unique_ptr<cudnn::ConvPlan>> plans,
      cudnn::ConvPlans(cudnn::PlanTarget{handle.handle, nullptr}, problem, options));
  int64_t most = 0;
  for (const auto& plan : plans) most = std::max(most, plan->workspace_bytes());
  absl::StatusOr<Tensor> workspace = DeviceBuffer(gpu, static_cast<size_t>(most));
  if (!workspace.ok()) {  // time those that need none
    most = 0;
    workspace = Tensor();
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  TG_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  absl::Cleanup destroy_start = [start] { cudaEventDestroy(start); };
  TG_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
  absl::Cleanup destroy_stop = [stop] { cudaEventDestroy(stop); };
  float best_ms = std::numeric_limits<float>::infinity();
  std::unique_ptr<cudnn::ConvPlan> best;
  absl::Status last_error;
  for (auto& plan : plans) {
    if (plan->workspace_bytes() > most) continue;
    void* ws = workspace->raw_data();
    absl::Status ran = plan->Execute(handle.handle, x, w, y, ws);
    TG_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(start, gpu->stream()), "cudaEventRecord"));
    for (int i = 0; ran.ok() && i < kTimedRuns; ++i) {
      ran = plan->Execute(handle.handle, x, w, y, ws);
    }
    TG_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(stop, gpu->stream()), "cudaEventRecord"));
    TG_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(stop), "timing a convolution's plans"));
    if (!ran.ok()) {       // an engine that finalized but cannot run it: try the next
      cudaGetLastError();  // a launch error it left must not fail a later launch
      last_error = ran;
      continue;
    }
    float ms = 0;
    TG_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"));
    if (ms < best_ms) {
      best_ms = ms;
      best = std::move(plan);
    }
  }
  if (best == nullptr) {
    if (last_error.ok()) {
      return errors::NotFound("the ", plans.size(), " plans for the convolution ",
                              problem.ToString(), " need ", most,
                              " bytes of workspace or more, which the GPU does not have free");
    }
    return errors::NotFound("none of the ", plans.size(), " plans for the convolution ",
                            problem.ToString(), " ran: ", last_error.message());
  }
  auto choice = std::make_unique<Choice>();
  choice->workspace = static_cast<size_t>(best->workspace_bytes());
  choice->plan = std::move(best);
  return choice;
}

// How many convolutions (geometry, pass, GPU, alignment) chose each API.
struct ApiCounts {
  absl::Mutex mu;
  CudnnConvApiCounts counts ABSL_GUARDED_BY(mu);
};

ApiCounts& Counts() {
  static auto* counts = new ApiCounts;
  return *counts;
}

// The graph API's fastest plan, or the legacy API's fastest algorithm when
// the graph API has none that runs (or TG_CUDNN_LEGACY_API=1). Any other
// error (a CUDA error, say) is returned. The graph API is asked first for
// the input as it is, with TensorFlow's padding; where the padding is not
// symmetric and no plan takes it, for the padded copy `padded()` makes.
absl::StatusOr<std::unique_ptr<Choice>> Choose(
    GpuDevice* gpu, Handle& handle, const Layout& l, const ConvGeometry& g, ConvPass pass,
    int64_t alignment, float* input, float* w, float* y,
    const std::function<absl::StatusOr<float*>()>& padded)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(handle.mu) {
  std::string why = "TG_CUDNN_LEGACY_API=1";
  if (!LegacyApiOnly()) {
    for (bool exact : {true, false}) {
      if (!exact && !l.padded()) break;  // the same problem
      float* x = input;
      if (!exact) {
        TG_ASSIGN_OR_RETURN(x, padded());
      }
      absl::StatusOr<std::unique_ptr<Choice>> planned =
          FastestPlan(gpu, handle, ProblemOf(l, g, pass, alignment, exact), x, w, y);
      if (planned.ok()) {
        (*planned)->unpadded = exact;
        absl::MutexLock lock(&Counts().mu);
        ++Counts().counts.graph;
        if (exact && l.padded()) ++Counts().counts.graph_asymmetric;
        return planned;
      }
      const absl::StatusCode code = planned.status().code();
      if (code != absl::StatusCode::kNotFound && code != absl::StatusCode::kInvalidArgument) {
        return planned.status();
      }
      why = planned.status().ToString();
    }
  }
  TG_ASSIGN_OR_RETURN(float* x, padded());
  Descriptors d;
  TG_RETURN_IF_ERROR(Describe(l, g, &d));
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Choice> choice, Find(gpu, handle.handle, d, pass, x, w, y));
  absl::MutexLock lock(&Counts().mu);
  ++Counts().counts.legacy;
  Counts().counts.last_legacy_reason = why;
  return choice;
}

// TensorFlow's filter [r, s, c/groups, k] (a = r*s, b = c/groups) and
// cuDNN's (KRSC = [k, a, b] for NHWC, KCRS = [k, b, a] for NCHW), one into
// the other.
absl::Status TransposeFilter(GpuDevice* gpu, const Layout& l, const float* from, float* to,
                             bool to_cudnn) {
  const int64_t a = l.r * l.s, b = l.c / l.groups, k = l.k;
  BroadcastLoop loop;
  loop.rank = 3;
  auto set = [&loop](std::array<int64_t, 3> dims, std::array<int64_t, 3> strides) {
    for (int d = 0; d < 3; ++d) {
      loop.dims[d] = dims[d];
      loop.x_strides[d] = strides[d];
      loop.y_strides[d] = 0;
    }
  };
  if (to_cudnn) {  // out [k, a, b] or [k, b, a] gathered from [a, b, k]
    l.nhwc ? set({k, a, b}, {1, b * k, k}) : set({k, b, a}, {1, k, b * k});
  } else {  // out [a, b, k] gathered from [k, a, b] or [k, b, a]
    l.nhwc ? set({a, b, k}, {b, 1, a * b}) : set({a, b, k}, {1, a, a * b});
  }
  return CudaStatus(LaunchBroadcastCopy(from, to, sizeof(float), l.filter_elements(), loop,
                                        gpu->multiprocessors(), gpu->stream()),
                    "transposing a convolution's filter");
}

// The input into the middle of the zeroed padded buffer (`into_padded`), or
// the padded buffer's middle back out into the input.
absl::Status CopyPadded(GpuDevice* gpu, const Layout& l, float* input, float* padded,
                        bool into_padded) {
  const size_t unit_bytes = sizeof(float) * static_cast<size_t>(l.unit());
  const size_t row_bytes = unit_bytes * static_cast<size_t>(l.in_w);
  const size_t padded_row_bytes = unit_bytes * static_cast<size_t>(l.w);
  cudaPitchedPtr small = make_cudaPitchedPtr(input, row_bytes, row_bytes, l.in_h);
  cudaPitchedPtr big = make_cudaPitchedPtr(padded, padded_row_bytes, padded_row_bytes, l.h);
  const cudaPos origin = make_cudaPos(0, 0, 0);
  const cudaPos middle = make_cudaPos(unit_bytes * l.extra_left, l.extra_top, 0);
  cudaMemcpy3DParms p = {};
  p.srcPtr = into_padded ? small : big;
  p.srcPos = into_padded ? origin : middle;
  p.dstPtr = into_padded ? big : small;
  p.dstPos = into_padded ? middle : origin;
  p.extent = make_cudaExtent(row_bytes, l.in_h, l.planes());
  p.kind = cudaMemcpyDeviceToDevice;
  return CudaStatus(cudaMemcpy3DAsync(&p, gpu->stream()), "copying a convolution's padded input");
}

}  // namespace

absl::Status RunCudnnConv(GpuDevice* gpu, const ConvGeometry& geometry, ConvPass pass, float* input,
                          float* filter, float* output) {
  TG_ASSIGN_OR_RETURN(const Layout l, LayoutOf(geometry));
  // The filter in cuDNN's layout.
  TG_ASSIGN_OR_RETURN(Tensor filter_buffer, DeviceBuffer(gpu, sizeof(float) * l.filter_elements()));
  float* w = static_cast<float*>(filter_buffer.raw_data());
  if (pass != ConvPass::kBackwardFilter) {
    TG_RETURN_IF_ERROR(TransposeFilter(gpu, l, filter, w, /*to_cudnn=*/true));
  }
  // The input padded to symmetric padding (the input itself where
  // TensorFlow's padding is symmetric), made when first needed.
  Tensor input_buffer;
  float* padded_input = nullptr;
  const auto padded = [&]() -> absl::StatusOr<float*> {
    if (padded_input != nullptr) return padded_input;
    if (!l.padded()) return padded_input = input;
    TG_ASSIGN_OR_RETURN(input_buffer, DeviceBuffer(gpu, sizeof(float) * l.n * l.c * l.h * l.w));
    float* x = static_cast<float*>(input_buffer.raw_data());
    if (pass != ConvPass::kBackwardData) {
      TG_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(x, 0, input_buffer.TotalBytes(), gpu->stream()),
                                    "zeroing padding"));
      TG_RETURN_IF_ERROR(CopyPadded(gpu, l, input, x, /*into_padded=*/true));
    }
    return padded_input = x;
  };

  TG_ASSIGN_OR_RETURN(Handle * handle, HandleFor(gpu->cuda_ordinal()));
  absl::MutexLock lock(&handle->mu);
  TG_RETURN_IF_ERROR(
      cudnn::StatusOf(cudnnSetStream(handle->handle, gpu->stream()), "cudnnSetStream"));
  const int64_t alignment = AlignmentOf(input, w, output);
  TG_ASSIGN_OR_RETURN(
      std::shared_ptr<const Choice> choice,
      Choices().GetOrCreate({gpu->cuda_ordinal(), alignment, conv::ConvKeyOf(geometry, pass)}, [&] {
        return Choose(gpu, *handle, l, geometry, pass, alignment, input, w, output, padded);
      }));
  float* x = input;
  if (!choice->unpadded) {
    TG_ASSIGN_OR_RETURN(x, padded());
  }
  TG_ASSIGN_OR_RETURN(Tensor workspace, DeviceBuffer(gpu, choice->workspace));
  if (choice->plan != nullptr) {
    TG_RETURN_IF_ERROR(choice->plan->Execute(handle->handle, x, w, output, workspace.raw_data()));
  } else {
    Descriptors d;
    TG_RETURN_IF_ERROR(Describe(l, geometry, &d));
    TG_RETURN_IF_ERROR(
        Convolve(handle->handle, d, pass, *choice, workspace.raw_data(), x, w, output));
  }

  if (pass == ConvPass::kBackwardFilter) {
    TG_RETURN_IF_ERROR(TransposeFilter(gpu, l, w, filter, /*to_cudnn=*/false));
  }
  if (pass == ConvPass::kBackwardData && x != input) {
    TG_RETURN_IF_ERROR(CopyPadded(gpu, l, input, x, /*into_padded=*/false));
  }
  return absl::OkStatus();
}

CudnnConvApiCounts CudnnConvApis() {
  absl::MutexLock lock(&Counts().mu);
  return Counts().counts;
}

}  // namespace gpu
}  // namespace tensorgrid
