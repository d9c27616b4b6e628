// Element-wise CUDA kernels and their launchers: binary ops with numpy
// broadcasting, unary ops, the gradient helpers, Equal, Cast and fills.
// Plain signatures (device pointers, sizes, a stream): the OpKernels around
// them (cwise_ops_gpu.cc, ...) do the checks and the planning on the host.
// Every launcher returns the launch's error (cudaSuccess when there was
// nothing to do).
#ifndef TENSORGRID_KERNELS_GPU_CWISE_OPS_CU_H_
#define TENSORGRID_KERNELS_GPU_CWISE_OPS_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace tensorgrid {
namespace gpu {

// Grid size for `n` independent items on a GPU with `sms` multiprocessors:
// grid-stride loops make any grid correct, so this only bounds it.
inline unsigned BlocksFor(int64_t n, int sms, int threads = 256) {
  int64_t blocks = (n + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(sms > 0 ? sms : 1) * 32;
  if (blocks > cap) blocks = cap;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// The merged loop of BinaryBroadcast (kernels/math/broadcast.h): z has
// prod(dims) elements in row-major order; x and y are read at
// sum(index[d] * stride[d]).
constexpr int kMaxBroadcastDims = 8;
struct BroadcastLoop {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims];
  int64_t x_strides[kMaxBroadcastDims];
  int64_t y_strides[kMaxBroadcastDims];
};

enum class BinaryFn {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kSquaredDifference,
  // Gradient helpers, x = forward value, y = incoming gradient dy (same shape):
  kReluGrad,     // x = gradients, y = features: features > 0 ? gradients : 0
  kRelu6Grad,    // x = gradients, y = features: 0 < features < 6 ? gradients : 0
  kSigmoidGrad,  // dy * y * (1 - y)
  kTanhGrad,     // dy * (1 - y * y)
  kSqrtGrad,     // dy * 0.5 / y
};

enum class UnaryFn {
  kNeg,
  kSquare,
  kSqrt,
  kRsqrt,
  kExp,
  kLog,
  kTanh,
  kSigmoid,
  kRelu,
  kRelu6,  // min(max(x, 0), 6)
  kReciprocal
};

// z = fn(x, y) over `loop`, n = prod(loop.dims) elements. T: float, double,
// int32_t, int64_t (kDiv and the gradient helpers: float and double).
template <typename T>
cudaError_t LaunchBinary(BinaryFn fn, const T* x, const T* y, T* z, int64_t n,
                         const BroadcastLoop& loop, int sms, cudaStream_t stream);

// z = (x == y) over `loop`. T: float, double, int32_t, int64_t, bool.
template <typename T>
cudaError_t LaunchEqual(const T* x, const T* y, bool* z, int64_t n, const BroadcastLoop& loop,
                        int sms, cudaStream_t stream);

// y = fn(x), n elements. T: float, double, int32_t, int64_t (the
// transcendental ones float and double only).
template <typename T>
cudaError_t LaunchUnary(UnaryFn fn, const T* x, T* y, int64_t n, int sms, cudaStream_t stream);

// out = Cast<Dst>(in), the CPU kernel's rules: x -> bool is x != 0 (NaN is
// true), bool -> x is 0 or 1, floating -> integer truncates toward zero,
// saturates and maps NaN to 0; `truncate` (Cast's Truncate attr) rounds
// double -> float toward zero instead of to nearest.
// Src, Dst: float, double, int32_t, int64_t, bool.
template <typename Src, typename Dst>
cudaError_t LaunchCast(const Src* in, Dst* out, int64_t n, bool truncate, int sms,
                       cudaStream_t stream);

// out[i] = in[sum(index[d] * loop.x_strides[d])] for n = prod(loop.dims)
// elements of `element_size` bytes (1, 2, 4 or 8): BroadcastTo, Tile-like
// copies that move elements by size whatever their dtype.
cudaError_t LaunchBroadcastCopy(const void* in, void* out, int element_size, int64_t n,
                                const BroadcastLoop& loop, int sms, cudaStream_t stream);

// out[i] = *value (a device pointer), n elements. T: float, double, int32_t,
// int64_t, bool.
template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, int sms, cudaStream_t stream);
// out[i] = value (a host value).
template <typename T>
cudaError_t LaunchFillScalar(T value, T* out, int64_t n, int sms, cudaStream_t stream);

}  // namespace gpu
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_GPU_CWISE_OPS_CU_H_
