// StringJoin: N string tensors joined element by element with `separator`;
// scalars are repeated for every element of the non-scalar inputs.
#include <string>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

class StringJoinOp final : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("separator", &separator_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs();
    TensorShape shape;  // a scalar unless an input is not
    int shaped = -1;    // the first non-scalar input
    for (int i = 0; i < n; ++i) {
      const TensorShape& in = ctx.input(i).shape();
      if (in.dims() == 0) continue;
      if (shaped < 0) {
        shape = in;
        shaped = i;
      } else if (in != shape) {
        return errors::InvalidArgument("StringJoin input ", i, " has shape ", in.DebugString(),
                                       ", but input ", shaped, " has shape ", shape.DebugString(),
                                       " (inputs must be scalars or all of one shape)");
      }
    }
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    std::string* joined = out->data<std::string>();
    for (int64_t e = 0; e < shape.num_elements(); ++e) {
      std::string& s = joined[e];
      for (int i = 0; i < n; ++i) {
        const Tensor& in = ctx.input(i);
        if (i > 0) s += separator_;
        s += in.data<std::string>()[in.dims() == 0 ? 0 : e];
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string separator_;
};

TG_REGISTER_KERNEL(KernelDefBuilder("StringJoin").Device(DEVICE_CPU), StringJoinOp);

}  // namespace
}  // namespace tensorgrid
