// BroadcastTo on the GPU (the gradient of Sum and Mean uses it): the CPU
// kernel's checks and messages (kernels/array/broadcast_to_op.cc), the loop
// planned by BinaryBroadcast, elements moved by size. HostMemory("shape"),
// as in TensorFlow.
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/array/array_shapes.h"
#include "kernels/gpu/cwise_ops.cu.h"
#include "kernels/index_values.h"
#include "kernels/math/broadcast.h"

namespace tensorgrid {
namespace gpu {
namespace {

class BroadcastToGpuOp final : public OpKernel {
 public:
  explicit BroadcastToGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(TensorShape shape, BroadcastToShape(input, ctx.input(1)));  // shape: host memory
    if (input.shape() == shape) {
      ctx.set_output(0, input);
      return absl::OkStatus();
    }
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    // The input broadcasts to `shape`, so their numpy broadcast is `shape`
    // and the plan's x strides walk the input.
    TG_ASSIGN_OR_RETURN(math::BinaryBroadcast bcast,
                        math::BinaryBroadcast::Make(input.shape(), shape));
    const auto& dims = bcast.dims();
    if (dims.size() > static_cast<size_t>(kMaxBroadcastDims)) {
      return errors::Unimplemented("broadcasting ", dims.size(),
                                   " distinct dimensions on the GPU (at most ", kMaxBroadcastDims,
                                   "), output shape ", shape.DebugString());
    }
    BroadcastLoop loop;
    loop.rank = static_cast<int>(dims.size());
    for (int d = 0; d < loop.rank; ++d) {
      loop.dims[d] = dims[d];
      loop.x_strides[d] = bcast.x_strides()[d];
      loop.y_strides[d] = 0;
    }
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchBroadcastCopy(input.raw_data(), out->raw_data(),
                            static_cast<int>(DataTypeSize(input.dtype())), out->NumElements(), loop,
                            gpu->multiprocessors(), gpu->stream()),
        "BroadcastTo");
  }
};

#define TG_REGISTER_BROADCAST_TO_(T)                 \
  TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastTo") \
                         .Device(DEVICE_GPU)         \
                         .TypeConstraint<T>("T")     \
                         .HostMemory("shape"),       \
                     BroadcastToGpuOp)
TG_REGISTER_BROADCAST_TO_(float);
TG_REGISTER_BROADCAST_TO_(double);
TG_REGISTER_BROADCAST_TO_(int32_t);
TG_REGISTER_BROADCAST_TO_(int64_t);
TG_REGISTER_BROADCAST_TO_(bool);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
