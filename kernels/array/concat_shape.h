// The checks ConcatV2's kernels share (CPU and GPU): the axis, the inputs'
// agreement and the output's shape.
#ifndef TENSORGRID_KERNELS_ARRAY_CONCAT_SHAPE_H_
#define TENSORGRID_KERNELS_ARRAY_CONCAT_SHAPE_H_

#include "absl/status/statusor.h"
#include "core/framework/op_kernel.h"

namespace tensorgrid {

struct ConcatShape {
  int axis = 0;  // in [0, rank)
  TensorShape output;
};

// For a ConcatV2 context: inputs [0, N) are the values, input N the axis (in
// host memory). InvalidArgument for an axis that is not a scalar in
// [-rank, rank), scalar values, or values that differ in any dimension but
// the axis.
absl::StatusOr<ConcatShape> ConcatV2Shape(const OpKernelContext& ctx);

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_ARRAY_CONCAT_SHAPE_H_
