// ArgMax: the index of the largest value along one dimension.
//
// Ties go to the smallest index; a NaN beats every number (the first NaN
// wins), as in numpy.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <cmath>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/argmax_shape.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {
namespace {

// `b` beats `a`: larger, or NaN against a number.
template <typename T>
bool Beats(T b, T a) {
  if constexpr (std::is_floating_point<T>::value) {
    return b > a || (std::isnan(b) && !std::isnan(a));
  } else {
    return b > a;
  }
}

template <typename T, typename Tout>
class ArgMaxOp final : public OpKernel {
 public:
  explicit ArgMaxOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& dimension = ctx.input(1);
    TG_ASSIGN_OR_RETURN(const int d, ArgMaxAxis(input.shape(), dimension));
    const int rank = input.dims();
    TensorShape out_shape = input.shape();
    out_shape.RemoveDim(d);
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; ++i) outer *= input.dim_size(i);
    for (int i = d + 1; i < rank; ++i) inner *= input.dim_size(i);
    const int64_t r = input.dim_size(d);
    const T* in = input.data<T>();
    Tout* out = output->data<Tout>();
    if (inner == 1) {
      ParallelFor(ctx, outer, r, ElementCost<T, Tout>(1, 2) * static_cast<double>(r),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t o = begin; o < end; ++o) out[o] = ArgMaxOfRow(in + o * r, r);
                  });
      return absl::OkStatus();
    }
    // Columns in chunks, each scanned row by row so reads stay contiguous.
    const int64_t chunks = (inner + kChunk - 1) / kChunk;
    ParallelFor(ctx, outer * chunks, r * std::min(inner, kChunk),
                ElementCost<T, Tout>(1, 2) * static_cast<double>(r * std::min(inner, kChunk)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t unit = begin; unit < end; ++unit) {
                    const int64_t o = unit / chunks, first = (unit % chunks) * kChunk;
                    ArgMaxOfColumns(in + o * r * inner + first, r, inner,
                                    std::min(kChunk, inner - first), out + o * inner + first);
                  }
                });
    return absl::OkStatus();
  }

 private:
  static constexpr int64_t kChunk = 256;

  static Tout ArgMaxOfRow(const T* row, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (Beats(row[i], row[best])) best = i;
    }
    return static_cast<Tout>(best);
  }

  // out[j] = argmax over i < rows of in[i * stride + j], for j < cols <= kChunk.
  static void ArgMaxOfColumns(const T* in, int64_t rows, int64_t stride, int64_t cols, Tout* out) {
    T best[kChunk];
    std::copy(in, in + cols, best);
    std::fill(out, out + cols, Tout{0});
    for (int64_t i = 1; i < rows; ++i) {
      const T* row = in + i * stride;
      for (int64_t j = 0; j < cols; ++j) {
        if (Beats(row[j], best[j])) {
          best[j] = row[j];
          out[j] = static_cast<Tout>(i);
        }
      }
    }
  }
};

TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<float>("T")
                       .TypeConstraint<int64_t>("output_type"),
                   ArgMaxOp<float, int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<double>("T")
                       .TypeConstraint<int64_t>("output_type"),
                   ArgMaxOp<double, int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<int32_t>("T")
                       .TypeConstraint<int64_t>("output_type"),
                   ArgMaxOp<int32_t, int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<int64_t>("T")
                       .TypeConstraint<int64_t>("output_type"),
                   ArgMaxOp<int64_t, int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<float>("T")
                       .TypeConstraint<int32_t>("output_type"),
                   ArgMaxOp<float, int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<double>("T")
                       .TypeConstraint<int32_t>("output_type"),
                   ArgMaxOp<double, int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<int32_t>("T")
                       .TypeConstraint<int32_t>("output_type"),
                   ArgMaxOp<int32_t, int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ArgMax")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<int64_t>("T")
                       .TypeConstraint<int32_t>("output_type"),
                   ArgMaxOp<int64_t, int32_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
