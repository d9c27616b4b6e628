// ReductionPlan: what Sum, Mean and Max over some axes of a tensor come to.
//
// The axes (TensorFlow's `reduction_indices`: a scalar or vector of int32 or
// int64, negative counting from the end, repeats allowed) are checked against
// the input's rank. Dimensions of size 1 are dropped and neighbours of the
// same kind merged, so reducing axes {1, 2} of [2,3,4] is a plan of two
// groups, [2 kept, 12 reduced]: one inner reduction.
#ifndef TENSORGRID_KERNELS_MATH_REDUCTION_PLAN_H_
#define TENSORGRID_KERNELS_MATH_REDUCTION_PLAN_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "core/framework/tensor.h"

namespace tensorgrid {
namespace math {

struct ReductionPlan {
  struct Group {
    int64_t size;
    bool reduced;
  };
  // The output's shape: reduced axes removed, or kept as 1 with keep_dims.
  TensorShape output_shape;
  // Merged dimensions, alternately kept and reduced, none of size 1; empty
  // when the input has one element.
  absl::InlinedVector<Group, 6> groups;
  // Input elements folded into each output element.
  int64_t reduced_count = 1;
};

// InvalidArgument for axes out of [-rank, rank), axes of rank > 1 (unless
// `any_rank_axes`: graphs of producers before 21 may give axis [1, 2] as
// [[1, 2]], as TensorFlow accepted then) or of a dtype other than int32/int64.
absl::StatusOr<ReductionPlan> PlanReduction(const TensorShape& input, const Tensor& axes,
                                            bool keep_dims, bool any_rank_axes = false);

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_REDUCTION_PLAN_H_
