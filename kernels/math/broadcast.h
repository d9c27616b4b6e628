// BinaryBroadcast: the numpy broadcast of two shapes, laid out for a loop.
//
// Dimensions of size 1 in the output are dropped and neighbouring dimensions
// with the same broadcast pattern are merged, so [2,3,4] + [4] becomes one
// loop of 6 rows of 4 and [8,1,5] + [1,7,5] becomes [8,7,5] with strides
// (5,0,1) and (0,5,1). A kernel then walks dims() with each input's strides,
// where a stride of 0 repeats the input along that dimension.
//
//   TG_ASSIGN_OR_RETURN(BinaryBroadcast bcast, BinaryBroadcast::Make(x.shape(), y.shape()));
//   allocate bcast.output_shape(); loop over bcast.dims() ...
#ifndef TENSORGRID_KERNELS_MATH_BROADCAST_H_
#define TENSORGRID_KERNELS_MATH_BROADCAST_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace math {

class BinaryBroadcast {
 public:
  using Dims = absl::InlinedVector<int64_t, 6>;

  // InvalidArgument naming both shapes when they do not broadcast.
  static absl::StatusOr<BinaryBroadcast> Make(const TensorShape& x, const TensorShape& y);

  // The broadcast shape, as numpy defines it.
  const TensorShape& output_shape() const { return output_shape_; }
  // The merged loop dimensions (empty when the output has one element) and
  // each input's element stride along them (0: broadcast).
  const Dims& dims() const { return dims_; }
  const Dims& x_strides() const { return x_strides_; }
  const Dims& y_strides() const { return y_strides_; }

 private:
  BinaryBroadcast() = default;
  TensorShape output_shape_;
  Dims dims_, x_strides_, y_strides_;
};

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_BROADCAST_H_
