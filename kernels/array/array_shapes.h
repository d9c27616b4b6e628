// The checks and output shapes the array kernels share between CPU and GPU
// (one place for each message).
#ifndef TENSORGRID_KERNELS_ARRAY_ARRAY_SHAPES_H_
#define TENSORGRID_KERNELS_ARRAY_ARRAY_SHAPES_H_

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

// Fill's output: `dims` a vector (in host memory), `value` a scalar.
absl::StatusOr<TensorShape> FillShape(const Tensor& dims, const Tensor& value);

// BroadcastTo's output: `sizes` a vector (in host memory) to which `input`
// broadcasts as numpy says.
absl::StatusOr<TensorShape> BroadcastToShape(const Tensor& input, const Tensor& sizes);

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_ARRAY_ARRAY_SHAPES_H_
