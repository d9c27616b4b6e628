// Conv2D, DepthwiseConv2dNative and their backprops on the GPU (float):
// conv_kernels.h's kernels with cuDNN (cudnn_conv.h) running the pass. The
// sizes inputs of the backprops stay in host memory.
#include "core/framework/op_kernel.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/gpu/cudnn_conv.h"

namespace tensorgrid {
namespace gpu {
namespace {

using conv::ConvBackpropFilterOp;
using conv::ConvBackpropInputOp;
using conv::ConvOp;
using conv::ConvPass;

struct Cudnn {
  static absl::Status Run(OpKernelContext& ctx, const ConvGeometry& g, ConvPass pass, float* input,
                          float* filter, float* output) {
    return RunCudnnConv(GpuDevice::From(ctx), g, pass, input, filter, output);
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
                   ConvOp<kConv2D, Cudnn>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropInput")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("input_sizes"),
                   ConvBackpropInputOp<kConv2D, Cudnn>);
TG_REGISTER_KERNEL(KernelDefBuilder("Conv2DBackpropFilter")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("filter_sizes"),
                   ConvBackpropFilterOp<kConv2D, Cudnn>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DepthwiseConv2dNative").Device(DEVICE_GPU).TypeConstraint<float>("T"),
    ConvOp<kDepthwise, Cudnn>);
TG_REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNativeBackpropInput")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("input_sizes"),
                   ConvBackpropInputOp<kDepthwise, Cudnn>);
TG_REGISTER_KERNEL(KernelDefBuilder("DepthwiseConv2dNativeBackpropFilter")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<float>("T")
                       .HostMemory("filter_sizes"),
                   ConvBackpropFilterOp<kDepthwise, Cudnn>);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
