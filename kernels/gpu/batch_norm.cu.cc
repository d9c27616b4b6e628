#include "kernels/gpu/batch_norm.cu.h"

#include <algorithm>

#include "kernels/gpu/cwise_ops.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

// A block of the channel reductions: 32 channels (consecutive in memory for
// NHWC) by 8 rows of positions.
constexpr int kChannels = 32;
constexpr int kRows = 8;
constexpr int kThreads = 256;

// sums[c] += Σ first, sums[channels + c] += Σ second over the positions of
// channel c, where `term` adds an element's two terms.
template <typename Term>
__global__ void ChannelSumsKernel(ChannelLayout l, Term term, double* sums) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kChannels + threadIdx.x;
  const int64_t positions = l.per_channel();
  double first = 0, second = 0;
  if (c < l.channels) {
    for (int64_t p = static_cast<int64_t>(blockIdx.y) * kRows + threadIdx.y; p < positions;
         p += static_cast<int64_t>(gridDim.y) * kRows) {
      const int64_t o = p / l.inner;
      const int64_t index = (o * l.channels + c) * l.inner + (p - o * l.inner);
      term(index, c, &first, &second);
    }
  }
  __shared__ double partial[2][kRows][kChannels];
  partial[0][threadIdx.y][threadIdx.x] = first;
  partial[1][threadIdx.y][threadIdx.x] = second;
  __syncthreads();
  if (threadIdx.y == 0 && c < l.channels) {
    for (int r = 1; r < kRows; ++r) {
      first += partial[0][r][threadIdx.x];
      second += partial[1][r][threadIdx.x];
    }
    atomicAdd(&sums[c], first);
    atomicAdd(&sums[l.channels + c], second);
  }
}

struct SumOfX {
  const float* x;
  __device__ void operator()(int64_t i, int64_t, double* first, double*) const { *first += x[i]; }
};

// Needs the first pass's sums: the mean is sums[c] / n.
struct SumOfSquaredDeviations {
  const float* x;
  const double* sums;
  double n;
  __device__ void operator()(int64_t i, int64_t c, double*, double* second) const {
    const double d = x[i] - sums[c] / n;
    *second += d * d;
  }
};

struct GradSums {
  const float* dy;
  const float* x;
  const float* mean;
  const float* variance;
  float epsilon;
  __device__ void operator()(int64_t i, int64_t c, double* first, double* second) const {
    const double x_hat = (x[i] - mean[c]) * rsqrt(static_cast<double>(variance[c]) + epsilon);
    *first += dy[i];
    *second += dy[i] * x_hat;
  }
};

template <typename Term>
cudaError_t ChannelSums(const ChannelLayout& l, Term term, double* sums, int sms,
                        cudaStream_t stream) {
  const int64_t channel_blocks = (l.channels + kChannels - 1) / kChannels;
  const int64_t most = std::max<int64_t>(1, int64_t{16} * std::max(sms, 1) / channel_blocks);
  const int64_t row_blocks =
      std::min<int64_t>({(l.per_channel() + kRows - 1) / kRows, most, 65535});
  const dim3 grid(static_cast<unsigned>(channel_blocks),
                  static_cast<unsigned>(std::max<int64_t>(row_blocks, 1)));
  ChannelSumsKernel<Term><<<grid, dim3(kChannels, kRows), 0, stream>>>(l, term, sums);
  return cudaGetLastError();
}

__global__ void MomentsKernel(const double* sums, int64_t channels, double n, float* mean,
                              float* variance) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    mean[c] = static_cast<float>(sums[c] / n);
    variance[c] = static_cast<float>(sums[channels + c] / n);
  }
}

__device__ int64_t ChannelOf(int64_t i, const ChannelLayout& l) {
  return (i / l.inner) % l.channels;
}

__global__ void NormalizeKernel(const float* x, const float* scale, const float* offset,
                                const float* mean, const float* variance, float epsilon,
                                ChannelLayout l, int64_t n, float* y) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = ChannelOf(i, l);
    y[i] = (x[i] - mean[c]) * rsqrtf(variance[c] + epsilon) * scale[c] + offset[c];
  }
}

__global__ void MovingStatsKernel(const float* mean, const float* variance, const float* old_mean,
                                  const float* old_variance, double factor, double bessel,
                                  int64_t channels, float* moving_mean, float* moving_variance) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double m = mean[c];
    const double v = variance[c] * bessel;
    const bool blend = factor != 1.0;
    moving_mean[c] = static_cast<float>(blend ? (1 - factor) * old_mean[c] + factor * m : m);
    moving_variance[c] =
        static_cast<float>(blend ? (1 - factor) * old_variance[c] + factor * v : v);
  }
}

