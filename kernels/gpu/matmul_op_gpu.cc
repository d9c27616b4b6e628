// MatMul on the GPU through cuBLAS (fp32 by default; TF32 with
// TG_GPU_ALLOW_TF32=1, see docs/gpu.md).
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/math/matmul_shape.h"

namespace tensorgrid {
namespace gpu {
namespace {

class MatMulGpuOp final : public OpKernel {
 public:
  explicit MatMulGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("transpose_a", &transpose_a_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("transpose_b", &transpose_b_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TG_ASSIGN_OR_RETURN(TensorShape shape,
                        math::MatMulOutputShape(a.shape(), b.shape(), transpose_a_, transpose_b_));
    Tensor* c;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &c));
    if (c->NumElements() == 0) return absl::OkStatus();
    GpuDevice* gpu = GpuDevice::From(ctx);
    const int m = static_cast<int>(shape.dim_size(0));
    const int n = static_cast<int>(shape.dim_size(1));
    const int k = static_cast<int>(a.dim_size(transpose_a_ ? 0 : 1));
    if (k == 0) {  // an empty sum
      return CudaStatus(cudaMemsetAsync(c->raw_data(), 0, c->TotalBytes(), gpu->stream()),
                        "zeroing an empty product");
    }
    // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS
    // sees each row-major matrix as its transpose, so swap the operands.
    const float one = 1, zero = 0;
    return CublasStatus(
        cublasSgemm(gpu->cublas(), transpose_b_ ? CUBLAS_OP_T : CUBLAS_OP_N,
                    transpose_a_ ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b.data<float>(),
                    static_cast<int>(b.dim_size(1)), a.data<float>(),
                    static_cast<int>(a.dim_size(1)), &zero, c->data<float>(), n),
        "cublasSgemm");
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

TG_REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(DEVICE_GPU).TypeConstraint<float>("T"),
                   MatMulGpuOp);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
