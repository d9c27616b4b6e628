#include "kernels/gpu/cudnn_graph.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"

// A plan for a handle is built through the handle attributes cuDNN 9.19
// marks deprecated (every cuDNN 9 has them; device properties came in 9.8).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tensorgrid {
namespace gpu {
namespace cudnn {
namespace {

using conv::ConvPass;

// The tensors' unique ids in a plan and its variant packs.
constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

template <typename T>
absl::Status Set(const Descriptor& d, cudnnBackendAttributeName_t name,
                 cudnnBackendAttributeType_t type, int64_t count, const T* values,
                 absl::string_view what) {
  return StatusOf(cudnnBackendSetAttribute(d.get(), name, type, count, values), what);
}

absl::Status Finalize(const Descriptor& d, absl::string_view what) {
  return StatusOf(cudnnBackendFinalize(d.get()), absl::StrCat("finalizing ", what));
}

// A float tensor of dims [a, b, c, d] (cuDNN's order: N, C, H, W) whose
// elements lie channels-last (`nhwc`) or channels-first.
absl::StatusOr<Descriptor> Tensor4d(int64_t uid, std::array<int64_t, 4> dims, bool nhwc,
                                    int64_t alignment, absl::string_view what) {
  [[maybe_unused]] const auto [n, c, h, w] = dims;
  const std::array<int64_t, 4> strides = nhwc ? std::array<int64_t, 4>{h * w * c, 1, w * c, c}
                                              : std::array<int64_t, 4>{c * h * w, h * w, w, 1};
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  TG_ASSIGN_OR_RETURN(Descriptor t, Descriptor::Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  TG_RETURN_IF_ERROR(Set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what));
  TG_RETURN_IF_ERROR(Set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), what));
  TG_RETURN_IF_ERROR(Set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), what));
  TG_RETURN_IF_ERROR(Set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what));
  TG_RETURN_IF_ERROR(
      Set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what));
  TG_RETURN_IF_ERROR(Finalize(t, what));
  return t;
}

absl::StatusOr<Descriptor> Convolution(const ConvProblem& p) {
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = 2;
  const int64_t dilations[2] = {p.dilation_h, p.dilation_w};
  const int64_t strides[2] = {p.stride_h, p.stride_w};
  const int64_t pre[2] = {p.pad_top, p.pad_left};
  const int64_t post[2] = {p.pad_bottom, p.pad_right};
  constexpr absl::string_view kWhat = "the convolution's descriptor";
  TG_ASSIGN_OR_RETURN(Descriptor c, Descriptor::Create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  TG_RETURN_IF_ERROR(
      Set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, kWhat));
  TG_RETURN_IF_ERROR(
      Set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, kWhat));
  TG_RETURN_IF_ERROR(
      Set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, kWhat));
  TG_RETURN_IF_ERROR(
      Set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilations, kWhat));
  TG_RETURN_IF_ERROR(
      Set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides, kWhat));
  TG_RETURN_IF_ERROR(Set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pre, kWhat));
  TG_RETURN_IF_ERROR(
      Set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, post, kWhat));
  TG_RETURN_IF_ERROR(Finalize(c, kWhat));
  return c;
}

// The pass's operation node: its descriptor type and attribute names.
struct OperationKind {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};

OperationKind KindOf(ConvPass pass) {
  switch (pass) {
    case ConvPass::kBackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvPass::kBackwardFilter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    case ConvPass::kForward: break;
  }
  // The forward pass, and what the compiler cannot prove unreachable.
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
}

