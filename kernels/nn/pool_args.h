// What MaxPool, AvgPool and their gradients read and check the same way on
// every device (pooling_ops.cc on the CPU, kernels/gpu's pooling_gpu.cc).
#ifndef TENSORGRID_KERNELS_NN_POOL_ARGS_H_
#define TENSORGRID_KERNELS_NN_POOL_ARGS_H_

#include "core/framework/op_kernel.h"
#include "core/util/pool_geometry.h"

namespace tensorgrid {
namespace nn {

// A pooling kernel: the node's attrs, read once.
class PoolKernel : public OpKernel {
 public:
  explicit PoolKernel(OpKernelConstruction& ctx);

 protected:
  Pool2DAttrs attrs_;
};

// The window of a 4-D input of `shape` (`what` names it in errors).
absl::StatusOr<Pool2DGeometry> PoolGeometryOf(const Pool2DAttrs& attrs, const TensorShape& shape,
                                              const char* what);

// The pooled output's shape.
TensorShape PooledShape(const Pool2DGeometry& g);

// InvalidArgument unless `t` (named `what`) has the pooled output's shape.
absl::Status CheckPooledShape(const Tensor& t, const char* what, const Pool2DGeometry& g,
                              const TensorShape& input);

// AvgPoolGrad's orig_input_shape (a vector of 4 sizes) as a shape.
absl::StatusOr<TensorShape> OrigInputShape(const Tensor& shape_tensor);

}  // namespace nn
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_NN_POOL_ARGS_H_
