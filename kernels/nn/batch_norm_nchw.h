// Batch normalization over NCHW tensors with plain loops, one channel per
// task on the intra-op pool. oneDNN 2.6's NCHW batch norm is its generic
// implementation (ncsp_bnorm), 5-10x slower than PyTorch here; in NCHW each
// channel is N contiguous blocks of H*W floats, which Eigen's vectorized
// reductions handle directly. NHWC stays on oneDNN's JIT kernel.
#ifndef TENSORGRID_KERNELS_NN_BATCH_NORM_NCHW_H_
#define TENSORGRID_KERNELS_NN_BATCH_NORM_NCHW_H_

#include <array>
#include <cstdint>

#include "core/framework/op_kernel.h"

namespace tensorgrid {
namespace nn {

// The tensors of one forward pass; dims are {N, C, H, W}.
struct BatchNormForwardArgs {
  std::array<int64_t, 4> dims;
  const float* x;
  const float* scale;
  const float* offset;
  float epsilon;
  bool is_training;
  float* y;
  float* mean;      // training: written (batch mean); inference: read
  float* variance;  // training: written (biased batch variance); inference: read
};
void BatchNormForwardNCHW(const OpKernelContext& ctx, const BatchNormForwardArgs& a);

// The tensors of one backward pass: mean and variance are what the forward
// normalized with; in training they depend on x, in inference not.
struct BatchNormBackwardArgs {
  std::array<int64_t, 4> dims;
  const float* dy;
  const float* x;
  const float* scale;
  const float* mean;
  const float* variance;
  float epsilon;
  bool is_training;
  float* dx;
  float* dscale;
  float* doffset;
};
void BatchNormBackwardNCHW(const OpKernelContext& ctx, const BatchNormBackwardArgs& a);

}  // namespace nn
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_NN_BATCH_NORM_NCHW_H_
