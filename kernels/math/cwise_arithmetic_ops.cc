// Add, AddV2, Sub and Mul: element-wise arithmetic with numpy broadcasting.
#define EIGEN_USE_THREADS

#include "kernels/math/cwise_binary_op.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
using AddOp = BinaryOp<T, Eigen::internal::scalar_sum_op<T>>;
template <typename T>
using SubOp = BinaryOp<T, Eigen::internal::scalar_difference_op<T>>;
template <typename T>
using MulOp = BinaryOp<T, Eigen::internal::scalar_product_op<T>>;

TG_REGISTER_KERNEL(KernelDefBuilder("Add").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   AddOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Add").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   AddOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Add").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   AddOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Add").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   AddOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("AddV2").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   AddOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("AddV2").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   AddOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("AddV2").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   AddOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("AddV2").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   AddOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Sub").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SubOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sub").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SubOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sub").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   SubOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Sub").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   SubOp<int64_t>);

TG_REGISTER_KERNEL(KernelDefBuilder("Mul").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MulOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Mul").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   MulOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Mul").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   MulOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Mul").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   MulOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
