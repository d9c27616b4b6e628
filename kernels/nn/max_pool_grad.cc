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

// One example of NHWC: in and out point at it; best/where are C-long scratch.
void ExampleNHWC(const Pool2DGeometry& g, const float* in, const float* grad, float* out) {
  const int64_t c = g.channels, w = g.cols.input;
  std::fill_n(out, g.rows.input * w * c, 0.f);
  std::vector<float> best(c);
  std::vector<int64_t> where(c);
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const Span rows = Covered(g.rows, oy);
    for (int64_t ox = 0; ox < g.cols.output; ++ox) {
      const Span cols = Covered(g.cols, ox);
      std::fill(best.begin(), best.end(), -std::numeric_limits<float>::infinity());
      std::fill(where.begin(), where.end(), (rows.begin * w + cols.begin) * c);
      for (int64_t y = rows.begin; y < rows.end; ++y) {
        for (int64_t x = cols.begin; x < cols.end; ++x) {
          const float* v = in + (y * w + x) * c;
          const int64_t at = (y * w + x) * c;
          for (int64_t ch = 0; ch < c; ++ch) {
            if (v[ch] > best[ch]) best[ch] = v[ch], where[ch] = at;
          }
        }
      }
      const float* gr = grad + (oy * g.cols.output + ox) * c;
      for (int64_t ch = 0; ch < c; ++ch) out[where[ch] + ch] += gr[ch];
    }
  }
}

// One (example, channel) plane of NCHW.
void PlaneNCHW(const Pool2DGeometry& g, const float* in, const float* grad, float* out) {
  const int64_t w = g.cols.input;
  std::fill_n(out, g.rows.input * w, 0.f);
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const Span rows = Covered(g.rows, oy);
    for (int64_t ox = 0; ox < g.cols.output; ++ox) {
      const Span cols = Covered(g.cols, ox);
      float best = -std::numeric_limits<float>::infinity();
      int64_t where = rows.begin * w + cols.begin;
      for (int64_t y = rows.begin; y < rows.end; ++y) {
        for (int64_t x = cols.begin; x < cols.end; ++x) {
          if (in[y * w + x] > best) best = in[y * w + x], where = y * w + x;
        }
      }
      out[where] += grad[oy * g.cols.output + ox];
    }
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
  ctx.eigen_cpu_device().parallelFor(
      tasks, Eigen::TensorOpCost(bytes, bytes, cycles), [&](Eigen::Index b, Eigen::Index e) {
        for (Eigen::Index t = b; t < e; ++t) {
          const float* in = input + t * in_plane * per_task;
          const float* gr = grad + t * out_plane * per_task;
          float* out = output + t * in_plane * per_task;
          nhwc ? ExampleNHWC(g, in, gr, out) : PlaneNCHW(g, in, gr, out);
        }
      });
}

}  // namespace nn
}  // namespace tensorgrid
