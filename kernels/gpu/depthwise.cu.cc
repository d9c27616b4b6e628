#include "kernels/gpu/depthwise.cu.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/gpu/cwise_ops.cu.h"

namespace tensorgrid {
namespace gpu {
namespace {

constexpr int kThreads = 256;

// DepthwiseShape in the index type the kernels compute in: 32 bits when
// every tensor fits (integer division is much cheaper), else 64.
template <typename I>
struct Dims {
  I batch, channels, multiplier, out_depth;
  I in_rows, in_cols, out_rows, out_cols;
  I window_rows, window_cols, stride_rows, stride_cols, dilation_rows, dilation_cols;
  I pad_top, pad_left;

  explicit Dims(const DepthwiseShape& s)
      : batch(s.batch),
        channels(s.channels),
        multiplier(s.multiplier),
        out_depth(s.channels * s.multiplier),
        in_rows(s.in_rows),
        in_cols(s.in_cols),
        out_rows(s.out_rows),
        out_cols(s.out_cols),
        window_rows(s.window_rows),
        window_cols(s.window_cols),
        stride_rows(s.stride_rows),
        stride_cols(s.stride_cols),
        dilation_rows(s.dilation_rows),
        dilation_cols(s.dilation_cols),
        pad_top(s.pad_top),
        pad_left(s.pad_left) {}
};

// Where (n, c, row, col) of a `depth` × `rows` × `cols` image is.
template <bool kNhwc, typename I>
__device__ __forceinline__ I At(I n, I c, I row, I col, I depth, I rows, I cols) {
  return kNhwc ? ((n * rows + row) * cols + col) * depth + c
               : ((n * depth + c) * rows + row) * cols + col;
}

// Element i of such an image as (n, c, row, col).
template <bool kNhwc, typename I>
__device__ __forceinline__ void Decode(I i, I depth, I rows, I cols, I* n, I* c, I* row, I* col) {
  if (kNhwc) {
    *c = i % depth;
    i /= depth;
    *col = i % cols;
    i /= cols;
    *row = i % rows;
    *n = i / rows;
  } else {
    *col = i % cols;
    i /= cols;
    *row = i % rows;
    i /= rows;
    *c = i % depth;
    *n = i / depth;
  }
}

// sum += a * b, for one channel (float) or four (float4: NHWC with one
// filter per channel, read and written 16 bytes at a time, the shape then
// counted in fours of channels). Each channel's sum takes the same terms in
// the same order either way.
__device__ __forceinline__ void MultiplyAdd(float& sum, const float a, const float b) {
  sum += a * b;
}
__device__ __forceinline__ void MultiplyAdd(float4& sum, const float4 a, const float4 b) {
  sum.x += a.x * b.x;
  sum.y += a.y * b.y;
  sum.z += a.z * b.z;
  sum.w += a.w * b.w;
}

template <bool kNhwc, typename I, typename T>
__global__ void ForwardKernel(Dims<I> d, const T* __restrict__ input, const T* __restrict__ filter,
                              T* __restrict__ output, I count) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    I n, oc, row, col;
    Decode<kNhwc>(i, d.out_depth, d.out_rows, d.out_cols, &n, &oc, &row, &col);
    const I c = oc / d.multiplier;
    const I top = row * d.stride_rows - d.pad_top;
    const I left = col * d.stride_cols - d.pad_left;
    T sum{};
    for (I r = 0; r < d.window_rows; ++r) {
      const I in_row = top + r * d.dilation_rows;
      if (in_row < 0 || in_row >= d.in_rows) continue;
      for (I q = 0; q < d.window_cols; ++q) {
        const I in_col = left + q * d.dilation_cols;
        if (in_col < 0 || in_col >= d.in_cols) continue;
        MultiplyAdd(sum, input[At<kNhwc>(n, c, in_row, in_col, d.channels, d.in_rows, d.in_cols)],
                    filter[(r * d.window_cols + q) * d.out_depth + oc]);
      }
    }
    output[i] = sum;
  }
}

// Each input position sums, over the window positions (r, q) and the
// multiplier, the output gradients whose window put (r, q) on it.
template <bool kNhwc, typename I, typename T>
__global__ void BackpropInputKernel(Dims<I> d, const T* __restrict__ output_grad,
                                    const T* __restrict__ filter, T* __restrict__ input_grad,
                                    I count) {
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<I>(gridDim.x) * blockDim.x) {
    I n, c, row, col;
    Decode<kNhwc>(i, d.channels, d.in_rows, d.in_cols, &n, &c, &row, &col);
    T sum{};
    for (I r = 0; r < d.window_rows; ++r) {
      const I top = row + d.pad_top - r * d.dilation_rows;  // out_row * stride_rows
      if (top < 0) break;                                   // and so for every later r
      if (top % d.stride_rows != 0) continue;
      const I out_row = top / d.stride_rows;
      if (out_row >= d.out_rows) continue;
      for (I q = 0; q < d.window_cols; ++q) {
        const I left = col + d.pad_left - q * d.dilation_cols;
        if (left < 0) break;
        if (left % d.stride_cols != 0) continue;
        const I out_col = left / d.stride_cols;
        if (out_col >= d.out_cols) continue;
        for (I m = 0; m < d.multiplier; ++m) {
          const I oc = c * d.multiplier + m;
          MultiplyAdd(
              sum,
              output_grad[At<kNhwc>(n, oc, out_row, out_col, d.out_depth, d.out_rows, d.out_cols)],
              filter[(r * d.window_cols + q) * d.out_depth + oc]);
        }
      }
    }
    input_grad[i] = sum;
  }
}

