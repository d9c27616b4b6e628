// What FusedBatchNormV3 and FusedBatchNormGradV3 read and check the same
// way on every device (batch_norm_ops.cc on the CPU, kernels/gpu's
// batch_norm_gpu.cc): their attrs, x's dims and the per-channel vectors.
#ifndef TENSORGRID_KERNELS_NN_BATCH_NORM_ARGS_H_
#define TENSORGRID_KERNELS_NN_BATCH_NORM_ARGS_H_

#include <array>
#include <cstdint>

#include "core/framework/op_kernel.h"
#include "core/util/window_geometry.h"

namespace tensorgrid {
namespace nn {

// The attrs both ops share.
struct BatchNormAttrs {
  float epsilon = 1e-4f;
  float exponential_avg_factor = 1.f;
  DataFormat format = DataFormat::kNHWC;
  bool is_training = true;
};

// InvalidArgument for a negative epsilon or an unknown data_format.
absl::Status ReadBatchNormAttrs(OpKernelConstruction& ctx, BatchNormAttrs* a);

// x's dims as {N, C, H, W}; InvalidArgument unless 4-D.
absl::StatusOr<std::array<int64_t, 4>> NchwOf(const Tensor& x, const char* what, DataFormat f);

// InvalidArgument unless `t` is a vector of `channels` values.
absl::Status CheckChannelVector(const Tensor& t, const char* what, int64_t channels);

// FusedBatchNormV3's checks of scale, offset, mean and variance against C
// channels (training with factor 1 ignores the moving statistics: they may
// be empty).
absl::Status CheckBatchNormInputs(const OpKernelContext& ctx, const BatchNormAttrs& a,
                                  int64_t channels);

// FusedBatchNormGradV3's checks: y_backprop of x's shape, and scale and the
// two reserve spaces (the mean and variance) of C channels.
absl::Status CheckBatchNormGradInputs(const OpKernelContext& ctx, int64_t channels);

}  // namespace nn
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_NN_BATCH_NORM_ARGS_H_
