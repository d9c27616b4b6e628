// MatMul: product = op(a) x op(b), op transposing when asked, as one Eigen
// tensor contraction on the device's intra-op pool. The transposes are folded
// into the contraction's index pair, so no operand is ever copied; Eigen runs
// small products on the calling thread by its own cost model.
//
// float runs oneDNN's sgemm instead, which measured 1.0-2.6x Eigen's
// contraction on one thread (docs/PERFORMANCE.md): on more, in blocks of the
// output on the device's pool (sgemm.h), not on oneDNN's OpenMP team.
#define EIGEN_USE_THREADS

#include <type_traits>

#include "core/framework/eigen_views.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/matmul_shape.h"
#include "kernels/math/sgemm.h"

namespace tensorgrid {
namespace math {

absl::StatusOr<TensorShape> MatMulOutputShape(const TensorShape& a, const TensorShape& b,
                                              bool transpose_a, bool transpose_b) {
  if (a.dims() != 2) {
    return errors::InvalidArgument("In[0] is not a matrix. Instead it has shape ", a.DebugString());
  }
  if (b.dims() != 2) {
    return errors::InvalidArgument("In[1] is not a matrix. Instead it has shape ", b.DebugString());
  }
  const int a_inner = transpose_a ? 0 : 1;
  const int b_inner = transpose_b ? 1 : 0;
  if (a.dim_size(a_inner) != b.dim_size(b_inner)) {
    return errors::InvalidArgument("Matrix size-incompatible: In[0]: ", a.DebugString(),
                                   ", In[1]: ", b.DebugString(),
                                   " (transpose_a=", transpose_a ? "true" : "false",
                                   ", transpose_b=", transpose_b ? "true" : "false", ")");
  }
  return TensorShape({a.dim_size(1 - a_inner), b.dim_size(1 - b_inner)});
}

namespace {

template <typename T>
class MatMulOp final : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("transpose_a", &transpose_a_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("transpose_b", &transpose_b_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TG_ASSIGN_OR_RETURN(TensorShape shape,
                        MatMulOutputShape(a.shape(), b.shape(), transpose_a_, transpose_b_));
    const int a_inner = transpose_a_ ? 0 : 1;
    const int b_inner = transpose_b_ ? 1 : 0;
    Tensor* product;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &product));
    if (product->NumElements() == 0) return absl::OkStatus();
    auto out = EigenMatrix<T>(*product);
    if (a.dim_size(a_inner) == 0) {  // an empty sum
      out.setZero();
      return absl::OkStatus();
    }
    if constexpr (std::is_same_v<T, float>) {
      const int64_t m = product->dim_size(0), n = product->dim_size(1);
      return ParallelSgemm(ctx.eigen_cpu_device(), transpose_a_, transpose_b_, m, n,
                           a.dim_size(a_inner), a.data<float>(), a.dim_size(1), b.data<float>(),
                           b.dim_size(1), product->data<float>(), n);
    }
    const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> contract_dims = {
        Eigen::IndexPair<Eigen::DenseIndex>(a_inner, b_inner)};
    out.device(ctx.eigen_cpu_device()) =
        EigenMatrix<T>(a).contract(EigenMatrix<T>(b), contract_dims);
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

TG_REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MatMulOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   MatMulOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   MatMulOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   MatMulOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
