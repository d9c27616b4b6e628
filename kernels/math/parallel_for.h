// Splitting a math kernel's loop between the calling thread and the device's
// intra-op pool.
//
// Small tensors are computed inline: handing a few thousand elements to the
// pool costs more than it saves. Large ones are cut into blocks sized by
// Eigen's cost model and run on ctx.eigen_cpu_device()'s threads:
//
//   ParallelFor(ctx, n, /*elements_per_unit=*/1, ElementCost<float, float>(2, 1),
//               [&](int64_t begin, int64_t end) { ... });
//
// Every .cc that includes this defines EIGEN_USE_THREADS before any include.
#ifndef TENSORGRID_KERNELS_MATH_PARALLEL_FOR_H_
#define TENSORGRID_KERNELS_MATH_PARALLEL_FOR_H_

#ifndef EIGEN_USE_THREADS
#error "define EIGEN_USE_THREADS before any include"
#endif

#include <cstdint>
#include <utility>

#include "core/framework/op_kernel.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace math {

// Below this many elements a kernel runs on the calling thread.
inline constexpr int64_t kInlineElements = 16 * 1024;

// The cost of producing one Out from `inputs` values of type In with a
// functor of `cycles` compute cost.
template <typename In, typename Out>
Eigen::TensorOpCost ElementCost(int inputs, double cycles) {
  return Eigen::TensorOpCost(static_cast<double>(inputs * sizeof(In)),
                             static_cast<double>(sizeof(Out)), cycles);
}

// Calls fn(begin, end) on disjoint ranges that cover [0, units). Each unit
// touches `elements_per_unit` elements and costs `unit_cost`. Runs inline when
// the total is below kInlineElements; blocks until every range is done.
template <typename Fn>
void ParallelFor(const OpKernelContext& ctx, int64_t units, int64_t elements_per_unit,
                 const Eigen::TensorOpCost& unit_cost, Fn&& fn) {
  if (units <= 0) return;
  if (units * elements_per_unit < kInlineElements) {
    fn(int64_t{0}, units);
    return;
  }
  ctx.eigen_cpu_device().parallelFor(units, unit_cost, [&fn](Eigen::Index begin, Eigen::Index end) {
    fn(int64_t{begin}, int64_t{end});
  });
}

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_PARALLEL_FOR_H_