// The problem's graph of one operation. InvalidArgument when cuDNN rejects
// the shapes.
absl::StatusOr<Descriptor> OperationGraph(const PlanTarget& target, const ConvProblem& p) {
  TG_ASSIGN_OR_RETURN(Descriptor x, Tensor4d(kX, {p.n, p.c, p.h, p.w}, p.nhwc, p.alignment,
                                             "the input's descriptor"));
  TG_ASSIGN_OR_RETURN(Descriptor w, Tensor4d(kW, {p.k, p.c / p.groups, p.r, p.s}, p.nhwc,
                                             p.alignment, "the filter's descriptor"));
  TG_ASSIGN_OR_RETURN(Descriptor y, Tensor4d(kY, {p.n, p.k, p.out_h, p.out_w}, p.nhwc, p.alignment,
                                             "the output's descriptor"));
  TG_ASSIGN_OR_RETURN(Descriptor conv, Convolution(p));
  const OperationKind kind = KindOf(p.pass);
  const float one = 1, zero = 0;
  const std::string what = absl::StrCat("the ", conv::ConvPassName(p.pass), " operation");
  TG_ASSIGN_OR_RETURN(Descriptor op, Descriptor::Create(kind.type));
  for (const auto& [name, d] : {std::pair(kind.x, &x), std::pair(kind.w, &w), std::pair(kind.y, &y),
                                std::pair(kind.conv, &conv)}) {
    cudnnBackendDescriptor_t raw = d->get();
    TG_RETURN_IF_ERROR(Set(op, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, what));
  }
  TG_RETURN_IF_ERROR(Set(op, kind.alpha, CUDNN_TYPE_FLOAT, 1, &one, what));
  TG_RETURN_IF_ERROR(Set(op, kind.beta, CUDNN_TYPE_FLOAT, 1, &zero, what));
  absl::Status finalized = Finalize(op, what);
  if (!finalized.ok()) {
    return errors::InvalidArgument("cuDNN rejects the convolution ", p.ToString(), ": ",
                                   finalized.message());
  }
  TG_ASSIGN_OR_RETURN(Descriptor graph,
                      Descriptor::Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  cudnnBackendDescriptor_t raw = op.get();
  TG_RETURN_IF_ERROR(Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                         &raw, "the operation graph"));
  if (target.handle != nullptr) {
    TG_RETURN_IF_ERROR(Set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
                           &target.handle, "the operation graph"));
  }
  finalized = Finalize(graph, "the operation graph");
  if (!finalized.ok()) {
    return errors::InvalidArgument("cuDNN rejects the convolution ", p.ToString(), ": ",
                                   finalized.message());
  }
  return graph;
}

// An engine configuration the heuristics proposed, with what its engine
// says of itself.
struct Config {
  Descriptor config;
  int64_t engine = -1;
  bool tensor_cores = false;      // TF32 for float32
  bool below_fp32 = false;        // inputs rounded, or sums in lower precision
  bool runtime_compiled = false;  // compiled with NVRTC when finalized: slow to build
};

