// The row-folding CUDA kernels of reduction_ops.cu.h. Each output row is one
// block (a grid-stride loop over rows): its threads fold strided elements,
// then a shared-memory tree combines them. Simple, and correct for any size.
#include "kernels/gpu/reduction_ops.cu.h"

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/gpu/cwise_ops.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

constexpr int kThreads = 256;  // a power of two: the tree below halves it
constexpr unsigned kMaxBlocks = 65535;

template <typename T>
__device__ bool IsNan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return isnan(v);
  } else {
    return false;
  }
}

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
// NaN propagates, as Eigen's PropagateNaN max does on the CPU.
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return IsNan(a) ? a : IsNan(b) ? b : (a > b ? a : b);
  }
};

template <typename T>
__host__ __device__ T Lowest() {
  if constexpr (std::is_floating_point<T>::value) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

// Combines every thread's `v` of the block; the result is valid in thread 0.
// Every thread of the block must call it.
template <typename T, typename Op>
__device__ T BlockReduce(T v, Op op) {
  __shared__ T scratch[kThreads];
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + half]);
    __syncthreads();
  }
  const T result = scratch[0];
  __syncthreads();  // scratch is reused by the next call
  return result;
}

template <typename T, typename Op, bool kMean>
__global__ void ReduceKernel(const T* in, T* out, ReduceLoop loop, T init, Op op) {
  for (int64_t o = blockIdx.x; o < loop.num_outputs; o += gridDim.x) {
    int64_t base = 0;
    for (int64_t d = loop.num_kept - 1, rest = o; d >= 0; --d) {
      base += (rest % loop.kept_sizes[d]) * loop.kept_strides[d];
      rest /= loop.kept_sizes[d];
    }
    T acc = init;
    for (int64_t r = threadIdx.x; r < loop.reduced_count; r += blockDim.x) {
      int64_t offset = base;
      for (int64_t d = loop.num_reduced - 1, rest = r; d >= 0; --d) {
        offset += (rest % loop.reduced_sizes[d]) * loop.reduced_strides[d];
        rest /= loop.reduced_sizes[d];
      }
      acc = op(acc, in[offset]);
    }
    acc = BlockReduce(acc, op);
    if (threadIdx.x == 0) {
      // An empty integer mean stays 0, as on the CPU (no division by zero).
      if constexpr (kMean) {
        out[o] = loop.reduced_count == 0 && !std::is_floating_point<T>::value
                     ? acc
                     : acc / static_cast<T>(loop.reduced_count);
      } else {
        out[o] = acc;
      }
    }
  }
}

template <typename T, typename Tout>
__global__ void ArgMaxKernel(const T* in, Tout* out, int64_t outer, int64_t axis, int64_t inner) {
  const int64_t n = outer * inner;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* p = in + (i / inner) * axis * inner + i % inner;
    int64_t best = 0;
    T best_v = p[0];
    for (int64_t k = 1; k < axis; ++k) {
      const T v = p[k * inner];
      if (v > best_v || (IsNan(v) && !IsNan(best_v))) {
        best = k;
        best_v = v;
      }
    }
    out[i] = static_cast<Tout>(best);
  }
}

template <typename T>
__global__ void BiasAddKernel(const T* in, const T* bias, T* out, int64_t n, int64_t channels,
                              int64_t inner) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i] + bias[(i / inner) % channels];
  }
}

template <typename T>
__global__ void SoftmaxKernel(const T* logits, T* out, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* x = logits + r * cols;
    T* y = out + r * cols;
    T m = Lowest<T>();
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = MaxOp()(m, x[c]);
    m = BlockReduce(m, MaxOp());
    T sum = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += exp(x[c] - m);
    sum = BlockReduce(sum, SumOp());
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[c] = exp(x[c] - m) / sum;
  }
}

template <typename T, typename L>
__global__ void SparseXentKernel(const T* logits, const L* labels, T* loss, T* backprop,
                                 int64_t rows, int64_t cols, unsigned long long* bad_row) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* x = logits + r * cols;
    T* bp = backprop + r * cols;
    const int64_t label = static_cast<int64_t>(labels[r]);
    if (label < 0 || label >= cols) {
      if (threadIdx.x == 0) {
        atomicMin(bad_row, static_cast<unsigned long long>(r));
        loss[r] = std::numeric_limits<T>::quiet_NaN();
      }
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        bp[c] = std::numeric_limits<T>::quiet_NaN();
      }
      continue;  // uniform across the block: `label` is the same for every thread
    }
    T m = Lowest<T>();
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = MaxOp()(m, x[c]);
    m = BlockReduce(m, MaxOp());
    T sum = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += exp(x[c] - m);
    sum = BlockReduce(sum, SumOp());
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      bp[c] = exp(x[c] - m) / sum - (c == label ? T(1) : T(0));
    }
    if (threadIdx.x == 0) loss[r] = log(sum) - (x[label] - m);
  }
}

