// UnaryOp<T, Op>: the CPU kernel behind Neg, Exp, Relu, ...: y = Op(x)
// element-wise, where Op is an Eigen unary functor (scalar_exp_op<T>, ...).
// Runs a vectorised Eigen loop, inline for small tensors and on the intra-op
// pool for large ones, in x's buffer when the executor lets it go.
#ifndef TENSORGRID_KERNELS_MATH_CWISE_UNARY_OP_H_
#define TENSORGRID_KERNELS_MATH_CWISE_UNARY_OP_H_

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {

template <typename T, typename Op>
class UnaryOp final : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, x.shape(), &y));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    ParallelFor(ctx, x.NumElements(), 1,
                ElementCost<T, T>(1, Eigen::internal::functor_traits<Op>::Cost),
                [&](int64_t b, int64_t e) {
                  Array(out + b, e - b) = ConstArray(in + b, e - b).unaryExpr(Op());
                });
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
};

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_CWISE_UNARY_OP_H_
