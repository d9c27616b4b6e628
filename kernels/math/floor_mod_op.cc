// FloorMod: z = x - floor(x / y) * y element-wise with numpy broadcasting,
// so the result has the sign of y (Python's %). An integer y of 0 is
// InvalidArgument, as for integer division.
#define EIGEN_USE_THREADS

#include <cmath>
#include <type_traits>

#include "kernels/math/cwise_binary_op.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
struct FloorModFunctor : Eigen::internal::binary_op_base<T, T> {
  using result_type = T;
  T operator()(const T& x, const T& y) const {
    T r;
    if constexpr (std::is_integral<T>::value) {
      if (y == T(-1)) return T(0);  // INT_MIN % -1 would trap
      r = x % y;
    } else {
      r = std::fmod(x, y);
    }
    if (r != T(0) && ((r < T(0)) != (y < T(0)))) r += y;
    return r;
  }
};

}  // namespace

// Integer FloorMod checks for a zero divisor as integer division does.
template <typename T>
struct IsIntDivFunctor<FloorModFunctor<T>> : std::is_integral<T> {};

namespace {

template <typename T>
using FloorModOp = BinaryOp<T, FloorModFunctor<T>>;

TG_REGISTER_KERNEL(KernelDefBuilder("FloorMod").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   FloorModOp<int32_t>);

// On a GPU: shape arithmetic, every argument in host memory (TensorFlow's
// registrations for int32 on GPU), so the gradient graph's index math runs
// beside the GPU kernels without a copy or a trip to the CPU device.
TG_REGISTER_KERNEL(KernelDefBuilder("FloorMod")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("T")
                       .HostMemory("x")
                       .HostMemory("y")
                       .HostMemory("z"),
                   FloorModOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("FloorMod").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   FloorModOp<int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("FloorMod").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   FloorModOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("FloorMod").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   FloorModOp<double>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
