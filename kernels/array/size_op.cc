// Size: the number of elements of `input`, as a scalar of out_type. Like
// Shape it reads only the shape, so one kernel serves every dtype and runs
// inline.
#include <cstdint>
#include <limits>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

template <typename OutType>
class SizeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const int64_t size = ctx.input(0).NumElements();
    if (size > std::numeric_limits<OutType>::max()) {
      return errors::InvalidArgument("Size output type is 32-bit but ",
                                     ctx.input(0).shape().DebugString(), " has ", size,
                                     " elements; use out_type int64");
    }
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape(), &out));
    out->scalar<OutType>() = static_cast<OutType>(size);
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("Size").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
                   SizeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Size").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
                   SizeOp<int64_t>);
// On a GPU Size reads only the shape: the data stays where it is.
TG_REGISTER_KERNEL(
    KernelDefBuilder("Size").Device(DEVICE_GPU).TypeConstraint<int32_t>("out_type").HostMemory("output"),
    SizeOp<int32_t>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("Size").Device(DEVICE_GPU).TypeConstraint<int64_t>("out_type").HostMemory("output"),
    SizeOp<int64_t>);

}  // namespace tensorgrid
