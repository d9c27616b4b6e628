// InvertPermutation: y such that y[x[i]] = i, for a permutation x of
// [0, n). The gradient of Transpose transposes back by the inverse of perm.
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

template <typename T>
class InvertPermutationOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dims() != 1) {
      return errors::InvalidArgument("invert_permutation expects a 1D vector, got shape ",
                                     x.shape().DebugString());
    }
    const int64_t n = x.NumElements();
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, x.shape(), &y));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t d = in[i];
      if (d < 0 || d >= n) {
        return errors::InvalidArgument(d, " is not between 0 and ", n);
      }
      if (seen[d]) return errors::InvalidArgument(d, " is duplicated in the input.");
      seen[d] = true;
      out[d] = static_cast<T>(i);
    }
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(
    KernelDefBuilder("InvertPermutation").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
    InvertPermutationOp<int32_t>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("InvertPermutation").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
    InvertPermutationOp<int64_t>);

}  // namespace tensorgrid
