// The element-wise CUDA kernels of cwise_ops.cu.h: grid-stride loops with
// 64-bit indices, one template per shape of loop, the operation a template
// argument so that each instantiation is a plain loop.
#include "kernels/gpu/cwise_ops.cu.h"

#include <cstdint>
#include <limits>
#include <type_traits>

namespace tensorgrid {
namespace gpu {
namespace {

constexpr int kThreads = 256;

template <typename T>
__device__ bool IsNan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return isnan(v);
  } else {
    return false;
  }
}

template <BinaryFn kFn, typename T>
__device__ T Binary(T x, T y) {
  if constexpr (kFn == BinaryFn::kAdd) return x + y;
  if constexpr (kFn == BinaryFn::kSub) return x - y;
  if constexpr (kFn == BinaryFn::kMul) return x * y;
  if constexpr (kFn == BinaryFn::kDiv) return x / y;
  // Maximum and Minimum: NaN wins, as on the CPU.
  if constexpr (kFn == BinaryFn::kMaximum) return IsNan(x) ? x : IsNan(y) ? y : (x > y ? x : y);
  if constexpr (kFn == BinaryFn::kMinimum) return IsNan(x) ? x : IsNan(y) ? y : (x < y ? x : y);
  if constexpr (kFn == BinaryFn::kSquaredDifference) return (x - y) * (x - y);
  if constexpr (kFn == BinaryFn::kReluGrad) return y > T(0) ? x : T(0);
  if constexpr (kFn == BinaryFn::kRelu6Grad) return y > T(0) && y < T(6) ? x : T(0);
  if constexpr (kFn == BinaryFn::kSigmoidGrad) return y * x * (T(1) - x);
  if constexpr (kFn == BinaryFn::kTanhGrad) return y * (T(1) - x * x);
  if constexpr (kFn == BinaryFn::kSqrtGrad) return y * T(0.5) / x;
  return T();
}

template <UnaryFn kFn, typename T>
__device__ T Unary(T x) {
  if constexpr (kFn == UnaryFn::kNeg) return -x;
  if constexpr (kFn == UnaryFn::kSquare) return x * x;
  if constexpr (kFn == UnaryFn::kRelu) return IsNan(x) ? x : (x > T(0) ? x : T(0));
  if constexpr (kFn == UnaryFn::kRelu6) return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
  if constexpr (std::is_floating_point<T>::value) {
    if constexpr (kFn == UnaryFn::kSqrt) return sqrt(x);
    if constexpr (kFn == UnaryFn::kRsqrt) return T(1) / sqrt(x);
    if constexpr (kFn == UnaryFn::kExp) return exp(x);
    if constexpr (kFn == UnaryFn::kLog) return log(x);
    if constexpr (kFn == UnaryFn::kTanh) return tanh(x);
    if constexpr (kFn == UnaryFn::kSigmoid) return T(1) / (T(1) + exp(-x));
    if constexpr (kFn == UnaryFn::kReciprocal) return T(1) / x;
  }
  return T();
}

__device__ int64_t GlobalIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ int64_t GridStride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Element i's offsets in x and y under `loop`.
__device__ void Offsets(const BroadcastLoop& loop, int64_t i, int64_t* xo, int64_t* yo) {
  int64_t x = 0, y = 0;
  for (int d = loop.rank - 1; d >= 0; --d) {
    const int64_t idx = i % loop.dims[d];
    i /= loop.dims[d];
    x += idx * loop.x_strides[d];
    y += idx * loop.y_strides[d];
  }
  *xo = x;
  *yo = y;
}

template <BinaryFn kFn, typename T>
__global__ void SameShapeKernel(const T* x, const T* y, T* z, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) z[i] = Binary<kFn>(x[i], y[i]);
}

template <BinaryFn kFn, typename T>
__global__ void BroadcastKernel(const T* x, const T* y, T* z, int64_t n, BroadcastLoop loop) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    int64_t xo, yo;
    Offsets(loop, i, &xo, &yo);
    z[i] = Binary<kFn>(x[xo], y[yo]);
  }
}

template <typename T>
__global__ void EqualKernel(const T* x, const T* y, bool* z, int64_t n, BroadcastLoop loop) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    int64_t xo, yo;
    Offsets(loop, i, &xo, &yo);
    z[i] = x[xo] == y[yo];
  }
}

template <UnaryFn kFn, typename T>
__global__ void UnaryKernel(const T* x, T* y, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) y[i] = Unary<kFn>(x[i]);
}

