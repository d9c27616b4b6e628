// Equal: element-wise x == y with numpy broadcasting, producing bool.
#define EIGEN_USE_THREADS

// GCC 12 reports reads of uninitialized values inside its own AVX-512
// intrinsics headers wherever Eigen's packet math inlines them (GCC bug
// 105593). The reports are false, so they are silenced for the headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "kernels/math/cwise_binary_op.h"
#pragma GCC diagnostic pop

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
