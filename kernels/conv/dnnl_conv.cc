#include "kernels/conv/dnnl_conv.h"

#include <algorithm>
#include <array>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/framework/tensor.h"
#include "core/platform/status.h"
#include "kernels/conv/bounded_cache.h"
#include "kernels/onednn.h"
#include "kernels/openmp.h"

namespace tensorgrid {
namespace conv {
namespace {

using dnnl::memory;

// One of the three buffers of a pass, as the primitive reads or writes it.
struct ConvArg {
  int dnnl_arg = 0;
  memory::desc user;    // the tensor's own layout
  memory::desc wanted;  // the primitive's
  bool written = false;
  // user -> wanted for what the pass reads, wanted -> user for what it
  // writes; empty when the two layouts are one.
  std::optional<dnnl::reorder> reorder;
  memory::desc reorder_scratchpad;
};

struct ConvPrimitive {
  dnnl::primitive primitive;
  std::array<ConvArg, 3> args;  // input, filter, output roles, in that order
  memory::desc scratchpad;
  std::string implementation;
  int threads = 0;  // the OpenMP threads it was built for, and runs on
};

// The memory descriptors of a geometry: the tensors' layouts, and what the
// primitive may choose (`any` lets oneDNN block the layout).
struct ConvDescs {
  memory::desc input, input_choice, filter, filter_choice, output, output_choice;
  memory::dims strides, dilations, pad_before, pad_after;
};

ConvDescs DescsOf(const ConvGeometry& g) {
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  const tag activations = g.format == DataFormat::kNHWC ? tag::nhwc : tag::nchw;
  const memory::dims in = {g.batch, g.in_depth, g.rows.input, g.cols.input};
  const memory::dims out = {g.batch, g.out_depth, g.rows.output, g.cols.output};
  ConvDescs d;
  d.input = memory::desc(in, f32, activations);
  d.output = memory::desc(out, f32, activations);
  // oneDNN's jit kernels run on plain NHWC; plain NCHW would take its slow
  // gemm path, so NCHW lets it block the activations and pays the reorders.
  const bool plain = g.format == DataFormat::kNHWC;
  d.input_choice = plain ? d.input : memory::desc(in, f32, tag::any);
  d.output_choice = plain ? d.output : memory::desc(out, f32, tag::any);
  // TensorFlow's [rows, cols, in/groups, out] with out = groups * out/groups
  // is oneDNN's hwio (hwigo with groups).
  const int64_t kh = g.rows.window, kw = g.cols.window;
  const int64_t in_per_group = g.in_depth / g.groups, out_per_group = g.out_depth / g.groups;
  if (g.groups == 1) {
    d.filter = memory::desc({g.out_depth, g.in_depth, kh, kw}, f32, tag::hwio);
  } else {
    d.filter = memory::desc({g.groups, out_per_group, in_per_group, kh, kw}, f32, tag::hwigo);
  }
  d.filter_choice = memory::desc(d.filter.dims(), f32, tag::any);
  d.strides = {g.rows.stride, g.cols.stride};
  d.dilations = {g.rows.dilation - 1, g.cols.dilation - 1};  // oneDNN: 0 is none
  d.pad_before = {g.rows.pad_before, g.cols.pad_before};
  d.pad_after = {g.rows.pad_after, g.cols.pad_after};
  return d;
}

ConvArg MakeArg(int dnnl_arg, const memory::desc& user, const memory::desc& wanted, bool written) {
  ConvArg arg;
  arg.dnnl_arg = dnnl_arg;
  arg.user = user;
  arg.wanted = wanted;
  arg.written = written;
  if (user != wanted) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::reorder::primitive_desc pd =
        written ? dnnl::reorder::primitive_desc(OneDnnCpuEngine(), wanted, OneDnnCpuEngine(), user,
                                                attr)
                : dnnl::reorder::primitive_desc(OneDnnCpuEngine(), user, OneDnnCpuEngine(), wanted,
                                                attr);
    arg.reorder = dnnl::reorder(pd);
    arg.reorder_scratchpad = pd.scratchpad_desc();
  }
  return arg;
}

// Builds the primitive of `pass`; throws dnnl::error.
std::unique_ptr<ConvPrimitive> BuildOrThrow(const ConvGeometry& g, ConvPass pass) {
  using namespace dnnl;  // NOLINT: the primitive names read better bare here
  const ConvDescs d = DescsOf(g);
  primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad_mode::user);  // per call: concurrent calls are safe
  const convolution_forward::primitive_desc fwd(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                d.input_choice, d.filter_choice, d.output_choice, d.strides,
                                d.dilations, d.pad_before, d.pad_after),
      attr, OneDnnCpuEngine());
  auto p = std::make_unique<ConvPrimitive>();
  p->threads = OpenMpThreads();
  switch (pass) {
    case ConvPass::kForward:
      p->primitive = convolution_forward(fwd);
      p->args = {MakeArg(DNNL_ARG_SRC, d.input, fwd.src_desc(), false),
                 MakeArg(DNNL_ARG_WEIGHTS, d.filter, fwd.weights_desc(), false),
                 MakeArg(DNNL_ARG_DST, d.output, fwd.dst_desc(), true)};
      p->scratchpad = fwd.scratchpad_desc();
      p->implementation = fwd.impl_info_str();
      break;
    case ConvPass::kBackwardData: {
      const convolution_backward_data::primitive_desc bwd(
          convolution_backward_data::desc(algorithm::convolution_direct, d.input_choice,
                                          d.filter_choice, d.output_choice, d.strides, d.dilations,
                                          d.pad_before, d.pad_after),
          attr, OneDnnCpuEngine(), fwd);
      p->primitive = convolution_backward_data(bwd);
      p->args = {MakeArg(DNNL_ARG_DIFF_SRC, d.input, bwd.diff_src_desc(), true),
                 MakeArg(DNNL_ARG_WEIGHTS, d.filter, bwd.weights_desc(), false),
                 MakeArg(DNNL_ARG_DIFF_DST, d.output, bwd.diff_dst_desc(), false)};
      p->scratchpad = bwd.scratchpad_desc();
      p->implementation = bwd.impl_info_str();
      break;
    }
    case ConvPass::kBackwardFilter: {
      const convolution_backward_weights::primitive_desc bwd(
          convolution_backward_weights::desc(algorithm::convolution_direct, d.input_choice,
                                             d.filter_choice, d.output_choice, d.strides,
                                             d.dilations, d.pad_before, d.pad_after),
          attr, OneDnnCpuEngine(), fwd);
      p->primitive = convolution_backward_weights(bwd);
      p->args = {MakeArg(DNNL_ARG_SRC, d.input, bwd.src_desc(), false),
                 MakeArg(DNNL_ARG_DIFF_WEIGHTS, d.filter, bwd.diff_weights_desc(), true),
                 MakeArg(DNNL_ARG_DIFF_DST, d.output, bwd.diff_dst_desc(), false)};
      p->scratchpad = bwd.scratchpad_desc();
      p->implementation = bwd.impl_info_str();
      break;
    }
  }
  return p;
}