// dscale, doffset from the sums; then dx.
__global__ void GradFinishKernel(const double* sums, int64_t channels, float* dscale,
                                 float* doffset) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    doffset[c] = static_cast<float>(sums[c]);
    dscale[c] = static_cast<float>(sums[channels + c]);
  }
}

__global__ void GradXKernel(const float* dy, const float* x, const float* scale, const float* mean,
                            const float* variance, float epsilon, bool is_training,
                            const double* sums, ChannelLayout l, int64_t n, float* dx) {
  const double count = static_cast<double>(l.per_channel());
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = ChannelOf(i, l);
    const double inv = rsqrt(static_cast<double>(variance[c]) + epsilon);
    if (!is_training) {
      dx[i] = static_cast<float>(dy[i] * scale[c] * inv);
      continue;
    }
    const double x_hat = (x[i] - mean[c]) * inv;
    const double mean_dy = sums[c] / count;
    const double mean_dy_x_hat = sums[l.channels + c] / count;
    dx[i] = static_cast<float>(scale[c] * inv * (dy[i] - mean_dy - x_hat * mean_dy_x_hat));
  }
}

}  // namespace

cudaError_t LaunchBatchMoments(const float* x, const ChannelLayout& l, double* sums, float* mean,
                               float* variance, int sms, cudaStream_t stream) {
  if (l.channels <= 0) return cudaSuccess;
  cudaError_t err = cudaMemsetAsync(sums, 0, sizeof(double) * 2 * l.channels, stream);
  if (err != cudaSuccess) return err;
  if ((err = ChannelSums(l, SumOfX{x}, sums, sms, stream)) != cudaSuccess) return err;
  const double n = static_cast<double>(l.per_channel());
  if ((err = ChannelSums(l, SumOfSquaredDeviations{x, sums, n}, sums, sms, stream)) !=
      cudaSuccess) {
    return err;
  }
  MomentsKernel<<<BlocksFor(l.channels, sms), kThreads, 0, stream>>>(sums, l.channels, n, mean,
                                                                     variance);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormalize(const float* x, const float* scale, const float* offset,
                                 const float* mean, const float* variance, float epsilon,
                                 const ChannelLayout& l, float* y, int sms, cudaStream_t stream) {
  const int64_t n = l.outer * l.channels * l.inner;
  if (n <= 0) return cudaSuccess;
  NormalizeKernel<<<BlocksFor(n, sms), kThreads, 0, stream>>>(x, scale, offset, mean, variance,
                                                              epsilon, l, n, y);
  return cudaGetLastError();
}

cudaError_t LaunchMovingStats(const float* mean, const float* variance, const float* old_mean,
                              const float* old_variance, float factor, int64_t n, int64_t channels,
                              float* moving_mean, float* moving_variance, cudaStream_t stream) {
  if (channels <= 0) return cudaSuccess;
  const double bessel = static_cast<double>(n) / static_cast<double>(n > 1 ? n - 1 : 1);
  MovingStatsKernel<<<BlocksFor(channels, 1), kThreads, 0, stream>>>(
      mean, variance, old_mean, old_variance, factor, bessel, channels, moving_mean,
      moving_variance);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormGrad(const float* dy, const float* x, const float* scale,
                                const float* mean, const float* variance, float epsilon,
                                bool is_training, const ChannelLayout& l, double* sums, float* dx,
                                float* dscale, float* doffset, int sms, cudaStream_t stream) {
  if (l.channels <= 0) return cudaSuccess;
  cudaError_t err = cudaMemsetAsync(sums, 0, sizeof(double) * 2 * l.channels, stream);
  if (err != cudaSuccess) return err;
  if ((err = ChannelSums(l, GradSums{dy, x, mean, variance, epsilon}, sums, sms, stream)) !=
      cudaSuccess) {
    return err;
  }
  GradFinishKernel<<<BlocksFor(l.channels, sms), kThreads, 0, stream>>>(sums, l.channels, dscale,
                                                                        doffset);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  const int64_t n = l.outer * l.channels * l.inner;
  if (n <= 0) return cudaSuccess;
  GradXKernel<<<BlocksFor(n, sms), kThreads, 0, stream>>>(dy, x, scale, mean, variance, epsilon,
                                                          is_training, sums, l, n, dx);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace tensorgrid
