#include "kernels/conv/dnnl_conv.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/framework/tensor.h"
#include "core/platform/status.h"
#include "kernels/conv/bounded_cache.h"
#include "kernels/onednn.h"
#include "kernels/openmp.h"

namespace tensorgrid {
namespace conv {
namespace {

using dnnl::memory;

const dnnl::engine& Engine() { return OneDnnCpuEngine(); }

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
        written ? dnnl::reorder::primitive_desc(Engine(), wanted, Engine(), user, attr)
                : dnnl::reorder::primitive_desc(Engine(), user, Engine(), wanted, attr);
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
      attr, Engine());
  auto p = std::make_unique<ConvPrimitive>();
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
          attr, Engine(), fwd);
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
          attr, Engine(), fwd);
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

BoundedCache<ConvKey, ConvPrimitive>& Cache() {
  static auto* cache = new BoundedCache<ConvKey, ConvPrimitive>(kDnnlConvCacheCapacity);
  return *cache;
}

absl::StatusOr<std::shared_ptr<const ConvPrimitive>> GetPrimitive(const ConvGeometry& g,
                                                                  ConvPass pass) {
  return Cache().GetOrCreate(ConvKeyOf(g, pass),
                             [&]() -> absl::StatusOr<std::unique_ptr<ConvPrimitive>> {
                               try {
                                 return BuildOrThrow(g, pass);
                               } catch (const dnnl::error& e) {
                                 return DnnlError("build", pass, e);
                               }
                             });
}

// Runs an argument's reorder from `from` to `to`, with its own scratchpad;
// throws dnnl::error.
absl::Status Reorder(const dnnl::stream& stream, const ConvArg& arg, const memory& from,
                     const memory& to) {
  std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  Tensor holder;
  if (arg.reorder_scratchpad.get_size() > 0) {
    TG_ASSIGN_OR_RETURN(args[DNNL_ARG_SCRATCHPAD],
                        OneDnnTempMemory(arg.reorder_scratchpad, &holder));
  }
  arg.reorder->execute(stream, args);
  return absl::OkStatus();
}

// Executes `p` on the three buffers, with the reordered copies and the
// scratchpad in tensor buffers (onednn.h says why); throws dnnl::error.
absl::Status ExecuteOrThrow(const ConvPrimitive& p, const std::array<float*, 3>& buffers) {
  thread_local dnnl::stream stream(Engine());
  std::array<memory, 3> user, used;
  std::array<Tensor, 4> holders;  // the three reordered copies, the scratchpad
  std::unordered_map<int, memory> args;
  for (int i = 0; i < 3; ++i) {
    const ConvArg& arg = p.args[i];
    user[i] = memory(arg.user, Engine(), buffers[i]);
    used[i] = user[i];
    if (arg.reorder) {
      TG_ASSIGN_OR_RETURN(used[i], OneDnnTempMemory(arg.wanted, &holders[i]));
      if (!arg.written) TG_RETURN_IF_ERROR(Reorder(stream, arg, user[i], used[i]));
    }
    args[arg.dnnl_arg] = used[i];
  }
  if (p.scratchpad.get_size() > 0) {
    TG_ASSIGN_OR_RETURN(args[DNNL_ARG_SCRATCHPAD], OneDnnTempMemory(p.scratchpad, &holders[3]));
  }
  p.primitive.execute(stream, args);
  for (int i = 0; i < 3; ++i) {
    const ConvArg& arg = p.args[i];
    if (arg.reorder && arg.written) TG_RETURN_IF_ERROR(Reorder(stream, arg, used[i], user[i]));
  }
  stream.wait();
  return absl::OkStatus();
}

}  // namespace

absl::Status RunDnnlConv(const ConvGeometry& geometry, ConvPass pass, int num_threads, float* input,
                         float* filter, float* output) {
  TG_ASSIGN_OR_RETURN(std::shared_ptr<const ConvPrimitive> p, GetPrimitive(geometry, pass));
  SetOpenMpThreads(num_threads);  // this caller's intra-op thread count
  try {
    TG_RETURN_IF_ERROR(ExecuteOrThrow(*p, {input, filter, output}));
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

}  // namespace conv
}  // namespace tensorgrid