absl::Status DnnlError(const char* what, ConvPass pass, const dnnl::error& e) {
  return errors::Internal("oneDNN could not ", what, " the ", ConvPassName(pass),
                          " convolution: ", e.what(), " (status ", static_cast<int>(e.status), ")");
}

// oneDNN splits a primitive's work among the OpenMP threads its caller
// had when it was built, and runs on that many threads whatever the team
// size when it runs: the thread count is part of the key.
using DnnlConvKey = std::pair<int, ConvKey>;

BoundedCache<DnnlConvKey, ConvPrimitive>& Cache() {
  static auto* cache = new BoundedCache<DnnlConvKey, ConvPrimitive>(kDnnlConvCacheCapacity);
  return *cache;
}

// The primitive of `pass` for the calling thread's OpenMP thread count.
absl::StatusOr<std::shared_ptr<const ConvPrimitive>> GetPrimitive(const ConvGeometry& g,
                                                                  ConvPass pass) {
  return Cache().GetOrCreate(DnnlConvKey(OpenMpThreads(), ConvKeyOf(g, pass)),
                             [&]() -> absl::StatusOr<std::unique_ptr<ConvPrimitive>> {
                               try {
                                 return BuildOrThrow(g, pass);
                               } catch (const dnnl::error& e) {
                                 return DnnlError("build", pass, e);
                               }
                             });
}

