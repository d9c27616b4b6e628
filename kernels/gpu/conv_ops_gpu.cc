// Conv2D, DepthwiseConv2dNative and their backprops on the GPU (float):
// conv_kernels.h's kernels with cuDNN (cudnn_conv.h) running the pass, except
// the forward and backprop-input passes of a depthwise convolution (one
// group per input channel, either op), which depthwise.cu.h's kernels run.
// The sizes inputs of the backprops stay in host memory.
#include "core/framework/op_kernel.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/gpu/cudnn_conv.h"
#include "kernels/gpu/depthwise.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

using conv::ConvBackpropFilterOp;
using conv::ConvBackpropInputOp;
using conv::ConvOp;
using conv::ConvPass;

DepthwiseShape DepthwiseShapeOf(const ConvGeometry& g) {
  DepthwiseShape s;
  s.nhwc = g.format == DataFormat::kNHWC;
  s.batch = g.batch;
  s.channels = g.in_depth;
  s.multiplier = g.out_depth / g.in_depth;
  s.in_rows = g.rows.input;
  s.in_cols = g.cols.input;
  s.out_rows = g.rows.output;
  s.out_cols = g.cols.output;
  s.window_rows = g.rows.window;
  s.window_cols = g.cols.window;
  s.stride_rows = g.rows.stride;
  s.stride_cols = g.cols.stride;
  s.dilation_rows = g.rows.dilation;
  s.dilation_cols = g.cols.dilation;
  s.pad_top = g.rows.pad_before;
  s.pad_bottom = g.rows.pad_after;
  s.pad_left = g.cols.pad_before;
  s.pad_right = g.cols.pad_after;
  return s;
}

// conv_kernels.h's backend on the GPU: depthwise.cu.h's kernels for a
// depthwise convolution's forward and input-gradient passes, cuDNN for the rest.
struct GpuBackend {
  static absl::Status Run(OpKernelContext& ctx, const ConvGeometry& g, ConvPass pass, float* input,
                          float* filter, float* output) {
    GpuDevice* gpu = GpuDevice::From(ctx);
    const bool depthwise = g.groups > 1 && g.groups == g.in_depth;
    if (depthwise && pass == ConvPass::kForward) {
      return CudaStatus(LaunchDepthwiseForward(DepthwiseShapeOf(g), input, filter, output,
                                               gpu->multiprocessors(), gpu->stream()),
                        "a depthwise convolution");
    }
    if (depthwise && pass == ConvPass::kBackwardData) {
      return CudaStatus(LaunchDepthwiseBackpropInput(DepthwiseShapeOf(g), output, filter, input,
                                                     gpu->multiprocessors(), gpu->stream()),
                        "a depthwise convolution's input gradient");
    }
    return RunCudnnConv(gpu, g, pass, input, filter, output);
  }
  static absl::Status Zero(OpKernelContext& ctx, Tensor* t) {
    return CudaStatus(
        cudaMemsetAsync(t->raw_data(), 0, t->TotalBytes(), GpuDevice::From(ctx)->stream()),
        "zeroing a convolution's output");
  }
};

constexpr ConvKind kConv2D = ConvKind::kConv2D;
constexpr ConvKind kDepthwise = ConvKind::kDepthwise;

TG_REGISTER_KERNEL(KernelDefBuilder("Conv2D").Device(DEVICE_GPU).TypeConstraint<float>("T"),
                   ConvOp<kConv2D, GpuBackend>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropInput")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("input_sizes"),
                   ConvBackpropInputOp<kConv2D, GpuBackend>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropFilter")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("filter_sizes"),
                   ConvBackpropFilterOp<kConv2D, GpuBackend>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNative").Device(DEVICE_GPU).TypeConstraint<float>("T"),
    ConvOp<kDepthwise, GpuBackend>);
TG_REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNativeBackpropInput")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("input_sizes"),
                   ConvBackpropInputOp<kDepthwise, GpuBackend>);
TG_REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNativeBackpropFilter")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("filter_sizes"),
                   ConvBackpropFilterOp<kDepthwise, GpuBackend>);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
