// Transpose and ConcatV2 on the GPU. Checks and messages are the CPU
// kernels' (kernels/array/transpose_op.cc, concat_op.cc); HostMemory as in
// TensorFlow: Transpose's perm, ConcatV2's axis. Both move elements by size:
// Transpose is a strided gather (cwise_ops.cu.cc's LaunchBroadcastCopy with
// the input's strides permuted), ConcatV2 one 2-D device copy per input.
#include <algorithm>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/array/array_shapes.h"
#include "kernels/gpu/cwise_ops.cu.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace gpu {
namespace {

class TransposeGpuOp final : public OpKernel {
 public:
  explicit TransposeGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& perm_tensor = ctx.input(1);  // host memory
    if (perm_tensor.dims() != 1) {
      return errors::InvalidArgument("perm must be a vector, got a tensor of shape ",
                                     perm_tensor.shape().DebugString());
    }
    const std::vector<int64_t> perm = IndexValues(perm_tensor);
    TG_RETURN_IF_ERROR(ValidatePermutation(perm, input.dims()));
    if (std::is_sorted(perm.begin(), perm.end())) {  // the identity
      ctx.set_output(0, input);
      return absl::OkStatus();
    }
    TensorShape out_shape;
    for (int64_t d : perm) out_shape.AddDim(input.dim_size(static_cast<int>(d)));
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Output dimension i walks input dimension perm[i]; size-1 dimensions
    // move nothing and are left out of the loop.
    std::vector<int64_t> in_strides(input.dims());
    int64_t stride = 1;
    for (int d = input.dims() - 1; d >= 0; --d) {
      in_strides[d] = stride;
      stride *= input.dim_size(d);
    }
    BroadcastLoop loop;
    for (int i = 0; i < out_shape.dims(); ++i) {
      if (out_shape.dim_size(i) == 1) continue;
      if (loop.rank == kMaxBroadcastDims) {
        return errors::Unimplemented("Transpose of more than ", kMaxBroadcastDims,
                                     " dimensions larger than 1 on the GPU, shape ",
                                     input.shape().DebugString());
      }
      loop.dims[loop.rank] = out_shape.dim_size(i);
      loop.x_strides[loop.rank] = in_strides[perm[i]];
      loop.y_strides[loop.rank] = 0;
      ++loop.rank;
    }
    GpuDevice* gpu = GpuDevice::From(ctx);
    return CudaStatus(
        LaunchBroadcastCopy(input.raw_data(), out->raw_data(),
                            static_cast<int>(DataTypeSize(input.dtype())), out->NumElements(), loop,
                            gpu->multiprocessors(), gpu->stream()),
        "Transpose");
  }
};

class ConcatV2GpuOp final : public OpKernel {
 public:
  explicit ConcatV2GpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    TG_ASSIGN_OR_RETURN(ConcatShape shape, ConcatV2Shape(ctx));  // the axis is in host memory
    const int axis = shape.axis;
    const TensorShape& out_shape = shape.output;
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Each input is `outer` rows of `width` bytes; the output's rows are
    // their concatenation.
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= out_shape.dim_size(d);
    const size_t element = DataTypeSize(out->dtype());
    const size_t row = static_cast<size_t>(out->NumElements() / outer) * element;
    GpuDevice* gpu = GpuDevice::From(ctx);
    char* dst = static_cast<char*>(out->raw_data());
    for (int i = 0; i < n; ++i) {
      const size_t width = static_cast<size_t>(ctx.input(i).NumElements() / outer) * element;
      if (width == 0) continue;
      TG_RETURN_IF_ERROR(
          CudaStatus(cudaMemcpy2DAsync(dst, row, ctx.input(i).raw_data(), width, width, outer,
                                       cudaMemcpyDeviceToDevice, gpu->stream()),
                     "ConcatV2's copy"));
      dst += width;
    }
    return absl::OkStatus();
  }
};

#define TG_REGISTER_TRANSPOSE_(T)                                                                 \
  TG_REGISTER_KERNEL(                                                                             \
      KernelDefBuilder("Transpose").Device(DEVICE_GPU).TypeConstraint<T>("T").HostMemory("perm"), \
      TransposeGpuOp)
#define TG_REGISTER_CONCAT_(T)                                                                   \
  TG_REGISTER_KERNEL(                                                                            \
      KernelDefBuilder("ConcatV2").Device(DEVICE_GPU).TypeConstraint<T>("T").HostMemory("axis"), \
      ConcatV2GpuOp)
TG_REGISTER_TRANSPOSE_(float);
TG_REGISTER_TRANSPOSE_(double);
TG_REGISTER_TRANSPOSE_(int32_t);
TG_REGISTER_TRANSPOSE_(int64_t);
TG_REGISTER_TRANSPOSE_(bool);
// int32 concatenation is shape arithmetic, left to the host (TensorFlow's
// GPU registration keeps all of its arguments in host memory).
TG_REGISTER_CONCAT_(float);
TG_REGISTER_CONCAT_(double);
TG_REGISTER_CONCAT_(int64_t);
TG_REGISTER_CONCAT_(bool);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