absl::StatusOr<std::vector<Config>> Heuristics(const PlanTarget& target, const Descriptor& graph,
                                               cudnnBackendHeurMode_t mode) {
  constexpr absl::string_view kWhat = "the engine heuristics";
  TG_ASSIGN_OR_RETURN(Descriptor heur, Descriptor::Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
  cudnnBackendDescriptor_t raw_graph = graph.get();
  TG_RETURN_IF_ERROR(Set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                         1, &raw_graph, kWhat));
  TG_RETURN_IF_ERROR(Set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, kWhat));
  if (target.handle == nullptr) {  // the graph has no handle: the device's properties
    cudnnBackendDescriptor_t raw_device = target.device->get();
    TG_RETURN_IF_ERROR(Set(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                           &raw_device, kWhat));
  }
  TG_RETURN_IF_ERROR(Finalize(heur, kWhat));
  int64_t count = 0;
  TG_RETURN_IF_ERROR(
      StatusOf(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
               "counting the heuristics' results"));
  std::vector<Config> configs(static_cast<size_t>(count));
  std::vector<cudnnBackendDescriptor_t> raw(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    TG_ASSIGN_OR_RETURN(configs[i].config, Descriptor::Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw[i] = configs[i].config.get();
  }
  int64_t got = 0;
  TG_RETURN_IF_ERROR(
      StatusOf(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
               "reading the heuristics' results"));
  configs.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, count)));
  for (Config& c : configs) {
    TG_ASSIGN_OR_RETURN(Descriptor engine, Descriptor::Create(CUDNN_BACKEND_ENGINE_DESCRIPTOR));
    cudnnBackendDescriptor_t raw_engine = engine.get();
    int64_t n = 0;
    TG_RETURN_IF_ERROR(
        StatusOf(cudnnBackendGetAttribute(c.config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &raw_engine),
                 "reading an engine configuration's engine"));
    TG_RETURN_IF_ERROR(
        StatusOf(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                          CUDNN_TYPE_INT64, 1, &n, &c.engine),
                 "reading an engine's index"));
    std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> numerical{};
    TG_RETURN_IF_ERROR(StatusOf(
        cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, numerical.size(), &n, numerical.data()),
        "reading an engine's numerical notes"));
    for (int64_t i = 0; i < std::min<int64_t>(n, numerical.size()); ++i) {
      c.tensor_cores |= numerical[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
      c.below_fp32 |= numerical[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
                      numerical[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
    }
    std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behavior{};
    TG_RETURN_IF_ERROR(StatusOf(
        cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                 CUDNN_TYPE_BEHAVIOR_NOTE, behavior.size(), &n, behavior.data()),
        "reading an engine's behaviour notes"));
    for (int64_t i = 0; i < std::min<int64_t>(n, behavior.size()); ++i) {
      c.runtime_compiled |= behavior[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    }
  }
  return configs;
}

// Appends to `plans` those of `configs` that finalize and pass `options`, up
// to options.max_plans. Engines built with NVRTC when their plan is
// finalized take up to seconds each: one of them is tried only when no
// precompiled engine gives a plan.
absl::Status AddPlans(const PlanTarget& target, const ConvProblem& problem,
                      const ConvPlanOptions& options, const std::vector<Config>& configs,
                      std::vector<std::unique_ptr<ConvPlan>>* plans, int* considered) {
  for (bool runtime_compiled : {false, true}) {
    for (const Config& c : configs) {
      if (static_cast<int>(plans->size()) >= (runtime_compiled ? 1 : options.max_plans)) break;
      if (c.runtime_compiled != runtime_compiled || c.below_fp32 ||
          (c.tensor_cores && !options.allow_tf32)) {
        continue;
      }
      ++*considered;
      TG_ASSIGN_OR_RETURN(Descriptor plan,
                          Descriptor::Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
      cudnnBackendDescriptor_t raw_config = c.config.get();
      TG_RETURN_IF_ERROR(Set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_config, "an execution plan"));
      if (target.handle != nullptr) {
        TG_RETURN_IF_ERROR(Set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                               &target.handle, "an execution plan"));
      } else {
        cudnnBackendDescriptor_t raw_device = target.device->get();
        TG_RETURN_IF_ERROR(Set(plan, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_device, "an execution plan"));
      }
      // An engine that cannot run this problem fails here: try the next.
      if (cudnnBackendFinalize(plan.get()) != CUDNN_STATUS_SUCCESS) continue;
      int64_t workspace = 0, n = 0;
      TG_RETURN_IF_ERROR(
          StatusOf(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &n, &workspace),
                   "reading a plan's workspace size"));
      if (workspace < 0 || static_cast<size_t>(workspace) > options.workspace_limit) continue;
      plans->push_back(std::make_unique<ConvPlan>(std::move(plan), problem.pass, c.engine,
                                                  workspace, c.tensor_cores));
    }
    if (!plans->empty()) break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StatusOf(cudnnStatus_t status, absl::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  char last[512] = "";
  cudnnGetLastErrorString(last, sizeof(last));
  return errors::Internal("cuDNN error ", cudnnGetErrorString(status), " (",
                          static_cast<int>(status), ") in ", what, last[0] ? ": " : "", last);
}

absl::StatusOr<Descriptor> Descriptor::Create(cudnnBackendDescriptorType_t type) {
  Descriptor d;
  const cudnnStatus_t status = cudnnBackendCreateDescriptor(type, &d.d_);
  if (status != CUDNN_STATUS_SUCCESS) {
    return StatusOf(status, absl::StrCat("cudnnBackendCreateDescriptor(", type, ")"));
  }
  return d;
}

Descriptor& Descriptor::operator=(Descriptor&& other) noexcept {
  if (this != &other) {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
    d_ = other.d_;
    other.d_ = nullptr;
  }
  return *this;
}

Descriptor::~Descriptor() {
  if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
}

absl::StatusOr<Descriptor> DevicePropertiesFromJson(absl::string_view json) {
  TG_ASSIGN_OR_RETURN(Descriptor d, Descriptor::Create(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR));
  TG_RETURN_IF_ERROR(Set(d, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                         static_cast<int64_t>(json.size()), json.data(),
                         "the device's properties"));
  TG_RETURN_IF_ERROR(Finalize(d, "device properties from JSON"));
  return d;
}

std::string ConvProblem::ToString() const {
  return absl::StrCat(conv::ConvPassName(pass), " ", nhwc ? "NHWC" : "NCHW", " ", n, "x", c, "x", h,
                      "x", w, " -> ", k, " (", groups, " group", groups == 1 ? "" : "s",
                      "), window ", r, "x", s, ", stride ", stride_h, "x", stride_w, ", dilation ",
                      dilation_h, "x", dilation_w, ", padding ", pad_top, "/", pad_bottom, " rows ",
                      pad_left, "/", pad_right, " cols, output ", out_h, "x", out_w);
}

ConvPlan::ConvPlan(Descriptor plan, ConvPass pass, int64_t engine, int64_t workspace_bytes,
                   bool tensor_cores)
    : plan_(std::move(plan)),
      pass_(pass),
      engine_(engine),
      workspace_bytes_(workspace_bytes),
      tensor_cores_(tensor_cores) {}

absl::Status ConvPlan::Execute(cudnnHandle_t handle, void* x, void* w, void* y,
                               void* workspace) const {
  // The pack of this call's buffers: a few host operations, no strings
  // unless something fails.
  TG_ASSIGN_OR_RETURN(Descriptor pack, Descriptor::Create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
  const int64_t uids[3] = {kX, kW, kY};
  void* pointers[3] = {x, w, y};
  const cudnnBackendDescriptor_t p = pack.get();
  cudnnStatus_t status =
      cudnnBackendSetAttribute(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  if (status == CUDNN_STATUS_SUCCESS) {
    status = cudnnBackendSetAttribute(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                      3, pointers);
  }
  if (status == CUDNN_STATUS_SUCCESS) {
    status = cudnnBackendSetAttribute(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                      &workspace);
  }
  if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendFinalize(p);
  if (status != CUDNN_STATUS_SUCCESS) {
    return StatusOf(status, absl::StrCat("the variant pack of the ", conv::ConvPassName(pass_),
                                         " convolution (", ToString(), ")"));
  }
  status = cudnnBackendExecute(handle, plan_.get(), p);
  if (status != CUDNN_STATUS_SUCCESS) {
    return StatusOf(
        status, absl::StrCat("the ", conv::ConvPassName(pass_), " convolution (", ToString(), ")"));
  }
  return absl::OkStatus();
}

std::string ConvPlan::ToString() const {
  return absl::StrCat("engine ", engine_, ", ", workspace_bytes_, " bytes of workspace",
                      tensor_cores_ ? ", TF32 tensor cores" : "");
}

absl::StatusOr<std::vector<std::unique_ptr<ConvPlan>>> ConvPlans(const PlanTarget& target,
                                                                 const ConvProblem& problem,
                                                                 const ConvPlanOptions& options) {
  if ((target.handle == nullptr) == (target.device == nullptr)) {
    return errors::InvalidArgument("a cuDNN plan is for a handle or for device properties");
  }
  TG_ASSIGN_OR_RETURN(const Descriptor graph, OperationGraph(target, problem));
  std::vector<std::unique_ptr<ConvPlan>> plans;
  int proposed = 0, considered = 0;
  absl::Status heuristics;
  // The heuristics' list, then (where none of it gives a plan) the list of
  // fallback engines, which repeats part of it.
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    absl::StatusOr<std::vector<Config>> configs = Heuristics(target, graph, mode);
    if (!configs.ok()) {
      heuristics = configs.status();
      continue;
    }
    proposed += static_cast<int>(configs->size());
    TG_RETURN_IF_ERROR(AddPlans(target, problem, options, *configs, &plans, &considered));
    if (!plans.empty()) return plans;
  }
  return errors::NotFound("cuDNN has no execution plan for the convolution ", problem.ToString(),
                          " in fp32", options.allow_tf32 ? " or TF32" : "", " with at most ",
                          options.workspace_limit, " bytes of workspace (", proposed,
                          " engine configurations proposed, ", considered, " tried",
                          heuristics.ok() ? "" : "; ", heuristics.message(), ")");
}

}  // namespace cudnn
}  // namespace gpu
}  // namespace tensorgrid
