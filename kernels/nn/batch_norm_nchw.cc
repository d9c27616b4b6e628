#define EIGEN_USE_THREADS

#include "kernels/nn/batch_norm_nchw.h"

#include <cmath>

#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace nn {
namespace {

using Block = Eigen::Map<Eigen::ArrayXf>;
using ConstBlock = Eigen::Map<const Eigen::ArrayXf>;

// Calls fn(c) for every channel on the intra-op pool.
template <typename Fn>
void ForEachChannel(const OpKernelContext& ctx, const std::array<int64_t, 4>& dims, double passes,
                    Fn fn) {
  const double bytes = static_cast<double>(dims[0]) * dims[2] * dims[3] * sizeof(float) * passes;
  ctx.eigen_cpu_device().parallelFor(dims[1], Eigen::TensorOpCost(bytes, bytes / 2, bytes / 4),
                                     [&](Eigen::Index begin, Eigen::Index end) {
                                       for (Eigen::Index c = begin; c < end; ++c) fn(c);
                                     });
}

// The batch mean and biased variance of channel c (two passes, double sums).
void ChannelStats(const BatchNormForwardArgs& a, int64_t c) {
  const int64_t n = a.dims[0], channels = a.dims[1], hw = a.dims[2] * a.dims[3];
  double sum = 0;
  for (int64_t b = 0; b < n; ++b) sum += ConstBlock(a.x + (b * channels + c) * hw, hw).sum();
  const float mean = static_cast<float>(sum / (n * hw));
  double squares = 0;
  for (int64_t b = 0; b < n; ++b) {
    squares += (ConstBlock(a.x + (b * channels + c) * hw, hw) - mean).square().sum();
  }
  a.mean[c] = mean;
  a.variance[c] = static_cast<float>(squares / (n * hw));
}

}  // namespace

void BatchNormForwardNCHW(const OpKernelContext& ctx, const BatchNormForwardArgs& a) {
  const int64_t n = a.dims[0], channels = a.dims[1], hw = a.dims[2] * a.dims[3];
  ForEachChannel(ctx, a.dims, a.is_training ? 4 : 2, [&](int64_t c) {
    if (a.is_training) ChannelStats(a, c);
    const float mul = a.scale[c] / std::sqrt(a.variance[c] + a.epsilon);
    const float add = a.offset[c] - a.mean[c] * mul;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t at = (b * channels + c) * hw;
      Block(a.y + at, hw) = ConstBlock(a.x + at, hw) * mul + add;
    }
  });
}

void BatchNormBackwardNCHW(const OpKernelContext& ctx, const BatchNormBackwardArgs& a) {
  const int64_t n = a.dims[0], channels = a.dims[1], hw = a.dims[2] * a.dims[3];
  ForEachChannel(ctx, a.dims, 5, [&](int64_t c) {
    const float mean = a.mean[c];
    const float inv = 1 / std::sqrt(a.variance[c] + a.epsilon);
    double sum_dy = 0, sum_dy_xc = 0;  // sums of dy and dy * (x - mean)
    for (int64_t b = 0; b < n; ++b) {
      const int64_t at = (b * channels + c) * hw;
      const ConstBlock dy(a.dy + at, hw);
      sum_dy += dy.sum();
      sum_dy_xc += (dy * (ConstBlock(a.x + at, hw) - mean)).sum();
    }
    a.doffset[c] = static_cast<float>(sum_dy);
    a.dscale[c] = static_cast<float>(sum_dy_xc * inv);
    // training: dx = scale * inv * (dy - mean(dy) - (x - mean) * inv^2 * mean(dy * (x - mean)))
    const float mul = a.scale[c] * inv;
    const double count = static_cast<double>(n * hw);
    const float shift = a.is_training ? static_cast<float>(sum_dy / count) : 0.f;
    const float slope = a.is_training ? static_cast<float>(sum_dy_xc / count) * inv * inv : 0.f;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t at = (b * channels + c) * hw;
      Block(a.dx + at, hw) =
          mul * (ConstBlock(a.dy + at, hw) - shift - (ConstBlock(a.x + at, hw) - mean) * slope);
    }
  });
}

}  // namespace nn
}  // namespace tensorgrid
