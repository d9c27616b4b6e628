// One pass of a 2-D convolution through cuDNN 9 on a GpuDevice's stream, on
// float buffers in TensorFlow's layouts (the same contract as
// kernels/conv/dnnl_conv.h's RunDnnlConv): activations NHWC or NCHW as
// `geometry.format` says, the filter [rows, cols, in/groups, out].
//
//  - the filter is transposed into cuDNN's layout for the activations'
//    (KRSC for NHWC, KCRS for NCHW) in a temporary buffer, and a filter
//    gradient back into TensorFlow's;
//  - a graph plan takes TensorFlow's padding as it is, even where it is not
//    symmetric (SAME with an odd total, EXPLICIT); where no plan does, and
//    on the legacy API, which pads symmetrically, the input is copied into
//    a zeroed buffer with the difference, and an input gradient cropped
//    back out of one;
//  - a depthwise convolution is a grouped one with a group per channel;
//  - a convolution runs as a cuDNN graph execution plan (cudnn_graph.h):
//    the heuristics' first 8 plans (fp32 ones unless TF32 is allowed) are
//    timed once per geometry, pass, device and alignment of the buffers,
//    and the fastest is cached (kCudnnConvCacheCapacity entries); its workspace comes from the
//    device's allocator. Where the graph API has no plan (or with
//    TG_CUDNN_LEGACY_API=1) the legacy API runs it, its algorithm chosen the
//    same way (cudnnFind*AlgorithmEx);
//  - fp32 arithmetic (CUDNN_FMA_MATH) unless TG_GPU_ALLOW_TF32=1, as MatMul.
//
// One cuDNN handle per GPU, used under its lock (cuDNN handles are not for
// two threads at once), bound to the calling device's stream.
#ifndef TENSORGRID_KERNELS_GPU_CUDNN_CONV_H_
#define TENSORGRID_KERNELS_GPU_CUDNN_CONV_H_

#include <cstddef>
#include <cstdint>
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

// How many convolutions (a geometry, pass, GPU and alignment) the process has
// planned with each of cuDNN's APIs, and why the last that went to the
// legacy API did: for tests and benchmarks.
struct CudnnConvApiCounts {
  int64_t graph = 0;
  // Of those, the plans that took an asymmetric padding as it is (no padded
  // copy of the input).
  int64_t graph_asymmetric = 0;
  int64_t legacy = 0;
  std::string last_legacy_reason;
};
CudnnConvApiCounts CudnnConvApis();

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_CUDNN_CONV_H_
