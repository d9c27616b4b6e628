// CUDA kernels that fold rows: Sum/Mean/Max over axes (also BiasAddGrad),
// ArgMax, BiasAdd, Softmax and the softmax cross-entropies. Launchers have
// plain signatures; the OpKernels (reduction_ops_gpu.cc, nn_ops_gpu.cc)
// check shapes and plan on the host.
#ifndef TENSORGRID_KERNELS_GPU_REDUCTION_OPS_CU_H_
#define TENSORGRID_KERNELS_GPU_REDUCTION_OPS_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

// An input of row-major dimensions, each kept or reduced (ReductionPlan's
// groups, kernels/math/reduction_plan.h), as the two lists a kernel walks:
// output element o is the kept indices of o in row-major order; the
// elements folded into it are the reduced indices, in row-major order.
constexpr int kMaxReduceDims = 8;
struct ReduceLoop {
  int num_kept = 0;
  int64_t kept_sizes[kMaxReduceDims];
  int64_t kept_strides[kMaxReduceDims];  // in input elements
  int num_reduced = 0;
  int64_t reduced_sizes[kMaxReduceDims];
  int64_t reduced_strides[kMaxReduceDims];
  int64_t num_outputs = 1;    // product of kept_sizes
  int64_t reduced_count = 1;  // product of reduced_sizes
};

enum class ReduceFn { kSum, kMean, kMax };

// out[o] = fold over the reduced elements of o; an empty fold gives 0 (Sum),
// 0/0 (Mean: NaN for floats) or the lowest value (Max: -inf for floats).
// T: float, double, int32_t, int64_t.
template <typename T>
cudaError_t LaunchReduce(ReduceFn fn, const T* in, T* out, const ReduceLoop& loop,
                         cudaStream_t stream);

// in as [outer, axis, inner]: out[o, i] = the first index along axis of the
// largest value (NaN beats everything, the first NaN wins). axis > 0.
// T: float, double, int32_t, int64_t; Tout: int32_t, int64_t.
template <typename T, typename Tout>
cudaError_t LaunchArgMax(const T* in, Tout* out, int64_t outer, int64_t axis, int64_t inner,
                         int sms, cudaStream_t stream);

// out = in + bias[c] where c = (i / inner) % channels (NHWC: inner = 1).
template <typename T>
cudaError_t LaunchBiasAdd(const T* in, const T* bias, T* out, int64_t n, int64_t channels,
                          int64_t inner, int sms, cudaStream_t stream);

// Row-wise softmax of [rows, cols] (float, double).
template <typename T>
cudaError_t LaunchSoftmax(const T* logits, T* out, int64_t rows, int64_t cols, cudaStream_t stream);

// SparseSoftmaxCrossEntropyWithLogits over [rows, cols] logits (cols > 0).
// A label outside [0, cols) leaves its row NaN and lowers *bad_row (which
// the caller sets to `rows` first) to that row: the caller reads it back.
// T: float, double; L: int32_t, int64_t.
template <typename T, typename L>
cudaError_t LaunchSparseXent(const T* logits, const L* labels, T* loss, T* backprop, int64_t rows,
                             int64_t cols, int64_t* bad_row, cudaStream_t stream);

// SoftmaxCrossEntropyWithLogits over [rows, cols]; logits and labels are
// read at r * row_stride + c * col_stride (0 strides: broadcast).
template <typename T>
cudaError_t LaunchXent(const T* logits, int64_t logits_row_stride, int64_t logits_col_stride,
                       const T* labels, int64_t labels_row_stride, int64_t labels_col_stride,
                       T* loss, T* backprop, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_REDUCTION_OPS_CU_H_
