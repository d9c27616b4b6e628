#define EIGEN_USE_THREADS

#include "kernels/nn/max_pool_grad.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace nn {
namespace {

// The input rows (or columns) window `o` covers: [begin, end).
struct Span {
  int64_t begin, end;
};
Span Covered(const WindowDim& d, int64_t o) {
  const int64_t start = o * d.stride - d.pad_before;
  return {std::max<int64_t>(start, 0), std::min(start + d.window, d.input)};
}

// Both loops keep, per lane, the best value so far and where it lies, and
// take a later value only when it is strictly greater: the first maximum in
// row-major order, as TensorFlow's kernel finds it (a NaN never wins). They
// are written without branches (a select per lane), so the compiler can
// vectorize them and no comparison of random data mispredicts.

// One example of NHWC, channels in the lanes: `k` holds the window position
// (0 .. window size - 1, row-major within the clipped window).
void ExampleNHWC(const Pool2DGeometry& g, const float* in, const float* grad, float* out) {
  const int64_t c = g.channels, w = g.cols.input;
  std::fill_n(out, g.rows.input * w * c, 0.f);
  std::vector<float> best(c);
  std::vector<int32_t> k(c);
  std::vector<int64_t> offset(g.rows.window * g.cols.window);  // window position -> input offset
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const Span rows = Covered(g.rows, oy);
    for (int64_t ox = 0; ox < g.cols.output; ++ox) {
      const Span cols = Covered(g.cols, ox);
      std::fill(best.begin(), best.end(), -std::numeric_limits<float>::infinity());
      std::fill(k.begin(), k.end(), 0);
      int32_t pos = 0;
      for (int64_t y = rows.begin; y < rows.end; ++y) {
        for (int64_t x = cols.begin; x < cols.end; ++x, ++pos) {
          offset[pos] = (y * w + x) * c;
          const float* v = in + offset[pos];
          float* b = best.data();
          int32_t* at = k.data();
          for (int64_t ch = 0; ch < c; ++ch) {
            const bool greater = v[ch] > b[ch];
            b[ch] = greater ? v[ch] : b[ch];
            at[ch] = greater ? pos : at[ch];
          }
        }
      }
      const float* gr = grad + (oy * g.cols.output + ox) * c;
      for (int64_t ch = 0; ch < c; ++ch) out[offset[k[ch]] + ch] += gr[ch];
    }
  }
}

// The output columns whose window reaches input column `dx` of its window
// inside the input: [begin, end).
Span ColumnsReaching(const WindowDim& d, int64_t dx) {
  // x = o * stride - pad_before + dx must lie in [0, input).
  const int64_t lo = d.pad_before - dx;            // o * stride >= lo
  const int64_t hi = d.input + d.pad_before - dx;  // o * stride < hi
  const int64_t begin = lo <= 0 ? 0 : (lo + d.stride - 1) / d.stride;
  const int64_t end = hi <= 0 ? 0 : (hi + d.stride - 1) / d.stride;
  return {std::min(begin, d.output), std::min(end, d.output)};
}

// One (example, channel) plane of NCHW, a row of windows in the lanes:
// `where` holds the input offset in the plane.
void PlaneNCHW(const Pool2DGeometry& g, const float* in, const float* grad, float* out, float* best,
               int64_t* where) {
  const int64_t w = g.cols.input, out_cols = g.cols.output, stride = g.cols.stride;
  std::fill_n(out, g.rows.input * w, 0.f);
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const Span rows = Covered(g.rows, oy);
    std::fill_n(best, out_cols, -std::numeric_limits<float>::infinity());
    for (int64_t ox = 0; ox < out_cols; ++ox)
      where[ox] = rows.begin * w + Covered(g.cols, ox).begin;
    for (int64_t y = rows.begin; y < rows.end; ++y) {
      for (int64_t dx = 0; dx < g.cols.window; ++dx) {
        const Span reach = ColumnsReaching(g.cols, dx);
        // Output column ox reads input offset base + ox * stride.
        const int64_t base = y * w + dx - g.cols.pad_before;
        for (int64_t ox = reach.begin; ox < reach.end; ++ox) {
          const int64_t at = base + ox * stride;
          const float v = in[at];
          const bool greater = v > best[ox];
          best[ox] = greater ? v : best[ox];
          where[ox] = greater ? at : where[ox];
        }
      }
    }
    const float* gr = grad + oy * out_cols;
    for (int64_t ox = 0; ox < out_cols; ++ox) out[where[ox]] += gr[ox];
  }
}

}  // namespace

void MaxPoolGrad(const OpKernelContext& ctx, const Pool2DGeometry& g, const float* input,
                 const float* grad, float* output) {
  const int64_t in_plane = g.rows.input * g.cols.input, out_plane = g.rows.output * g.cols.output;
  const bool nhwc = g.format == DataFormat::kNHWC;
  const int64_t tasks = nhwc ? g.batch : g.batch * g.channels;
  const int64_t per_task = nhwc ? g.channels : 1;
  const double bytes = static_cast<double>(in_plane + out_plane) * per_task * sizeof(float);
  const double cycles = static_cast<double>(out_plane) * g.rows.window * g.cols.window * per_task;
  ctx.eigen_cpu_device().parallelFor(tasks, Eigen::TensorOpCost(bytes, bytes, cycles),
                                     [&](Eigen::Index b, Eigen::Index e) {
                                       // A row of windows' scratch, for NCHW.
                                       std::vector<float> best(nhwc ? 0 : g.cols.output);
                                       std::vector<int64_t> where(nhwc ? 0 : g.cols.output);
                                       for (Eigen::Index t = b; t < e; ++t) {
                                         const float* in = input + t * in_plane * per_task;
                                         const float* gr = grad + t * out_plane * per_task;
                                         float* out = output + t * in_plane * per_task;
                                         if (nhwc) {
                                           ExampleNHWC(g, in, gr, out);
                                         } else {
                                           PlaneNCHW(g, in, gr, out, best.data(), where.data());
                                         }
                                       }
                                     });
}

}  // namespace nn
}  // namespace tensorgrid
