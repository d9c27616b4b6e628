// MaxPool, AvgPool and their gradients as CUDA kernels (pooling_gpu.cc runs
// them), either data format, TensorFlow's windows and paddings (asymmetric
// ones included). AvgPool divides by the window's positions inside the input
// (padding excluded); MaxPoolGrad sends each window's gradient to the first
// position of its maximum in row-major window order, as the CPU kernel. The
// gradients gather: each input position sums over the windows that cover
// it, so no atomics and the same sum on every run. Launchers return the
// launch error.
#ifndef TENSORGRID_KERNELS_GPU_POOLING_CU_H_
#define TENSORGRID_KERNELS_GPU_POOLING_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

struct PoolShape {
  bool nhwc = true;
  int64_t batch = 0, channels = 0;
  int64_t in_rows = 0, in_cols = 0, out_rows = 0, out_cols = 0;
  int64_t window_rows = 1, window_cols = 1, stride_rows = 1, stride_cols = 1;
  int64_t pad_top = 0, pad_left = 0;
};

enum class PoolKind { kMax, kAvg };

// output (the pooled shape) from input.
cudaError_t LaunchPool(PoolKind kind, const PoolShape& s, const float* input, float* output,
                       int sms, cudaStream_t stream);

// MaxPoolGrad: input_grad (the input's shape) from the input and the
// output's gradient.
cudaError_t LaunchMaxPoolGrad(const PoolShape& s, const float* input, const float* grad,
                              float* input_grad, int sms, cudaStream_t stream);

// AvgPoolGrad: input_grad from the output's gradient.
cudaError_t LaunchAvgPoolGrad(const PoolShape& s, const float* grad, float* input_grad, int sms,
                              cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_POOLING_CU_H_
