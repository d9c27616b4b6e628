#include "kernels/gpu/pooling.cu.h"

#include "kernels/gpu/cwise_ops.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

constexpr int kThreads = 256;

// Where (n, c, row, col) of an image of `rows` × `cols` is.
__device__ int64_t At(const PoolShape& s, int64_t n, int64_t c, int64_t row, int64_t col,
                      int64_t rows, int64_t cols) {
  return s.nhwc ? ((n * rows + row) * cols + col) * s.channels + c
                : ((n * s.channels + c) * rows + row) * cols + col;
}

// Element i of an image of `rows` × `cols` as (n, c, row, col).
__device__ void Decode(const PoolShape& s, int64_t i, int64_t rows, int64_t cols, int64_t* n,
                       int64_t* c, int64_t* row, int64_t* col) {
  if (s.nhwc) {
    *c = i % s.channels;
    i /= s.channels;
    *col = i % cols;
    i /= cols;
    *row = i % rows;
    *n = i / rows;
  } else {
    *col = i % cols;
    i /= cols;
    *row = i % rows;
    i /= rows;
    *c = i % s.channels;
    *n = i / s.channels;
  }
}

// The part of window (out_row, out_col) inside the input: [r0, r1) × [c0, c1).
struct Window {
  int64_t r0, r1, c0, c1;
  __device__ int64_t count() const { return (r1 - r0) * (c1 - c0); }
};

__device__ Window WindowOf(const PoolShape& s, int64_t out_row, int64_t out_col) {
  Window w;
  const int64_t top = out_row * s.stride_rows - s.pad_top;
  const int64_t left = out_col * s.stride_cols - s.pad_left;
  w.r0 = top < 0 ? 0 : top;
  w.c0 = left < 0 ? 0 : left;
  w.r1 = top + s.window_rows < s.in_rows ? top + s.window_rows : s.in_rows;
  w.c1 = left + s.window_cols < s.in_cols ? left + s.window_cols : s.in_cols;
  return w;
}

// The input position of the window's first maximum.
__device__ int64_t ArgMax(const PoolShape& s, const float* input, int64_t n, int64_t c,
                          const Window& w) {
  int64_t best = At(s, n, c, w.r0, w.c0, s.in_rows, s.in_cols);
  for (int64_t r = w.r0; r < w.r1; ++r) {
    for (int64_t col = w.c0; col < w.c1; ++col) {
      const int64_t i = At(s, n, c, r, col, s.in_rows, s.in_cols);
      if (input[i] > input[best]) best = i;
    }
  }
  return best;
}

template <PoolKind kKind>
__global__ void PoolKernel(PoolShape s, const float* input, float* output, int64_t n_out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_out;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t n, c, row, col;
    Decode(s, i, s.out_rows, s.out_cols, &n, &c, &row, &col);
    const Window w = WindowOf(s, row, col);
    if (w.r1 <= w.r0 || w.c1 <= w.c0) {  // only padding (as oneDNN: -inf, or 0 / 0)
      output[i] = kKind == PoolKind::kMax ? -INFINITY : NAN;
    } else if (kKind == PoolKind::kMax) {
      output[i] = input[ArgMax(s, input, n, c, w)];
    } else {
      float sum = 0;
      for (int64_t r = w.r0; r < w.r1; ++r) {
        for (int64_t cc = w.c0; cc < w.c1; ++cc)
          sum += input[At(s, n, c, r, cc, s.in_rows, s.in_cols)];
      }
      output[i] = sum / static_cast<float>(w.count());
    }
  }
}

// The first and one-past-last window index along one axis whose window
// covers input position `x`.
__device__ void Covering(int64_t x, int64_t pad, int64_t window, int64_t stride, int64_t out,
                         int64_t* first, int64_t* last) {
  const int64_t p = x + pad;  // in padded coordinates
  const int64_t lo = p - window + 1;
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int64_t hi = p / stride + 1;
  *last = hi < out ? hi : out;
}

template <PoolKind kKind>
__global__ void PoolGradKernel(PoolShape s, const float* input, const float* grad,
                               float* input_grad, int64_t n_in) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_in;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t n, c, row, col;
    Decode(s, i, s.in_rows, s.in_cols, &n, &c, &row, &col);
    int64_t r_first, r_last, c_first, c_last;
    Covering(row, s.pad_top, s.window_rows, s.stride_rows, s.out_rows, &r_first, &r_last);
    Covering(col, s.pad_left, s.window_cols, s.stride_cols, s.out_cols, &c_first, &c_last);
    float sum = 0;
    for (int64_t orow = r_first; orow < r_last; ++orow) {
      for (int64_t ocol = c_first; ocol < c_last; ++ocol) {
        const Window w = WindowOf(s, orow, ocol);
        if (w.r1 <= w.r0 || w.c1 <= w.c0) continue;
        const float g = grad[At(s, n, c, orow, ocol, s.out_rows, s.out_cols)];
        if (kKind == PoolKind::kMax) {
          if (ArgMax(s, input, n, c, w) == i) sum += g;
        } else {
          sum += g / static_cast<float>(w.count());
        }
      }
    }
    input_grad[i] = sum;
  }
}

int64_t Elements(const PoolShape& s, bool out) {
  return s.batch * s.channels * (out ? s.out_rows * s.out_cols : s.in_rows * s.in_cols);
}

}  // namespace

cudaError_t LaunchPool(PoolKind kind, const PoolShape& s, const float* input, float* output,
                       int sms, cudaStream_t stream) {
  const int64_t n = Elements(s, /*out=*/true);
  if (n <= 0) return cudaSuccess;
  if (kind == PoolKind::kMax) {
    PoolKernel<PoolKind::kMax><<<BlocksFor(n, sms), kThreads, 0, stream>>>(s, input, output, n);
  } else {
    PoolKernel<PoolKind::kAvg><<<BlocksFor(n, sms), kThreads, 0, stream>>>(s, input, output, n);
  }
  return cudaGetLastError();
}

cudaError_t LaunchMaxPoolGrad(const PoolShape& s, const float* input, const float* grad,
                              float* input_grad, int sms, cudaStream_t stream) {
  const int64_t n = Elements(s, /*out=*/false);
  if (n <= 0) return cudaSuccess;
  PoolGradKernel<PoolKind::kMax>
      <<<BlocksFor(n, sms), kThreads, 0, stream>>>(s, input, grad, input_grad, n);
  return cudaGetLastError();
}

cudaError_t LaunchAvgPoolGrad(const PoolShape& s, const float* grad, float* input_grad, int sms,
                              cudaStream_t stream) {
  const int64_t n = Elements(s, /*out=*/false);
  if (n <= 0) return cudaSuccess;
  PoolGradKernel<PoolKind::kAvg>
      <<<BlocksFor(n, sms), kThreads, 0, stream>>>(s, nullptr, grad, input_grad, n);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace tensorgrid
