// Range: the sequence start, start + delta, ... up to but not including
// limit, as a vector of Tidx.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
class RangeOp final : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    static const char* const kNames[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      if (ctx.input(i).dims() != 0) {
        return errors::InvalidArgument(kNames[i], " must be a scalar, not shape ",
                                       ctx.input(i).shape().DebugString());
      }
    }
    const T start = ctx.input(0).scalar<T>();
    const T limit = ctx.input(1).scalar<T>();
    const T delta = ctx.input(2).scalar<T>();
    if (delta == T(0)) return errors::InvalidArgument("Requires delta != 0: ", delta);
    if (delta > T(0) && start > limit) {
      return errors::InvalidArgument("Requires start <= limit when delta > 0: ", start, "/", limit);
    }
    if (delta < T(0) && start < limit) {
      return errors::InvalidArgument("Requires start >= limit when delta < 0: ", start, "/", limit);
    }
    int64_t size;
    if constexpr (std::is_integral<T>::value) {
      const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
      const int64_t step = std::abs(static_cast<int64_t>(delta));
      size = (span + step - 1) / step;
    } else {
      const double n = std::ceil(std::abs(
          (static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta)));
      if (!(n < 9.2e18)) {
        return errors::InvalidArgument("Range of ", start, " to ", limit, " by ", delta,
                                       " has too many elements");
      }
      size = static_cast<int64_t>(n);
    }
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({size}), &output));
    T* out = output->data<T>();
    T value = start;
    for (int64_t i = 0; i < size; ++i) {
      out[i] = value;
      value += delta;
    }
    return absl::OkStatus();
  }
};

TG_REGISTER_KERNEL(KernelDefBuilder("Range").Device(DEVICE_CPU).TypeConstraint<int32_t>("Tidx"),
                   RangeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Range").Device(DEVICE_CPU).TypeConstraint<int64_t>("Tidx"),
                   RangeOp<int64_t>);

// On a GPU: shape arithmetic, every argument in host memory (TensorFlow's
// registrations for int32 on GPU), so the gradient graph's index math runs
// beside the GPU kernels without a copy or a trip to the CPU device.
TG_REGISTER_KERNEL(KernelDefBuilder("Range")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("Tidx")
                       .HostMemory("start")
                       .HostMemory("limit")
                       .HostMemory("delta")
                       .HostMemory("output"),
                   RangeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Range").Device(DEVICE_CPU).TypeConstraint<float>("Tidx"),
                   RangeOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Range").Device(DEVICE_CPU).TypeConstraint<double>("Tidx"),
                   RangeOp<double>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
