// One pass of a 2-D convolution through cuDNN 9 on a GpuDevice's stream, on
// float buffers in TensorFlow's layouts (the same contract as
// kernels/conv/dnnl_conv.h's RunDnnlConv): activations NHWC or NCHW as
// `geometry.format` says, the filter [rows, cols, in/groups, out].
//
//  - the filter is transposed into cuDNN's layout for the activations'
//    (KRSC for NHWC, KCRS for NCHW) in a temporary buffer, and a filter
//    gradient back into TensorFlow's;
//  - cuDNN pads symmetrically: where TensorFlow's padding is not (SAME with
//    an odd total, EXPLICIT), the input is copied into a zeroed buffer with
//    the difference, and an input gradient cropped back out of one;
//  - a depthwise convolution is a grouped one with a group per channel;
//  - the algorithm is chosen once per geometry, pass and device by timing
//    them (cudnnFind*AlgorithmEx) and cached (kCudnnConvCacheCapacity
//    entries); its workspace comes from the device's allocator;
//  - fp32 arithmetic (CUDNN_FMA_MATH) unless TG_GPU_ALLOW_TF32=1, as MatMul.
//
// One cuDNN handle per GPU, used under its lock (cuDNN handles are not for
// two threads at once), bound to the calling device's stream.
#ifndef TENSORGRID_KERNELS_GPU_CUDNN_CONV_H_
#define TENSORGRID_KERNELS_GPU_CUDNN_CONV_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "core/util/conv_geometry.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/conv/conv_kernels.h"

namespace tensorgrid {
namespace gpu {

inline constexpr size_t kCudnnConvCacheCapacity = 256;

// Runs `pass` of `geometry` (every size known and positive) on `gpu`'s
// stream; the buffer the pass writes (device memory) is overwritten. Internal
// "cuDNN error ..." naming the pass and the call when cuDNN fails,
// ResourceExhausted when a temporary buffer does not fit.
absl::Status RunCudnnConv(GpuDevice* gpu, const ConvGeometry& geometry, conv::ConvPass pass,
                          float* input, float* filter, float* output);

// The algorithm chosen for `pass` of `geometry` on `gpu` ("IMPLICIT_PRECOMP_GEMM,
// 0 bytes of workspace"), or why none was: for benchmarks and docs.
std::string CudnnConvAlgorithm(GpuDevice* gpu, const ConvGeometry& geometry, conv::ConvPass pass);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_CUDNN_CONV_H_
