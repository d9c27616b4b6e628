// The element-wise gradient ops TensorFlow's gradients build from an op's
// output y and the incoming gradient dy (same shapes, no broadcasting):
//   SigmoidGrad  z = dy * y * (1 - y)     for y = sigmoid(x)
//   TanhGrad     z = dy * (1 - y * y)     for y = tanh(x)
//   SqrtGrad     z = dy * 0.5 / y         for y = sqrt(x)
// and Reciprocal (y = 1 / x), which the gradient of Log uses.
#define EIGEN_USE_THREADS

#include "kernels/math/cwise_unary_op.h"

namespace tensorgrid {
namespace math {
namespace {

struct SigmoidGradFn {
  template <typename A, typename B>
  static auto Apply(const A& y, const B& dy) {
    using S = typename A::Scalar;
    return dy * y * (S(1) - y);
  }
};
struct TanhGradFn {
  template <typename A, typename B>
  static auto Apply(const A& y, const B& dy) {
    using S = typename A::Scalar;
    return dy * (S(1) - y * y);
  }
};
struct SqrtGradFn {
  template <typename A, typename B>
  static auto Apply(const A& y, const B& dy) {
    using S = typename A::Scalar;
    return dy * S(0.5) / y;
  }
};

// z = Fn::Apply(y, dy) element-wise; y and dy must have one shape.
template <typename T, typename Fn>
class CwiseGradOp final : public OpKernel {
 public:
  explicit CwiseGradOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& y = ctx.input(0);
    const Tensor& dy = ctx.input(1);
    if (y.shape() != dy.shape()) {
      return errors::InvalidArgument(type_string(), " (node '", name(),
                                     "'): y and dy must have the same shape, got ",
                                     y.shape().DebugString(), " and ", dy.shape().DebugString());
    }
    const T* ys = y.data<T>();
    const T* dys = dy.data<T>();
    Tensor* z;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(1, 0, y.shape(), &z));
    T* out = z->data<T>();
    ParallelFor(ctx, y.NumElements(), 1, ElementCost<T, T>(2, 4), [&](int64_t b, int64_t e) {
      const int64_t n = e - b;
      Array(out + b, n) = Fn::Apply(ConstArray(ys + b, n), ConstArray(dys + b, n));
    });
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
};

template <typename T>
using ReciprocalOp = UnaryOp<T, Eigen::internal::scalar_inverse_op<T>>;

TG_REGISTER_KERNEL(KernelDefBuilder("SigmoidGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   CwiseGradOp<float, SigmoidGradFn>);
TG_REGISTER_KERNEL(KernelDefBuilder("SigmoidGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   CwiseGradOp<double, SigmoidGradFn>);
TG_REGISTER_KERNEL(KernelDefBuilder("TanhGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   CwiseGradOp<float, TanhGradFn>);
TG_REGISTER_KERNEL(KernelDefBuilder("TanhGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   CwiseGradOp<double, TanhGradFn>);
TG_REGISTER_KERNEL(KernelDefBuilder("SqrtGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   CwiseGradOp<float, SqrtGradFn>);
TG_REGISTER_KERNEL(KernelDefBuilder("SqrtGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   CwiseGradOp<double, SqrtGradFn>);
TG_REGISTER_KERNEL(KernelDefBuilder("Reciprocal").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   ReciprocalOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Reciprocal").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   ReciprocalOp<double>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
