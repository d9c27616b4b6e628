#include "kernels/math/reduction_plan.h"

#include <vector>

#include "core/platform/status.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace math {

namespace {

absl::StatusOr<std::vector<int64_t>> ReadAxes(const Tensor& axes, bool any_rank) {
  if (axes.dims() > 1 && !any_rank) {
    return errors::InvalidArgument("reduction_indices must be a scalar or a vector, got shape ",
                                   axes.shape().DebugString());
  }
  if (axes.dtype() != DT_INT32 && axes.dtype() != DT_INT64) {
    return errors::InvalidArgument("reduction_indices must be int32 or int64, got ",
                                   DataTypeString(axes.dtype()));
  }
  return IndexValues(axes);
}

}  // namespace

absl::StatusOr<ReductionPlan> PlanReduction(const TensorShape& input, const Tensor& axes,
                                            bool keep_dims, bool any_rank_axes) {
  TG_ASSIGN_OR_RETURN(std::vector<int64_t> axis_list, ReadAxes(axes, any_rank_axes));
  const int rank = input.dims();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axis_list) {
    if (axis < -rank || axis >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension (", axis, " for input with ",
                                     rank, " dimension(s))");
    }
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  ReductionPlan plan;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = input.dim_size(d);
    if (reduced[d]) {
      plan.reduced_count *= size;
      if (keep_dims) plan.output_shape.AddDim(1);
    } else {
      plan.output_shape.AddDim(size);
    }
    if (size == 1) continue;
    if (!plan.groups.empty() && plan.groups.back().reduced == reduced[d]) {
      plan.groups.back().size *= size;
    } else {
      plan.groups.push_back({size, reduced[d]});
    }
  }
  return plan;
}

}  // namespace math
}  // namespace tensorgrid
