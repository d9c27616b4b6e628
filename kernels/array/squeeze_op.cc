// Squeeze: `input` without dimensions of size 1 (those in squeeze_dims, or
// all of them), sharing its buffer.
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

class SqueezeOp final : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("squeeze_dims", &squeeze_dims_));
  }
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const int rank = input.dims();
    std::vector<bool> named(rank, false);
    for (int64_t d : squeeze_dims_) {
      if (d < -rank || d >= rank) {
        return errors::InvalidArgument("squeeze_dims entry ", d, " is out of range [", -rank, ", ",
                                       rank, ") for input of shape ", input.shape().DebugString());
      }
      named[d < 0 ? d + rank : d] = true;
    }
    std::vector<int64_t> out_dims;
    for (int d = 0; d < rank; ++d) {
      const int64_t size = input.dim_size(d);
      if (named[d] && size != 1) {
        return errors::InvalidArgument("cannot squeeze dimension ", d, ": it has size ", size,
                                       ", not 1, in input of shape ", input.shape().DebugString());
      }
      const bool squeezed = squeeze_dims_.empty() ? size == 1 : named[d];
      if (!squeezed) out_dims.push_back(size);
    }
    ctx.set_output(0, input.Reshaped(TensorShape(out_dims)));
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

TG_REGISTER_KERNEL(KernelDefBuilder("Squeeze").Device(DEVICE_CPU), SqueezeOp);

}  // namespace
}  // namespace tensorgrid