// Whether the kernels may take `s` on these buffers 4 channels at a time
// (float4), and the shape counted so.
bool TakesFloat4(const DepthwiseShape& s, const void* a, const void* b, const void* c) {
  const auto bits = reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) |
                    reinterpret_cast<uintptr_t>(c);
  return s.nhwc && s.multiplier == 1 && s.channels % 4 == 0 && bits % 16 == 0;
}
DepthwiseShape InFours(DepthwiseShape s) {
  s.channels /= 4;
  return s;
}

int64_t InputElements(const DepthwiseShape& s) {
  return s.batch * s.in_rows * s.in_cols * s.channels;
}
int64_t OutputElements(const DepthwiseShape& s) {
  return s.batch * s.out_rows * s.out_cols * s.channels * s.multiplier;
}
// Whether every index the kernels compute fits in 32 bits: the element
// counts plus one grid stride (the loop's last increment), and the padded
// extent that row * stride and r * dilation stay within, for a grid of
// `threads_in_grid`.
bool FitsInt32(const DepthwiseShape& s, int64_t threads_in_grid) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const int64_t filter = s.window_rows * s.window_cols * s.channels * s.multiplier;
  const int64_t most = std::max({InputElements(s), OutputElements(s), filter});
  return most + threads_in_grid < kMax && s.in_rows + s.pad_top + s.pad_bottom < kMax &&
         s.in_cols + s.pad_left + s.pad_right < kMax && s.stride_rows < kMax &&
         s.stride_cols < kMax && s.dilation_rows < kMax && s.dilation_cols < kMax &&
         s.out_rows * s.stride_rows < kMax && s.out_cols * s.stride_cols < kMax &&
         s.window_rows * s.dilation_rows < kMax && s.window_cols * s.dilation_cols < kMax;
}

// Launches `kernel<nhwc, I>` over `count` elements.
template <template <bool, typename> class Kernel, typename... Args>
cudaError_t Launch(const DepthwiseShape& s, int64_t count, int sms, cudaStream_t stream,
                   Args... args) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = BlocksFor(count, sms, kThreads);
  if (FitsInt32(s, int64_t{blocks} * kThreads)) {
    if (s.nhwc) {
      Kernel<true, int32_t>::Run(blocks, kThreads, stream, Dims<int32_t>(s), args...,
                                 static_cast<int32_t>(count));
    } else {
      Kernel<false, int32_t>::Run(blocks, kThreads, stream, Dims<int32_t>(s), args...,
                                  static_cast<int32_t>(count));
    }
  } else if (s.nhwc) {
    Kernel<true, int64_t>::Run(blocks, kThreads, stream, Dims<int64_t>(s), args..., count);
  } else {
    Kernel<false, int64_t>::Run(blocks, kThreads, stream, Dims<int64_t>(s), args..., count);
  }
  return cudaGetLastError();
}

template <bool kNhwc, typename I>
struct Forward {
  template <typename T>
  static void Run(unsigned blocks, int threads, cudaStream_t stream, Dims<I> d, const T* input,
                  const T* filter, T* output, I count) {
    ForwardKernel<kNhwc, I, T><<<blocks, threads, 0, stream>>>(d, input, filter, output, count);
  }
};

template <bool kNhwc, typename I>
struct BackpropInput {
  template <typename T>
  static void Run(unsigned blocks, int threads, cudaStream_t stream, Dims<I> d,
                  const T* output_grad, const T* filter, T* input_grad, I count) {
    BackpropInputKernel<kNhwc, I, T>
        <<<blocks, threads, 0, stream>>>(d, output_grad, filter, input_grad, count);
  }
};

}  // namespace

cudaError_t LaunchDepthwiseForward(const DepthwiseShape& s, const float* input, const float* filter,
                                   float* output, int sms, cudaStream_t stream) {
  if (TakesFloat4(s, input, filter, output)) {
    const DepthwiseShape s4 = InFours(s);
    return Launch<Forward>(
        s4, OutputElements(s4), sms, stream, reinterpret_cast<const float4*>(input),
        reinterpret_cast<const float4*>(filter), reinterpret_cast<float4*>(output));
  }
  return Launch<Forward>(s, OutputElements(s), sms, stream, input, filter, output);
}

cudaError_t LaunchDepthwiseBackpropInput(const DepthwiseShape& s, const float* output_grad,
                                         const float* filter, float* input_grad, int sms,
                                         cudaStream_t stream) {
  if (TakesFloat4(s, output_grad, filter, input_grad)) {
    const DepthwiseShape s4 = InFours(s);
    return Launch<BackpropInput>(
        s4, InputElements(s4), sms, stream, reinterpret_cast<const float4*>(output_grad),
        reinterpret_cast<const float4*>(filter), reinterpret_cast<float4*>(input_grad));
  }
  return Launch<BackpropInput>(s, InputElements(s), sms, stream, output_grad, filter, input_grad);
}

}  // namespace gpu
}  // namespace tensorgrid
