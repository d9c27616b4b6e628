// Sum, Mean and Max over `reduction_indices`, with keep_dims.
//
// A ReductionPlan leaves alternating kept and reduced dimension groups. Each
// reduced group is folded over an [outer, reduced, inner] view, innermost
// group first, until one is left; most calls have a single reduced group and
// take one pass. Mean is Sum divided by the count.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <type_traits>

#include "core/framework/eigen_views.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/parallel_for.h"
#include "kernels/math/reduction_plan.h"

namespace tensorgrid {
namespace math {
namespace {

// out[o] = reduce over the r values of row o of in, as an Eigen full (a == 1)
// or inner reduction: the fastest there is for one long vector or many short
// rows.
template <typename T, typename Reducer, typename Device>
void ReduceWithEigen(const Device& device, const T* in, T* out, int64_t a, int64_t r) {
  const Eigen::array<Eigen::DenseIndex, 1> axis0 = {0}, axis1 = {1};
  if (a == 1) {
    EigenTensorMap<T, 0>(out).device(device) =
        EigenTensorMap<const T, 1>(in, r).reduce(axis0, Reducer());
  } else {
    EigenTensorMap<T, 1>(out, a).device(device) =
        EigenTensorMap<const T, 2>(in, a, r).reduce(axis1, Reducer());
  }
}

// Rows at least this long are reduced one by one, by ReduceRows.
constexpr int64_t kLongRow = 64;

// The same for rows long enough to vectorise one by one, split across the
// pool (several times faster than Eigen's inner reduction). Each row is
// reduced in blocks whose results are then combined, which keeps a float
// sum's rounding error near that of a pairwise sum.
template <typename T, typename Combine>
void ReduceRows(const OpKernelContext& ctx, const T* in, T* out, int64_t a, int64_t r) {
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  constexpr int64_t kBlock = 1024;
  const Combine combine;
  ParallelFor(
      ctx, a, r,
      ElementCost<T, T>(1, Eigen::internal::functor_traits<Combine>::Cost) * static_cast<double>(r),
      [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const T* row = in + o * r;
          T acc = ConstArray(row, std::min(r, kBlock)).redux(combine);
          for (int64_t j = kBlock; j < r; j += kBlock) {
            acc = combine(acc, ConstArray(row + j, std::min(kBlock, r - j)).redux(combine));
          }
          out[o] = acc;
        }
      });
}

// out[a, b] = reduce over r of in[a, r, b] for b > 1: each block of columns
// starts as row 0 and folds in rows 1.. with `Combine`, a vectorised pass
// over contiguous memory (Eigen's own outer reductions are far slower).
template <typename T, typename Combine>
void ReduceOuter(const OpKernelContext& ctx, const T* in, T* out, int64_t a, int64_t r, int64_t b) {
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  // Enough column blocks to keep every thread busy, none narrower than 32.
  const int64_t threads = ctx.eigen_cpu_device().numThreads();
  const int64_t width = std::clamp<int64_t>((b + 4 * threads - 1) / (4 * threads), 32, 1024);
  const int64_t blocks = (b + width - 1) / width;
  ParallelFor(ctx, a * blocks, r * std::min(b, width),
              ElementCost<T, T>(1, Eigen::internal::functor_traits<Combine>::Cost) *
                  static_cast<double>(r * std::min(b, width)),
              [&](int64_t begin, int64_t end) {
                for (int64_t unit = begin; unit < end; ++unit) {
                  const int64_t o = unit / blocks, first = (unit % blocks) * width;
                  const int64_t n = std::min(width, b - first);
                  const T* src = in + o * r * b + first;
                  Array acc(out + o * b + first, n);
                  acc = ConstArray(src, n);
                  for (int64_t i = 1; i < r; ++i) {
                    acc = acc.binaryExpr(ConstArray(src + i * b, n), Combine());
                  }
                }
              });
}

// Reducer (an Eigen tensor reducer) and Combine (the binary functor it
// applies) are the same operation in the two forms Eigen needs.
template <typename T, typename Reducer, typename Combine, bool kMean>
class ReductionOp final : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("keep_dims", &keep_dims_));
    any_rank_axes_ = ctx.graph_def_version() < kFirstProducerWithVectorReductionIndices;
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(ReductionPlan plan,
                        PlanReduction(input.shape(), ctx.input(1), keep_dims_, any_rank_axes_));
    bool folds = false;
    for (const ReductionPlan::Group& g : plan.groups) folds |= g.reduced;
    if (!folds && input.NumElements() > 0) {  // only size-1 axes: a reshape
      ctx.set_output(0, input.Reshaped(plan.output_shape));
      return absl::OkStatus();
    }
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, plan.output_shape, &output));
    T* out = output->data<T>();
    const int64_t out_size = output->NumElements();
    if (input.NumElements() == 0) {  // each output folds nothing
      std::fill(out, out + out_size, Reducer().initialize());
    } else {
      TG_RETURN_IF_ERROR(Fold(ctx, input.data<T>(), plan.groups, out));
    }
    if constexpr (kMean) {
      if (std::is_integral<T>::value && plan.reduced_count == 0) return absl::OkStatus();
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(out, out_size) /=
          static_cast<T>(plan.reduced_count);
    }
    return absl::OkStatus();
  }

 private:
  // Folds the innermost reduced group into a temporary until one is left,
  // which folds into `out`.
  static absl::Status Fold(const OpKernelContext& ctx, const T* in,
                           absl::InlinedVector<ReductionPlan::Group, 6> groups, T* out) {
    Tensor temp;
    while (true) {
      int last = -1, reduced_groups = 0;
      for (int i = 0; i < static_cast<int>(groups.size()); ++i) {
        if (groups[i].reduced) {
          last = i;
          ++reduced_groups;
        }
      }
      int64_t a = 1, b = 1;
      for (int i = 0; i < last; ++i) a *= groups[i].size;
      for (int i = last + 1; i < static_cast<int>(groups.size()); ++i) b *= groups[i].size;
      const int64_t r = groups[last].size;
      T* dst = out;
      Tensor next;
      if (reduced_groups > 1) {
        TG_ASSIGN_OR_RETURN(next, Tensor::Allocate(DataTypeToEnum<T>::value, TensorShape({a * b})));
        dst = next.data<T>();
      }
      if (b > 1) {
        ReduceOuter<T, Combine>(ctx, in, dst, a, r, b);
      } else if (a > 1 && r >= kLongRow) {
        ReduceRows<T, Combine>(ctx, in, dst, a, r);
      } else if (a * r < kInlineElements) {
        ReduceWithEigen<T, Reducer>(Eigen::DefaultDevice(), in, dst, a, r);
      } else {
        ReduceWithEigen<T, Reducer>(ctx.eigen_cpu_device(), in, dst, a, r);
      }
      if (reduced_groups == 1) return absl::OkStatus();
      // The kept groups either side of the folded one are now neighbours.
      groups.erase(groups.begin() + last);
      if (last < static_cast<int>(groups.size())) {
        groups[last - 1].size *= groups[last].size;
        groups.erase(groups.begin() + last);
      }
      temp = std::move(next);
      in = temp.data<T>();
    }
  }

  bool keep_dims_ = false;
  bool any_rank_axes_ = false;  // a graph of a producer before 21
};

// Max lets NaN win for floating point.
template <typename T>
constexpr int kMaxNaN =
    std::is_floating_point<T>::value ? Eigen::PropagateNaN : Eigen::PropagateFast;
template <typename T>
using SumOp =
    ReductionOp<T, Eigen::internal::SumReducer<T>, Eigen::internal::scalar_sum_op<T>, false>;
template <typename T>
using MeanOp =
    ReductionOp<T, Eigen::internal::SumReducer<T>, Eigen::internal::scalar_sum_op<T>, true>;
template <typename T>
using MaxOp = ReductionOp<T, Eigen::internal::MaxReducer<T, kMaxNaN<T>>,
                          Eigen::internal::scalar_max_op<T, T, kMaxNaN<T>>, false>;

TG_REGISTER_KERNEL(KernelDefBuilder("Sum").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SumOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sum").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SumOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sum").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   SumOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sum").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   SumOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Mean").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MeanOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Mean").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   MeanOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Mean").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   MeanOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Mean").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   MeanOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Max").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MaxOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Max").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   MaxOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Max").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   MaxOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Max").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   MaxOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