// The buffers of one call of `p`: the tensors' own, the primitive's view
// of each (a reordered copy where the layouts differ), and the scratchpads,
// in tensor buffers (onednn.h says why) held until the call has finished.
struct ConvBuffers {
  std::array<memory, 3> user, used, reorder_scratchpad;
  memory scratchpad;
  std::array<Tensor, 7> holders;  // the three copies, their scratchpads, the primitive's
};

// Allocates everything a call needs before any of it runs, so that a
// failure (ResourceExhausted) leaves nothing half done.
absl::Status AllocateBuffers(const ConvPrimitive& p, const std::array<float*, 3>& buffers,
                             ConvBuffers* b) {
  for (int i = 0; i < 3; ++i) {
    const ConvArg& arg = p.args[i];
    b->user[i] = memory(arg.user, OneDnnCpuEngine(), buffers[i]);
    b->used[i] = b->user[i];
    if (!arg.reorder) continue;
    TG_ASSIGN_OR_RETURN(b->used[i], OneDnnTempMemory(arg.wanted, &b->holders[i]));
    TG_ASSIGN_OR_RETURN(b->reorder_scratchpad[i],
                        OneDnnTempMemory(arg.reorder_scratchpad, &b->holders[3 + i]));
  }
  TG_ASSIGN_OR_RETURN(b->scratchpad, OneDnnTempMemory(p.scratchpad, &b->holders[6]));
  return absl::OkStatus();
}

// Runs argument i's reorder from `from` to `to`; throws dnnl::error.
void Reorder(const ConvArg& arg, const ConvBuffers& b, int i, const memory& from,
             const memory& to) {
  std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (b.reorder_scratchpad[i]) args[DNNL_ARG_SCRATCHPAD] = b.reorder_scratchpad[i];
  arg.reorder->execute(OneDnnStream(), args);
}

// Runs `p` on `b`: the reorders in, the primitive, the reorders out; throws
// dnnl::error.
void Execute(const ConvPrimitive& p, const ConvBuffers& b) {
  std::unordered_map<int, memory> args;
  for (int i = 0; i < 3; ++i) {
    const ConvArg& arg = p.args[i];
    if (arg.reorder && !arg.written) Reorder(arg, b, i, b.user[i], b.used[i]);
    args[arg.dnnl_arg] = b.used[i];
  }
  if (b.scratchpad) args[DNNL_ARG_SCRATCHPAD] = b.scratchpad;
  p.primitive.execute(OneDnnStream(), args);
  for (int i = 0; i < 3; ++i) {
    const ConvArg& arg = p.args[i];
    if (arg.reorder && arg.written) Reorder(arg, b, i, b.used[i], b.user[i]);
  }
  OneDnnStream().wait();
}

}  // namespace

absl::Status RunDnnlConv(const ConvGeometry& geometry, ConvPass pass, int num_threads, float* input,
                         float* filter, float* output) {
  SetOpenMpThreads(num_threads);  // this caller's intra-op thread count, before building
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ConvPrimitive> p, GetPrimitive(geometry, pass));
  ConvBuffers buffers;
  try {
    TG_RETURN_IF_ERROR(AllocateBuffers(*p, {input, filter, output}, &buffers));
    Execute(*p, buffers);
  } catch (const dnnl::error& e) {
    return DnnlError("run", pass, e);
  }
  return absl::OkStatus();
}

std::string DnnlConvImplementation(const ConvGeometry& geometry, ConvPass pass) {
  absl::StatusOr<std::shared_ptr<const ConvPrimitive>> p = GetPrimitive(geometry, pass);
  return p.ok() ? (*p)->implementation : std::string(p.status().message());
}

size_t DnnlConvCacheSize() { return Cache().size(); }

int DnnlConvBuiltThreads(const ConvGeometry& geometry, ConvPass pass, int num_threads) {
  std::shared_ptr<const ConvPrimitive> p =
      Cache().Find(DnnlConvKey(std::max(1, num_threads), ConvKeyOf(geometry, pass)));
  return p == nullptr ? 0 : p->threads;
}

}  // namespace conv
}  // namespace tensorgrid
