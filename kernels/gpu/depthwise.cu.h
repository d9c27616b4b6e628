// Depthwise convolution (DepthwiseConv2dNative, and Conv2D with one group
// per input channel) forward and backprop-input as CUDA kernels, either data
// format, any stride, dilation and padding. Each thread computes one element
// of the tensor it writes by gathering (so no atomics and the same sum on
// every run); consecutive threads read consecutive channels (NHWC) or
// columns (NCHW). In NHWC with one filter per channel (MobileNet's), a
// channel count that is a multiple of 4 and 16-byte aligned buffers, a thread
// computes 4 channels with float4 loads and stores. cuDNN 9's grouped
// convolution with one channel a group (the legacy API, fp32 FMA) took
// 0.56-0.68 ms where PyTorch took 0.06 ms on an H200 (docs/gpu.md), which is
// why conv_ops_gpu.cc sends these two passes here; the filter's gradient, a reduction over the
// batch and the image, stays with cuDNN.
//
// Tensors: input [batch, in_rows, in_cols, channels] (or NCHW), filter
// [window_rows, window_cols, channels, multiplier] (TensorFlow's order),
// output [batch, out_rows, out_cols, channels * multiplier] (or NCHW).
// Launchers return the launch error.
#ifndef TENSORGRID_KERNELS_GPU_DEPTHWISE_CU_H_
#define TENSORGRID_KERNELS_GPU_DEPTHWISE_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

struct DepthwiseShape {
  bool nhwc = true;
  int64_t batch = 0, channels = 0, multiplier = 1;
  int64_t in_rows = 0, in_cols = 0, out_rows = 0, out_cols = 0;
  int64_t window_rows = 1, window_cols = 1, stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

// output from input and filter.
cudaError_t LaunchDepthwiseForward(const DepthwiseShape& s, const float* input, const float* filter,
                                   float* output, int sms, cudaStream_t stream);

// input_grad (the input's shape) from the filter and the output's gradient.
cudaError_t LaunchDepthwiseBackpropInput(const DepthwiseShape& s, const float* output_grad,
                                         const float* filter, float* input_grad, int sms,
                                         cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_DEPTHWISE_CU_H_
