// Neg, Square, Sqrt, Rsqrt, Exp, Log, Tanh and Sigmoid: y = f(x) element-wise.
#define EIGEN_USE_THREADS

#include "kernels/math/cwise_unary_op.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
using NegOp = UnaryOp<T, Eigen::internal::scalar_opposite_op<T>>;
template <typename T>
using SquareOp = UnaryOp<T, Eigen::internal::scalar_square_op<T>>;
template <typename T>
using SqrtOp = UnaryOp<T, Eigen::internal::scalar_sqrt_op<T>>;
template <typename T>
using RsqrtOp = UnaryOp<T, Eigen::internal::scalar_rsqrt_op<T>>;
template <typename T>
using ExpOp = UnaryOp<T, Eigen::internal::scalar_exp_op<T>>;
template <typename T>
using LogOp = UnaryOp<T, Eigen::internal::scalar_log_op<T>>;
template <typename T>
using TanhOp = UnaryOp<T, Eigen::internal::scalar_tanh_op<T>>;
template <typename T>
using SigmoidOp = UnaryOp<T, Eigen::internal::scalar_logistic_op<T>>;

TG_REGISTER_KERNEL(KernelDefBuilder("Neg").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   NegOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Neg").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   NegOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Neg").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   NegOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Neg").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   NegOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Square").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SquareOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Square").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SquareOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Square").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   SquareOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Square").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   SquareOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Sqrt").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SqrtOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sqrt").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SqrtOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Rsqrt").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   RsqrtOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Rsqrt").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   RsqrtOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Exp").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   ExpOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Exp").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   ExpOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Log").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   LogOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Log").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   LogOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Tanh").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   TanhOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Tanh").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   TanhOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sigmoid").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SigmoidOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sigmoid").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SigmoidOp<double>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
