// Batch normalization's CUDA kernels (batch_norm_gpu.cc runs them) over x
// viewed as [outer, channels, inner]: NHWC is [N*H*W, C, 1], NCHW [N, C, H*W].
// Per-channel sums are accumulated in double (a block's threads, then one
// atomic add per block and channel), so that a channel of a few hundred
// thousand values keeps float precision. Launchers return the launch error.
#ifndef TENSORGRID_KERNELS_GPU_BATCH_NORM_CU_H_
#define TENSORGRID_KERNELS_GPU_BATCH_NORM_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

struct ChannelLayout {
  int64_t outer = 0, channels = 0, inner = 0;
  __host__ __device__ int64_t per_channel() const { return outer * inner; }
};

// The batch's mean and biased variance of each channel (two passes over x);
// `sums` is scratch for 2 * channels doubles.
cudaError_t LaunchBatchMoments(const float* x, const ChannelLayout& l, double* sums, float* mean,
                               float* variance, int sms, cudaStream_t stream);

// y = (x - mean[c]) / sqrt(variance[c] + epsilon) * scale[c] + offset[c].
cudaError_t LaunchBatchNormalize(const float* x, const float* scale, const float* offset,
                                 const float* mean, const float* variance, float epsilon,
                                 const ChannelLayout& l, float* y, int sms, cudaStream_t stream);

// TensorFlow's moving statistics: (1 - factor) * old + factor * batch, the
// batch variance times n / (n - 1) (n / 1 when n is 1); the batch's alone
// when factor is 1 (old_* are then not read).
cudaError_t LaunchMovingStats(const float* mean, const float* variance, const float* old_mean,
                              const float* old_variance, float factor, int64_t n, int64_t channels,
                              float* moving_mean, float* moving_variance, cudaStream_t stream);

// The gradients of y = normalize(x) * scale + offset, with the `mean` and
// (biased) `variance` the forward pass used: doffset = sum(dy), dscale =
// sum(dy * x̂); dx through the batch statistics in training, with them as
// constants in inference. `sums` is scratch for 2 * channels doubles.
cudaError_t LaunchBatchNormGrad(const float* dy, const float* x, const float* scale,
                                const float* mean, const float* variance, float epsilon,
                                bool is_training, const ChannelLayout& l, double* sums, float* dx,
                                float* dscale, float* doffset, int sms, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_BATCH_NORM_CU_H_
