// RealDiv, Maximum and Minimum, with numpy broadcasting.
//
// RealDiv on integers truncates toward zero and fails on a zero divisor
// rather than trapping; Maximum and Minimum propagate NaN.
#define EIGEN_USE_THREADS

#include "kernels/math/cwise_binary_op.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
using FloatDivOp = BinaryOp<T, Eigen::internal::scalar_quotient_op<T>>;
template <typename T>
using IntegerDivOp = BinaryOp<T, IntDivFunctor<T>>;
template <typename T>
using MaximumOp = BinaryOp<T, MaxFunctor<T>>;
template <typename T>
using MinimumOp = BinaryOp<T, MinFunctor<T>>;

TG_REGISTER_KERNEL(KernelDefBuilder("RealDiv").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   FloatDivOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("RealDiv").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   FloatDivOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("RealDiv").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   IntegerDivOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("RealDiv").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   IntegerDivOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Maximum").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MaximumOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Maximum").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   MaximumOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Maximum").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   MaximumOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Maximum").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   MaximumOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Minimum").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MinimumOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Minimum").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   MinimumOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Minimum").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   MinimumOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Minimum").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   MinimumOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
