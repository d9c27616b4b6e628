// The CPU kernels of Conv2D, DepthwiseConv2dNative and their backprops
// (float), through oneDNN (dnnl_conv.h): conv_kernels.h's kernels with the
// oneDNN backend. A depthwise convolution is a grouped one with a group per
// input channel. The geometry comes from core/util/conv_geometry.h, checked
// against the tensors on every call; the primitive is built once per
// geometry and thread count.
#define EIGEN_USE_THREADS  // for the intra-op pool's size

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/util/conv_geometry.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/dnnl_conv.h"
#include "kernels/index_values.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace conv {

namespace {

std::string Dims(absl::Span<const int64_t> dims) {
  return IndexValuesString(std::vector<int64_t>(dims.begin(), dims.end()));
}

}  // namespace

const char* ConvPassName(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "forward";
    case ConvPass::kBackwardData: return "backward-data";
    case ConvPass::kBackwardFilter: return "backward-filter";
  }
  return "?";
}

ConvKey ConvKeyOf(const ConvGeometry& g, ConvPass pass) {
  return {static_cast<int64_t>(pass),
          static_cast<int64_t>(g.format),
          g.batch,
          g.in_depth,
          g.out_depth,
          g.groups,
          g.rows.input,
          g.rows.window,
          g.rows.stride,
          g.rows.dilation,
          g.rows.pad_before,
          g.rows.pad_after,
          g.rows.output,
          g.cols.input,
          g.cols.window,
          g.cols.stride,
          g.cols.dilation,
          g.cols.pad_before,
          g.cols.pad_after,
          g.cols.output};
}

Conv2DAttrs ReadConvAttrs(OpKernelConstruction& ctx) {
  absl::StatusOr<Conv2DAttrs> attrs = ParseConv2DAttrs(ctx.def());
  if (attrs.ok()) return *attrs;
  ctx.SetStatus(attrs.status());
  return Conv2DAttrs{};
}

absl::StatusOr<std::vector<int64_t>> ReadConvSizes(const Tensor& t, const char* what) {
  if (t.dims() != 1 || t.NumElements() != 4) {
    return errors::InvalidArgument(what, " must be a vector of 4 sizes, got shape ",
                                   t.shape().DebugString());
  }
  std::vector<int64_t> sizes = IndexValues(t);
  for (int64_t s : sizes) {
    if (s < 0) return errors::InvalidArgument(what, " must not be negative, got ", Dims(sizes));
  }
  return sizes;
}

absl::Status CheckOutBackprop(const ConvGeometry& g, const Tensor& out_backprop) {
  const std::vector<int64_t> want = g.OutputDims();
  if (out_backprop.shape().dim_sizes() != absl::Span<const int64_t>(want)) {
    return errors::InvalidArgument("out_backprop has shape ", out_backprop.shape().DebugString(),
                                   " but the convolution's output is ", Dims(want));
  }
  return absl::OkStatus();
}

namespace {

// oneDNN with the kernel's intra-op thread count.
struct Dnnl {
  static absl::Status Run(OpKernelContext& ctx, const ConvGeometry& g, ConvPass pass, float* input,
                          float* filter, float* output) {
    return RunDnnlConv(g, pass, ctx.eigen_cpu_device().numThreads(), input, filter, output);
  }
  static absl::Status Zero(OpKernelContext&, Tensor* t) {
    std::fill_n(t->data<float>(), t->NumElements(), 0.0f);
    return absl::OkStatus();
  }
};

constexpr ConvKind kConv2D = ConvKind::kConv2D;
constexpr ConvKind kDepthwise = ConvKind::kDepthwise;

TG_REGISTER_KERNEL(KernelDefBuilder("Conv2D").TypeConstraint<float>("T"), ConvOp<kConv2D, Dnnl>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropInput").TypeConstraint<float>("T"),
                   ConvBackpropInputOp<kConv2D, Dnnl>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropFilter").TypeConstraint<float>("T"),
                   ConvBackpropFilterOp<kConv2D, Dnnl>);
TG_REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNative").TypeConstraint<float>("T"),
                   ConvOp<kDepthwise, Dnnl>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNativeBackpropInput").TypeConstraint<float>("T"),
    ConvBackpropInputOp<kDepthwise, Dnnl>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNativeBackpropFilter").TypeConstraint<float>("T"),
    ConvBackpropFilterOp<kDepthwise, Dnnl>);

}  // namespace
}  // namespace conv
}  // namespace tensorgrid
