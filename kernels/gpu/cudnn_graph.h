// A convolution pass as a cuDNN 9 graph ("backend API") execution plan: the
// form PyTorch and cudnn-frontend use, in which every descriptor, the engine
// and its knobs are fixed once, so that running the pass again is one
// cudnnBackendExecute. cuDNN's legacy calls (cudnnConvolutionForward and the
// like) build much of that afresh on every call: on an H200 they held the host
// 52–432 µs per convolution.
//
//   TG_ASSIGN_OR_RETURN(auto plans, cudnn::ConvPlans({handle, nullptr}, problem, options));
//   ... time them, keep the fastest ...
//   TG_RETURN_IF_ERROR(plan->Execute(handle, x, w, y, workspace));
//
// On a GPU plans are built for its handle. They can also be built for a
// GPU's properties in cuDNN's JSON form (cuDNN 9.8 and later), with no GPU:
// that is how the tests here check them on machines without one.
#ifndef TENSORGRID_KERNELS_GPU_CUDNN_GRAPH_H_
#define TENSORGRID_KERNELS_GPU_CUDNN_GRAPH_H_

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/conv/conv_kernels.h"

namespace tensorgrid {
namespace gpu {
namespace cudnn {

// Internal "cuDNN error <name> (<code>) in <what>: <cuDNN's last message>",
// or OK.
absl::Status StatusOf(cudnnStatus_t status, absl::string_view what);

// One backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  static absl::StatusOr<Descriptor> Create(cudnnBackendDescriptorType_t type);
  Descriptor() = default;
  Descriptor(Descriptor&& other) noexcept : d_(other.d_) { other.d_ = nullptr; }
  Descriptor& operator=(Descriptor&& other) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor();

  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// Properties in cuDNN's JSON form (keys as cudaDeviceProp's: "deviceVer",
// "multiProcessorCount", ...): a plan for a GPU that is not here.
absl::StatusOr<Descriptor> DevicePropertiesFromJson(absl::string_view json);

// A 2-D convolution pass as cuDNN computes it, float32, in TensorFlow's
// terms: the activations NHWC or NCHW, the filter in cuDNN's layout for
// them (KRSC or KCRS, [k, c / groups, r, s]), and the three buffers aligned
// to `alignment` bytes (a power of two, at most 16).
struct ConvProblem {
  conv::ConvPass pass = conv::ConvPass::kForward;
  bool nhwc = true;
  int64_t n = 0, c = 0, k = 0, groups = 1;
  int64_t h = 0, w = 0, r = 0, s = 0, out_h = 0, out_w = 0;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t alignment = 16;

  std::string ToString() const;
};

// What a plan is built for: a GPU's handle (the plan then runs with that
// handle only), or a GPU's properties (device: it runs with a handle of any
// GPU that has them). Exactly one is set.
struct PlanTarget {
  cudnnHandle_t handle = nullptr;
  const Descriptor* device = nullptr;
};

struct ConvPlanOptions {
  // Engines that use TF32 tensor cores for float32 are left out unless true;
  // those that round their inputs or sum in lower precision always are.
  bool allow_tf32 = false;
  // Plans whose workspace is larger are left out.
  size_t workspace_limit = size_t{256} << 20;
  // At most this many plans, in the heuristics' order.
  int max_plans = 8;
};

// A finalized plan of one engine configuration for one problem.
class ConvPlan {
 public:
  ConvPlan(Descriptor plan, conv::ConvPass pass, int64_t engine, int64_t workspace_bytes,
           bool tensor_cores);

  // Runs the pass on `handle`'s stream: the buffer the pass writes (y
  // forward, x for the input gradient, w for the filter gradient) is
  // overwritten. `workspace` holds workspace_bytes() of device memory.
  absl::Status Execute(cudnnHandle_t handle, void* x, void* w, void* y, void* workspace) const;

  int64_t engine() const { return engine_; }
  int64_t workspace_bytes() const { return workspace_bytes_; }
  bool tensor_cores() const { return tensor_cores_; }
  // "engine 28, 0 bytes of workspace".
  std::string ToString() const;

 private:
  Descriptor plan_;
  conv::ConvPass pass_;
  int64_t engine_;
  int64_t workspace_bytes_;
  bool tensor_cores_;
};

// The plans cuDNN's heuristics propose for `problem` on `target` (their
// mode A list, or where none of it gives a plan, the fallback list), those
// that finalize and pass `options`, in the heuristics' order, at most
// options.max_plans. NotFound naming the problem when none does;
// InvalidArgument when cuDNN rejects the problem itself.
absl::StatusOr<std::vector<std::unique_ptr<ConvPlan>>> ConvPlans(const PlanTarget& target,
                                                                 const ConvProblem& problem,
                                                                 const ConvPlanOptions& options);

}  // namespace cudnn
}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_CUDNN_GRAPH_H_
