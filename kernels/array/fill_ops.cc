// Fill, ZerosLike and OnesLike: tensors of one repeated value.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/array/array_shapes.h"
#include "kernels/index_values.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

// Sets every element of `out` to `value`, in parallel for large tensors.
template <typename T>
void FillWith(const Eigen::ThreadPoolDevice& device, const Tensor& out, const T& value) {
  T* data = out.data<T>();
  device.parallelFor(out.NumElements(), Eigen::TensorOpCost(0, sizeof(T), 1),
                     [data, &value](Eigen::Index first, Eigen::Index last) {
                       std::fill(data + first, data + last, value);
                     });
}

template <typename T>
class FillOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(1);
    TG_ASSIGN_OR_RETURN(TensorShape shape, FillShape(ctx.input(0), value));
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    FillWith<T>(ctx.eigen_cpu_device(), *out, value.scalar<T>());
    return absl::OkStatus();
  }
};

// ZerosLike (kValue = 0) and OnesLike (kValue = 1): x's shape, filled.
template <typename T, int kValue>
class ConstantLikeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, ctx.input(0).shape(), &out));
    FillWith<T>(ctx.eigen_cpu_device(), *out, Value());
    return absl::OkStatus();
  }

 private:
  static T Value() {
    if constexpr (std::is_same_v<T, std::string>) {
      return std::string();  // ZerosLike of strings: empty strings
    } else {
      return static_cast<T>(kValue);
    }
  }
};

template <typename T>
using ZerosLikeOp = ConstantLikeOp<T, 0>;
template <typename T>
using OnesLikeOp = ConstantLikeOp<T, 1>;

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("Fill").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   FillOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Fill").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   FillOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("Fill").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   FillOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Fill").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   FillOp<int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Fill").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   FillOp<bool>);
TG_REGISTER_KERNEL(KernelDefBuilder("Fill").Device(DEVICE_CPU).TypeConstraint<std::string>("T"),
                   FillOp<std::string>);

TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   ZerosLikeOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   ZerosLikeOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   ZerosLikeOp<int32_t>);
// int32 on a GPU lives in host memory (TensorFlow's rule for shapes).
TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("T")
                       .HostMemory("x")
                       .HostMemory("y"),
                   ZerosLikeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   ZerosLikeOp<int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("ZerosLike").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   ZerosLikeOp<bool>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("ZerosLike").Device(DEVICE_CPU).TypeConstraint<std::string>("T"),
    ZerosLikeOp<std::string>);

TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   OnesLikeOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   OnesLikeOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   OnesLikeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("T")
                       .HostMemory("x")
                       .HostMemory("y"),
                   OnesLikeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   OnesLikeOp<int64_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("OnesLike").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   OnesLikeOp<bool>);

}  // namespace tensorgrid
