// Relu (max(features, 0)) and Relu6 (min(max(features, 0), 6)) with their
// gradients ReluGrad and Relu6Grad.
#define EIGEN_USE_THREADS

#include <type_traits>

#include "kernels/math/cwise_unary_op.h"

namespace tensorgrid {
namespace math {
namespace {

// max(x, 0); NaN stays NaN for floating point.
template <typename T>
struct ReluFunctor
    : Eigen::internal::bind2nd_op<Eigen::internal::scalar_max_op<
          T, T, std::is_floating_point<T>::value ? Eigen::PropagateNaN : Eigen::PropagateFast>> {
  ReluFunctor() : ReluFunctor::bind2nd_op(T(0)) {}
};

}  // namespace
}  // namespace math
}  // namespace tensorgrid

namespace Eigen {
namespace internal {
template <typename T>
struct functor_traits<tensorgrid::math::ReluFunctor<T>>
    : functor_traits<typename tensorgrid::math::ReluFunctor<T>::bind2nd_op> {};
}  // namespace internal
}  // namespace Eigen

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
using ReluOp = UnaryOp<T, ReluFunctor<T>>;

// backprops = gradients where features > 0, else 0.
template <typename T>
class ReluGradOp final : public OpKernel {
 public:
  explicit ReluGradOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& gradients = ctx.input(0);
    const Tensor& features = ctx.input(1);
    if (gradients.shape() != features.shape()) {
      return errors::InvalidArgument("gradients and features must have the same shape, got ",
                                     gradients.shape().DebugString(), " and ",
                                     features.shape().DebugString());
    }
    Tensor* backprops;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, gradients.shape(), &backprops));
    const T* g = gradients.data<T>();
    const T* f = features.data<T>();
    T* out = backprops->data<T>();
    ParallelFor(
        ctx, gradients.NumElements(), 1, ElementCost<T, T>(2, 2), [&](int64_t b, int64_t e) {
          const int64_t n = e - b;
          Array(out + b, n) = (ConstArray(f + b, n) > T(0)).select(ConstArray(g + b, n), T(0));
        });
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
};

// activations = min(max(features, 0), 6), as TensorFlow's Eigen expression
// (Eigen's fast min/max: a NaN may come out as 0 or 6).
template <typename T>
class Relu6Op final : public OpKernel {
 public:
  explicit Relu6Op(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    Tensor* activations;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, features.shape(), &activations));
    const T* in = features.data<T>();
    T* out = activations->data<T>();
    ParallelFor(ctx, features.NumElements(), 1, ElementCost<T, T>(1, 2), [&](int64_t b, int64_t e) {
      Array(out + b, e - b) = ConstArray(in + b, e - b).max(T(0)).min(T(6));
    });
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
};

// backprops = gradients where 0 < features < 6, else 0.
template <typename T>
class Relu6GradOp final : public OpKernel {
 public:
  explicit Relu6GradOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& gradients = ctx.input(0);
    const Tensor& features = ctx.input(1);
    if (gradients.shape() != features.shape()) {
      return errors::InvalidArgument("gradients and features must have the same shape, got ",
                                     gradients.shape().DebugString(), " and ",
                                     features.shape().DebugString());
    }
    Tensor* backprops;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, gradients.shape(), &backprops));
    const T* g = gradients.data<T>();
    const T* f = features.data<T>();
    T* out = backprops->data<T>();
    ParallelFor(ctx, gradients.NumElements(), 1, ElementCost<T, T>(2, 3),
                [&](int64_t b, int64_t e) {
                  const int64_t n = e - b;
                  const auto x = ConstArray(f + b, n);
                  Array(out + b, n) = (x > T(0) && x < T(6)).select(ConstArray(g + b, n), T(0));
                });
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
};

TG_REGISTER_KERNEL(KernelDefBuilder("Relu").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   ReluOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Relu").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   ReluOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Relu").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   ReluOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Relu").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   ReluOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("ReluGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   ReluGradOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("ReluGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   ReluGradOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("ReluGrad").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   ReluGradOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ReluGrad").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   ReluGradOp<int64_t>);

#define TG_REGISTER_RELU6(T)                                                                  \
  TG_REGISTER_KERNEL(KernelDefBuilder("Relu6").Device(DEVICE_CPU).TypeConstraint<T>("T"),     \
                     Relu6Op<T>);                                                             \
  TG_REGISTER_KERNEL(KernelDefBuilder("Relu6Grad").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                     Relu6GradOp<T>)
TG_REGISTER_RELU6(float);
TG_REGISTER_RELU6(double);
TG_REGISTER_RELU6(int32_t);
TG_REGISTER_RELU6(int64_t);
#undef TG_REGISTER_RELU6

#define TG_REGISTER_RELU6(T)                                                                  \
  TG_REGISTER_KERNEL(KernelDefBuilder("Relu6").Device(DEVICE_CPU).TypeConstraint<T>("T"),     \
                     Relu6Op<T>);                                                             \
  TG_REGISTER_KERNEL(KernelDefBuilder("Relu6Grad").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                     Relu6GradOp<T>)
TG_REGISTER_RELU6(float);
TG_REGISTER_RELU6(double);
TG_REGISTER_RELU6(int32_t);
TG_REGISTER_RELU6(int64_t);
#undef TG_REGISTER_RELU6

}  // namespace
}  // namespace math
}  // namespace tensorgrid
