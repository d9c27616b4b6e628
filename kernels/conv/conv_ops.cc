// The CPU kernels of Conv2D, DepthwiseConv2dNative and their backprops
// (float), through oneDNN (dnnl_conv.h). One kernel class per pass, for both
// kinds: a depthwise convolution is a grouped one with a group per input
// channel. The geometry comes from core/util/conv_geometry.h, checked against
// the tensors on every call; the primitive is built once per geometry.
#define EIGEN_USE_THREADS  // for the intra-op pool's size

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/util/conv_geometry.h"
#include "kernels/conv/dnnl_conv.h"
#include "kernels/index_values.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace conv {
namespace {

std::string Dims(absl::Span<const int64_t> dims) {
  return IndexValuesString(std::vector<int64_t>(dims.begin(), dims.end()));
}

// The node's convolution attrs, or its constructor's error (the kernel
// registry adds the node's name).
Conv2DAttrs ReadAttrs(OpKernelConstruction& ctx) {
  absl::StatusOr<Conv2DAttrs> attrs = ParseConv2DAttrs(ctx.def());
  if (attrs.ok()) return *attrs;
  ctx.SetStatus(attrs.status());
  return Conv2DAttrs{};
}

// input_sizes / filter_sizes: an int32 vector of 4 non-negative sizes.
absl::StatusOr<std::vector<int64_t>> ReadSizes(const Tensor& t, const char* what) {
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

int Threads(const OpKernelContext& ctx) { return ctx.eigen_cpu_device().numThreads(); }

void Zero(Tensor* t) { std::fill_n(t->data<float>(), t->NumElements(), 0.0f); }

// Conv2D, DepthwiseConv2dNative: output = conv(input, filter).
template <ConvKind kKind>
class ConvOp final : public OpKernel {
 public:
  explicit ConvOp(OpKernelConstruction& ctx) : OpKernel(ctx), attrs_(ReadAttrs(ctx)) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    TG_ASSIGN_OR_RETURN(ConvGeometry g,
                        ComputeConvGeometry(attrs_, kKind, input.shape().dim_sizes(),
                                            filter.shape().dim_sizes()));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape(g.OutputDims()), &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    if (input.NumElements() == 0 || filter.NumElements() == 0) {  // only padding: sums of nothing
      Zero(output);
      return absl::OkStatus();
    }
    return RunDnnlConv(g, ConvPass::kForward, Threads(ctx), input.data<float>(),
                       filter.data<float>(), output->data<float>());
  }

 private:
  const Conv2DAttrs attrs_;
};

// Conv2DBackpropInput, DepthwiseConv2dNativeBackpropInput: inputs
// input_sizes, filter, out_backprop.
template <ConvKind kKind>
class ConvBackpropInputOp final : public OpKernel {
 public:
  explicit ConvBackpropInputOp(OpKernelConstruction& ctx) : OpKernel(ctx), attrs_(ReadAttrs(ctx)) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(std::vector<int64_t> input_sizes, ReadSizes(ctx.input(0), "input_sizes"));
    const Tensor& filter = ctx.input(1);
    const Tensor& out_backprop = ctx.input(2);
    TG_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, kKind, input_sizes,
                                                            filter.shape().dim_sizes()));
    TG_RETURN_IF_ERROR(CheckOutBackprop(g, out_backprop));
    Tensor* output;
    TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(input_sizes));
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    if (out_backprop.NumElements() == 0 || filter.NumElements() == 0) {
      Zero(output);
      return absl::OkStatus();
    }
    return RunDnnlConv(g, ConvPass::kBackwardData, Threads(ctx), output->data<float>(),
                       filter.data<float>(), out_backprop.data<float>());
  }

 private:
  const Conv2DAttrs attrs_;
};

// Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropFilter: inputs input,
// filter_sizes, out_backprop.
template <ConvKind kKind>
class ConvBackpropFilterOp final : public OpKernel {
 public:
  explicit ConvBackpropFilterOp(OpKernelConstruction& ctx)
      : OpKernel(ctx), attrs_(ReadAttrs(ctx)) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(std::vector<int64_t> filter_sizes,
                        ReadSizes(ctx.input(1), "filter_sizes"));
    const Tensor& out_backprop = ctx.input(2);
    TG_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, kKind,
                                                            input.shape().dim_sizes(),
                                                            filter_sizes));
    TG_RETURN_IF_ERROR(CheckOutBackprop(g, out_backprop));
    Tensor* output;
    TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(filter_sizes));
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    if (out_backprop.NumElements() == 0 || input.NumElements() == 0) {
      Zero(output);
      return absl::OkStatus();
    }
    return RunDnnlConv(g, ConvPass::kBackwardFilter, Threads(ctx), input.data<float>(),
                       output->data<float>(), out_backprop.data<float>());
  }

 private:
  const Conv2DAttrs attrs_;
};

constexpr ConvKind kConv2D = ConvKind::kConv2D;
constexpr ConvKind kDepthwise = ConvKind::kDepthwise;

TG_REGISTER_KERNEL(KernelDefBuilder("Conv2D").TypeConstraint<float>("T"), ConvOp<kConv2D>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropInput").TypeConstraint<float>("T"),
                   ConvBackpropInputOp<kConv2D>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropFilter").TypeConstraint<float>("T"),
                   ConvBackpropFilterOp<kConv2D>);
TG_REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNative").TypeConstraint<float>("T"),
                   ConvOp<kDepthwise>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNativeBackpropInput").TypeConstraint<float>("T"),
    ConvBackpropInputOp<kDepthwise>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNativeBackpropFilter").TypeConstraint<float>("T"),
    ConvBackpropFilterOp<kDepthwise>);

}  // namespace
}  // namespace conv
}  // namespace tensorgrid