template <typename Src, typename Dst, bool kTruncate>
__device__ Dst Convert(Src v) {
  if constexpr (std::is_same<Dst, bool>::value) {
    return v != Src(0);  // NaN != 0
  } else if constexpr (std::is_same<Src, bool>::value) {
    return static_cast<Dst>(v ? 1 : 0);
  } else if constexpr (std::is_floating_point<Src>::value && !std::is_floating_point<Dst>::value) {
    const double w = static_cast<double>(v);
    if (isnan(w)) return 0;
    constexpr double lo = static_cast<double>(std::numeric_limits<Dst>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<Dst>::max()) + 1.0;
    if (w <= lo) return std::numeric_limits<Dst>::min();
    if (w >= hi) return std::numeric_limits<Dst>::max();
    return static_cast<Dst>(w);
  } else if constexpr (kTruncate && std::is_same<Src, double>::value &&
                       std::is_same<Dst, float>::value) {
    return __double2float_rz(v);
  } else {
    return static_cast<Dst>(v);
  }
}

template <typename Src, typename Dst, bool kTruncate>
__global__ void CastKernel(const Src* in, Dst* out, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    out[i] = Convert<Src, Dst, kTruncate>(in[i]);
  }
}

template <typename Unit>
__global__ void BroadcastCopyKernel(const Unit* in, Unit* out, int64_t n, BroadcastLoop loop) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) {
    int64_t xo, yo;
    Offsets(loop, i, &xo, &yo);
    out[i] = in[xo];
  }
}

template <typename T>
__global__ void FillKernel(const T* value, T* out, int64_t n) {
  const T v = *value;
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) out[i] = v;
}

template <typename T>
__global__ void FillScalarKernel(T value, T* out, int64_t n) {
  for (int64_t i = GlobalIndex(); i < n; i += GridStride()) out[i] = value;
}

template <BinaryFn kFn, typename T>
cudaError_t RunBinary(const T* x, const T* y, T* z, int64_t n, const BroadcastLoop& loop, int sms,
                      cudaStream_t stream) {
  const bool same = loop.rank == 1 && loop.x_strides[0] == 1 && loop.y_strides[0] == 1;
  if (same) {
    SameShapeKernel<kFn, T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(x, y, z, n);
  } else {
    BroadcastKernel<kFn, T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(x, y, z, n, loop);
  }
  return cudaGetLastError();
}

template <UnaryFn kFn, typename T>
cudaError_t RunUnary(const T* x, T* y, int64_t n, int sms, cudaStream_t stream) {
  UnaryKernel<kFn, T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

}  // namespace

