// int32 arithmetic on a GPU device stays in host memory, as in TensorFlow:
// int32 tensors there are shapes, sizes and indices that steer other
// kernels, so the GPU registrations of these ops run the CPU kernels with
// every argument HostMemory (the Maximum(Size(x), 1) in Mean's gradient,
// index arithmetic) and nothing crosses to the device and back.
#define EIGEN_USE_THREADS

#include "kernels/math/cwise_binary_op.h"
#include "kernels/math/cwise_unary_op.h"

namespace tensorgrid {
namespace gpu {
namespace {

using math::BinaryOp;
using math::UnaryOp;

#define TG_HOST_BINARY_(op, ...)                       \
  TG_REGISTER_KERNEL(KernelDefBuilder(op)              \
                         .Device(DEVICE_GPU)           \
                         .TypeConstraint<int32_t>("T") \
                         .HostMemory("x")              \
                         .HostMemory("y")              \
                         .HostMemory("z"),             \
                     __VA_ARGS__)
TG_HOST_BINARY_("Add", BinaryOp<int32_t, Eigen::internal::scalar_sum_op<int32_t>>);
TG_HOST_BINARY_("AddV2", BinaryOp<int32_t, Eigen::internal::scalar_sum_op<int32_t>>);
TG_HOST_BINARY_("Sub", BinaryOp<int32_t, Eigen::internal::scalar_difference_op<int32_t>>);
TG_HOST_BINARY_("Mul", BinaryOp<int32_t, Eigen::internal::scalar_product_op<int32_t>>);
TG_HOST_BINARY_("RealDiv", BinaryOp<int32_t, math::IntDivFunctor<int32_t>>);
TG_HOST_BINARY_("Maximum", BinaryOp<int32_t, math::MaxFunctor<int32_t>>);
TG_HOST_BINARY_("Minimum", BinaryOp<int32_t, math::MinFunctor<int32_t>>);
TG_HOST_BINARY_(
    "Equal",
    BinaryOp<int32_t, Eigen::internal::scalar_cmp_op<int32_t, int32_t, Eigen::internal::cmp_EQ>>);

#define TG_HOST_UNARY_(op, ...)                        \
  TG_REGISTER_KERNEL(KernelDefBuilder(op)              \
                         .Device(DEVICE_GPU)           \
                         .TypeConstraint<int32_t>("T") \
                         .HostMemory("x")              \
                         .HostMemory("y"),             \
                     __VA_ARGS__)
TG_HOST_UNARY_("Neg", UnaryOp<int32_t, Eigen::internal::scalar_opposite_op<int32_t>>);
TG_HOST_UNARY_("Square", UnaryOp<int32_t, Eigen::internal::scalar_square_op<int32_t>>);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