template <typename T>
__global__ void XentKernel(const T* logits, int64_t lrs, int64_t lcs, const T* labels, int64_t yrs,
                           int64_t ycs, T* loss, T* backprop, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* x = logits + r * lrs;
    const T* l = labels + r * yrs;
    T* bp = backprop + r * cols;
    T m = Lowest<T>();
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = MaxOp()(m, x[c * lcs]);
    m = BlockReduce(m, MaxOp());
    T sum = 0, label_sum = 0, label_dot_s = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T s = x[c * lcs] - m;
      sum += exp(s);
      label_sum += l[c * ycs];
      label_dot_s += l[c * ycs] * s;
    }
    sum = BlockReduce(sum, SumOp());
    label_sum = BlockReduce(label_sum, SumOp());
    label_dot_s = BlockReduce(label_dot_s, SumOp());
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      bp[c] = exp(x[c * lcs] - m) / sum - l[c * ycs];
    }
    if (threadIdx.x == 0) loss[r] = log(sum) * label_sum - label_dot_s;
  }
}

unsigned RowBlocks(int64_t rows) {
  return static_cast<unsigned>(rows < kMaxBlocks ? (rows < 1 ? 1 : rows) : kMaxBlocks);
}

}  // namespace

template <typename T>
cudaError_t LaunchReduce(ReduceFn fn, const T* in, T* out, const ReduceLoop& loop,
                         cudaStream_t stream) {
  if (loop.num_outputs <= 0) return cudaSuccess;
  const unsigned blocks = RowBlocks(loop.num_outputs);
  switch (fn) {
    case ReduceFn::kSum:
      ReduceKernel<T, SumOp, false><<<blocks, kThreads, 0, stream>>>(in, out, loop, T(0), SumOp());
      break;
    case ReduceFn::kMean:
      ReduceKernel<T, SumOp, true><<<blocks, kThreads, 0, stream>>>(in, out, loop, T(0), SumOp());
      break;
    case ReduceFn::kMax:
      ReduceKernel<T, MaxOp, false>
          <<<blocks, kThreads, 0, stream>>>(in, out, loop, Lowest<T>(), MaxOp());
      break;
  }
  return cudaGetLastError();
}

template <typename T, typename Tout>
cudaError_t LaunchArgMax(const T* in, Tout* out, int64_t outer, int64_t axis, int64_t inner,
                         int sms, cudaStream_t stream) {
  if (outer * inner <= 0 || axis <= 0) return cudaSuccess;
  ArgMaxKernel<T, Tout>
      <<<BlocksFor(outer * inner, sms), kThreads, 0, stream>>>(in, out, outer, axis, inner);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchBiasAdd(const T* in, const T* bias, T* out, int64_t n, int64_t channels,
                          int64_t inner, int sms, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  BiasAddKernel<T><<<BlocksFor(n, sms), kThreads, 0, stream>>>(in, bias, out, n, channels, inner);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSoftmax(const T* logits, T* out, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  SoftmaxKernel<T><<<RowBlocks(rows), kThreads, 0, stream>>>(logits, out, rows, cols);
  return cudaGetLastError();
}

template <typename T, typename L>
cudaError_t LaunchSparseXent(const T* logits, const L* labels, T* loss, T* backprop, int64_t rows,
                             int64_t cols, int64_t* bad_row, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  static_assert(sizeof(int64_t) == sizeof(unsigned long long), "atomicMin on the row index");
  SparseXentKernel<T, L><<<RowBlocks(rows), kThreads, 0, stream>>>(
      logits, labels, loss, backprop, rows, cols, reinterpret_cast<unsigned long long*>(bad_row));
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchXent(const T* logits, int64_t logits_row_stride, int64_t logits_col_stride,
                       const T* labels, int64_t labels_row_stride, int64_t labels_col_stride,
                       T* loss, T* backprop, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  XentKernel<T><<<RowBlocks(rows), kThreads, 0, stream>>>(
      logits, logits_row_stride, logits_col_stride, labels, labels_row_stride, labels_col_stride,
      loss, backprop, rows, cols);
  return cudaGetLastError();
}

#define TG_INSTANTIATE_REDUCE_(T)                                                                \
  template cudaError_t LaunchReduce<T>(ReduceFn, const T*, T*, const ReduceLoop&, cudaStream_t); \
  template cudaError_t LaunchArgMax<T, int32_t>(const T*, int32_t*, int64_t, int64_t, int64_t,   \
                                                int, cudaStream_t);                              \
  template cudaError_t LaunchArgMax<T, int64_t>(const T*, int64_t*, int64_t, int64_t, int64_t,   \
                                                int, cudaStream_t);                              \
  template cudaError_t LaunchBiasAdd<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, int,  \
                                        cudaStream_t);
TG_INSTANTIATE_REDUCE_(float)
TG_INSTANTIATE_REDUCE_(double)
TG_INSTANTIATE_REDUCE_(int32_t)
TG_INSTANTIATE_REDUCE_(int64_t)

#define TG_INSTANTIATE_SOFTMAX_(T)                                                               \
  template cudaError_t LaunchSoftmax<T>(const T*, T*, int64_t, int64_t, cudaStream_t);           \
  template cudaError_t LaunchSparseXent<T, int32_t>(const T*, const int32_t*, T*, T*, int64_t,   \
                                                    int64_t, int64_t*, cudaStream_t);            \
  template cudaError_t LaunchSparseXent<T, int64_t>(const T*, const int64_t*, T*, T*, int64_t,   \
                                                    int64_t, int64_t*, cudaStream_t);            \
  template cudaError_t LaunchXent<T>(const T*, int64_t, int64_t, const T*, int64_t, int64_t, T*, \
                                     T*, int64_t, int64_t, cudaStream_t);
TG_INSTANTIATE_SOFTMAX_(float)
TG_INSTANTIATE_SOFTMAX_(double)

}  // namespace gpu
}  // namespace tensorgrid