template <typename T>
cudaError_t LaunchBinary(BinaryFn fn, const T* x, const T* y, T* z, int64_t n,
                         const BroadcastLoop& loop, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (fn) {
    case BinaryFn::kAdd: return RunBinary<BinaryFn::kAdd>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kSub: return RunBinary<BinaryFn::kSub>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kMul: return RunBinary<BinaryFn::kMul>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kMaximum: return RunBinary<BinaryFn::kMaximum>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kMinimum: return RunBinary<BinaryFn::kMinimum>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kSquaredDifference:
      return RunBinary<BinaryFn::kSquaredDifference>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kReluGrad: return RunBinary<BinaryFn::kReluGrad>(x, y, z, n, loop, sms, stream);
    case BinaryFn::kRelu6Grad:
      return RunBinary<BinaryFn::kRelu6Grad>(x, y, z, n, loop, sms, stream);
    default: break;
  }
  if constexpr (std::is_floating_point<T>::value) {
    switch (fn) {
      case BinaryFn::kDiv: return RunBinary<BinaryFn::kDiv>(x, y, z, n, loop, sms, stream);
      case BinaryFn::kSigmoidGrad:
        return RunBinary<BinaryFn::kSigmoidGrad>(x, y, z, n, loop, sms, stream);
      case BinaryFn::kTanhGrad:
        return RunBinary<BinaryFn::kTanhGrad>(x, y, z, n, loop, sms, stream);
      case BinaryFn::kSqrtGrad:
        return RunBinary<BinaryFn::kSqrtGrad>(x, y, z, n, loop, sms, stream);
      default: break;
    }
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t LaunchEqual(const T* x, const T* y, bool* z, int64_t n, const BroadcastLoop& loop,
                        int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  EqualKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(x, y, z, n, loop);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchUnary(UnaryFn fn, const T* x, T* y, int64_t n, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (fn) {
    case UnaryFn::kNeg: return RunUnary<UnaryFn::kNeg>(x, y, n, sms, stream);
    case UnaryFn::kSquare: return RunUnary<UnaryFn::kSquare>(x, y, n, sms, stream);
    case UnaryFn::kRelu: return RunUnary<UnaryFn::kRelu>(x, y, n, sms, stream);
    case UnaryFn::kRelu6: return RunUnary<UnaryFn::kRelu6>(x, y, n, sms, stream);
    default: break;
  }
  if constexpr (std::is_floating_point<T>::value) {
    switch (fn) {
      case UnaryFn::kSqrt: return RunUnary<UnaryFn::kSqrt>(x, y, n, sms, stream);
      case UnaryFn::kRsqrt: return RunUnary<UnaryFn::kRsqrt>(x, y, n, sms, stream);
      case UnaryFn::kExp: return RunUnary<UnaryFn::kExp>(x, y, n, sms, stream);
      case UnaryFn::kLog: return RunUnary<UnaryFn::kLog>(x, y, n, sms, stream);
      case UnaryFn::kTanh: return RunUnary<UnaryFn::kTanh>(x, y, n, sms, stream);
      case UnaryFn::kSigmoid: return RunUnary<UnaryFn::kSigmoid>(x, y, n, sms, stream);
      case UnaryFn::kReciprocal: return RunUnary<UnaryFn::kReciprocal>(x, y, n, sms, stream);
      default: break;
    }
  }
  return cudaErrorInvalidValue;
}

template <typename Src, typename Dst>
cudaError_t LaunchCast(const Src* in, Dst* out, int64_t n, bool truncate, int sms,
                       cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (truncate) {
    CastKernel<Src, Dst, true><<<BlocksFor(n, sms), kThreads, 0, stream>>>(in, out, n);
  } else {
    CastKernel<Src, Dst, false><<<BlocksFor(n, sms), kThreads, 0, stream>>>(in, out, n);
  }
  return cudaGetLastError();
}

cudaError_t LaunchBroadcastCopy(const void* in, void* out, int element_size, int64_t n,
                                const BroadcastLoop& loop, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned blocks = BlocksFor(n, sms);
  switch (element_size) {
    case 1:
      BroadcastCopyKernel<uint8_t><<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), n, loop);
      break;
    case 2:
      BroadcastCopyKernel<uint16_t><<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), n, loop);
      break;
    case 4:
      BroadcastCopyKernel<uint32_t><<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), n, loop);
      break;
    case 8:
      BroadcastCopyKernel<uint64_t><<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), n, loop);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  FillKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(value, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFillScalar(T value, T* out, int64_t n, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  FillScalarKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(value, out, n);
  return cudaGetLastError();
}

#define TG_INSTANTIATE_NUMERIC_(T)                                                              \
  template cudaError_t LaunchBinary<T>(BinaryFn, const T*, const T*, T*, int64_t,               \
                                       const BroadcastLoop&, int, cudaStream_t);                \
  template cudaError_t LaunchUnary<T>(UnaryFn, const T*, T*, int64_t, int, cudaStream_t);       \
  template cudaError_t LaunchEqual<T>(const T*, const T*, bool*, int64_t, const BroadcastLoop&, \
                                      int, cudaStream_t);                                       \
  template cudaError_t LaunchFill<T>(const T*, T*, int64_t, int, cudaStream_t);                 \
  template cudaError_t LaunchFillScalar<T>(T, T*, int64_t, int, cudaStream_t);
TG_INSTANTIATE_NUMERIC_(float)
TG_INSTANTIATE_NUMERIC_(double)
TG_INSTANTIATE_NUMERIC_(int32_t)
TG_INSTANTIATE_NUMERIC_(int64_t)
template cudaError_t LaunchEqual<bool>(const bool*, const bool*, bool*, int64_t,
                                       const BroadcastLoop&, int, cudaStream_t);
template cudaError_t LaunchFill<bool>(const bool*, bool*, int64_t, int, cudaStream_t);
template cudaError_t LaunchFillScalar<bool>(bool, bool*, int64_t, int, cudaStream_t);

#define TG_INSTANTIATE_CAST_FROM_(S)                                                               \
  template cudaError_t LaunchCast<S, float>(const S*, float*, int64_t, bool, int, cudaStream_t);   \
  template cudaError_t LaunchCast<S, double>(const S*, double*, int64_t, bool, int, cudaStream_t); \
  template cudaError_t LaunchCast<S, int32_t>(const S*, int32_t*, int64_t, bool, int,              \
                                              cudaStream_t);                                       \
  template cudaError_t LaunchCast<S, int64_t>(const S*, int64_t*, int64_t, bool, int,              \
                                              cudaStream_t);                                       \
  template cudaError_t LaunchCast<S, bool>(const S*, bool*, int64_t, bool, int, cudaStream_t);
TG_INSTANTIATE_CAST_FROM_(float)
TG_INSTANTIATE_CAST_FROM_(double)
TG_INSTANTIATE_CAST_FROM_(int32_t)
TG_INSTANTIATE_CAST_FROM_(int64_t)
TG_INSTANTIATE_CAST_FROM_(bool)

}  // namespace gpu
}  // namespace tensorgrid
