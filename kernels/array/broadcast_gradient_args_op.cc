// BroadcastGradientArgs: for two shapes s0 and s1 that broadcast together,
// the dimensions of the broadcast output along which each input was
// repeated (r0 for s0, r1 for s1). The gradient of a broadcasting binary op
// sums the output's gradient over r0 (r1) and reshapes it to s0 (s1).
//
//   s0 = [2, 3, 5], s1 = [3, 1]  ->  r0 = [], r1 = [0, 2]
//
// A dimension of size 1 in both inputs is listed in both, as TensorFlow does.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace {

template <typename T>
class BroadcastGradientArgsOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& t0 = ctx.input(0);
    const Tensor& t1 = ctx.input(1);
    if (t0.dims() != 1 || t1.dims() != 1) {
      return errors::InvalidArgument("BroadcastGradientArgs (node '", name(),
                                     "'): inputs must be vectors, got shapes ",
                                     t0.shape().DebugString(), " and ", t1.shape().DebugString());
    }
    const std::vector<int64_t> s0 = IndexValues(t0), s1 = IndexValues(t1);
    const int rank = static_cast<int>(std::max(s0.size(), s1.size()));
    std::vector<T> r0, r1;
    for (int i = 0; i < rank; ++i) {
      // Dimension i of the output lines up with the inputs' dimensions
      // counted from the right; a missing one is 1.
      const int k0 = i - (rank - static_cast<int>(s0.size()));
      const int k1 = i - (rank - static_cast<int>(s1.size()));
      const int64_t d0 = k0 >= 0 ? s0[k0] : 1;
      const int64_t d1 = k1 >= 0 ? s1[k1] : 1;
      if (d0 == d1) {
        if (d0 == 1) {
          r0.push_back(i);
          r1.push_back(i);
        }
      } else if (d0 == 1) {
        r0.push_back(i);
      } else if (d1 == 1) {
        r1.push_back(i);
      } else {
        return errors::InvalidArgument("Incompatible shapes: ", IndexValuesString(s0), " vs. ",
                                       IndexValuesString(s1));
      }
    }
    TG_RETURN_IF_ERROR(SetVector(ctx, 0, r0));
    return SetVector(ctx, 1, r1);
  }

 private:
  static absl::Status SetVector(OpKernelContext& ctx, int i, const std::vector<T>& values) {
    Tensor* out;
    TG_RETURN_IF_ERROR(
        ctx.allocate_output(i, TensorShape({static_cast<int64_t>(values.size())}), &out));
    std::copy(values.begin(), values.end(), out->data<T>());
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(
    KernelDefBuilder("BroadcastGradientArgs").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
    BroadcastGradientArgsOp<int32_t>);

// On a GPU: shape arithmetic, every argument in host memory (TensorFlow's
// registrations for int32 on GPU), so the gradient graph's index math runs
// beside the GPU kernels without a copy or a trip to the CPU device.
TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastGradientArgs")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("T")
                       .HostMemory("s0")
                       .HostMemory("s1")
                       .HostMemory("r0")
                       .HostMemory("r1"),
                   BroadcastGradientArgsOp<int32_t>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("BroadcastGradientArgs").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
    BroadcastGradientArgsOp<int64_t>);

}  // namespace tensorgrid
