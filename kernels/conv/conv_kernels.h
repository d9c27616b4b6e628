// The kernels of Conv2D, DepthwiseConv2dNative and their backprops, whatever
// runs the convolution: the checks, the output's allocation and the empty
// cases are here once, and a backend runs the pass. conv_ops.cc instantiates
// them with oneDNN on the CPU (dnnl_conv.h), kernels/gpu/conv_ops_gpu.cc with
// cuDNN on the GPU (cudnn_conv.h). A backend is a struct with
//
//   // Runs `pass` of `g` (every size known and positive) on the kernel's
//   // device; the buffer the pass writes is overwritten.
//   static absl::Status Run(OpKernelContext& ctx, const ConvGeometry& g, ConvPass pass,
//                           float* input, float* filter, float* output);
//   // Sets every element of `t` (in the device's memory) to 0.
//   static absl::Status Zero(OpKernelContext& ctx, Tensor* t);
#ifndef TENSORGRID_KERNELS_CONV_CONV_KERNELS_H_
#define TENSORGRID_KERNELS_CONV_CONV_KERNELS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/util/conv_geometry.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace conv {

// kForward: output = conv(input, filter).
// kBackwardData: input = the gradient wrt the input, from out_backprop (in
//   `output`) and filter.
// kBackwardFilter: filter = the gradient wrt the filter, from input and
//   out_backprop (in `output`).
enum class ConvPass { kForward, kBackwardData, kBackwardFilter };

const char* ConvPassName(ConvPass pass);

// Every size of the geometry and the pass: two keys are equal exactly when a
// backend's plan for one serves the other.
using ConvKey = std::array<int64_t, 20>;
ConvKey ConvKeyOf(const ConvGeometry& g, ConvPass pass);

// The node's convolution attrs, or its constructor's error (the kernel
// registry adds the node's name).
Conv2DAttrs ReadConvAttrs(OpKernelConstruction& ctx);
// input_sizes / filter_sizes: an int32 vector of 4 non-negative sizes.
absl::StatusOr<std::vector<int64_t>> ReadConvSizes(const Tensor& t, const char* what);
// InvalidArgument unless out_backprop has the convolution's output shape.
absl::Status CheckOutBackprop(const ConvGeometry& g, const Tensor& out_backprop);

// Conv2D, DepthwiseConv2dNative: output = conv(input, filter).
template <ConvKind kKind, typename Backend>
class ConvOp final : public OpKernel {
 public:
  explicit ConvOp(OpKernelConstruction& ctx) : OpKernel(ctx), attrs_(ReadConvAttrs(ctx)) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    TG_ASSIGN_OR_RETURN(
        ConvGeometry g,
        ComputeConvGeometry(attrs_, kKind, input.shape().dim_sizes(), filter.shape().dim_sizes()));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape(g.OutputDims()), &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    if (input.NumElements() == 0 || filter.NumElements() == 0) {  // only padding: sums of nothing
      return Backend::Zero(ctx, output);
    }
    return Backend::Run(ctx, g, ConvPass::kForward, input.data<float>(), filter.data<float>(),
                        output->data<float>());
  }

 private:
  const Conv2DAttrs attrs_;
};

// Conv2DBackpropInput, DepthwiseConv2dNativeBackpropInput: inputs
// input_sizes, filter, out_backprop.
template <ConvKind kKind, typename Backend>
class ConvBackpropInputOp final : public OpKernel {
 public:
  explicit ConvBackpropInputOp(OpKernelConstruction& ctx)
      : OpKernel(ctx), attrs_(ReadConvAttrs(ctx)) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(std::vector<int64_t> input_sizes,
                        ReadConvSizes(ctx.input(0), "input_sizes"));
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
      return Backend::Zero(ctx, output);
    }
    return Backend::Run(ctx, g, ConvPass::kBackwardData, output->data<float>(),
                        filter.data<float>(), out_backprop.data<float>());
  }

 private:
  const Conv2DAttrs attrs_;
};

// Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropFilter: inputs input,
// filter_sizes, out_backprop.
template <ConvKind kKind, typename Backend>
class ConvBackpropFilterOp final : public OpKernel {
 public:
  explicit ConvBackpropFilterOp(OpKernelConstruction& ctx)
      : OpKernel(ctx), attrs_(ReadConvAttrs(ctx)) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(std::vector<int64_t> filter_sizes,
                        ReadConvSizes(ctx.input(1), "filter_sizes"));
    const Tensor& out_backprop = ctx.input(2);
    TG_ASSIGN_OR_RETURN(
        ConvGeometry g,
        ComputeConvGeometry(attrs_, kKind, input.shape().dim_sizes(), filter_sizes));
    TG_RETURN_IF_ERROR(CheckOutBackprop(g, out_backprop));
    Tensor* output;
    TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(filter_sizes));
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    if (out_backprop.NumElements() == 0 || input.NumElements() == 0) {
      return Backend::Zero(ctx, output);
    }
    return Backend::Run(ctx, g, ConvPass::kBackwardFilter, input.data<float>(),
                        output->data<float>(), out_backprop.data<float>());
  }

 private:
  const Conv2DAttrs attrs_;
};

}  // namespace conv
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_CONV_CONV_KERNELS_H_
