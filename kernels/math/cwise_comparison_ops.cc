// Equal: element-wise x == y with numpy broadcasting, producing bool.
#define EIGEN_USE_THREADS

#include "kernels/math/cwise_binary_op.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
using EqualOp = BinaryOp<T, Eigen::internal::scalar_cmp_op<T, T, Eigen::internal::cmp_EQ>>;

TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   EqualOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   EqualOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   EqualOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   EqualOp<int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Equal").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   EqualOp<bool>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
