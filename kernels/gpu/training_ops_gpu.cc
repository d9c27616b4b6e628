// The optimizer updates on the GPU, ref and resource forms: finding,
// checking and locking the variables is kernels/training/variable_update.h,
// as on the CPU (a buffer a reader still holds is copied on the device
// first); the update is one kernel of training_ops.cu.cc. The scalars (lr,
// momentum, beta1_power, ...) stay in device memory, as in TensorFlow's GPU
// registrations, and are read by the kernel.
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/training_ops.cu.h"
#include "kernels/training/variable_update.h"

namespace tensorgrid {
namespace gpu {
namespace {

template <typename T, bool kResource>
class ApplyGpuOp : public OpKernel {
 public:
  explicit ApplyGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("use_locking", &use_locking_));
  }

  absl::Status Compute(OpKernelContext& ctx) final {
    TG_RETURN_IF_ERROR(Apply(ctx, *GpuDevice::From(ctx)));
    if (!kResource) ctx.set_output_ref(0, ctx.input_ref(0));
    return absl::OkStatus();
  }

 protected:
  virtual absl::Status Apply(OpKernelContext& ctx, GpuDevice& gpu) const = 0;

  absl::Status Update(OpKernelContext& ctx, absl::Span<const VariableArg> args,
                      const std::function<absl::Status(absl::Span<Tensor>)>& update) const {
    return UpdateVariables(ctx, kResource, use_locking_, DataTypeToEnum<T>::value, args, update);
  }
  static const T* In(const OpKernelContext& ctx, int input) { return ctx.input(input).data<T>(); }

 private:
  bool use_locking_ = false;
};

template <typename T, bool kResource>
class ApplyGradientDescentGpuOp final : public ApplyGpuOp<T, kResource> {
  using Base = ApplyGpuOp<T, kResource>;

 public:
  using Base::Base;

 private:
  absl::Status Apply(OpKernelContext& ctx, GpuDevice& gpu) const override {
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, "alpha"));
    const VariableArg args[] = {{0, "var"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 2, "delta", vars[0].shape()));
      return CudaStatus(
          LaunchApplyGradientDescent<T>(vars[0].data<T>(), Base::In(ctx, 1), Base::In(ctx, 2),
                                        vars[0].NumElements(), gpu.multiprocessors(), gpu.stream()),
          "ApplyGradientDescent");
    });
  }
};

template <typename T, bool kResource>
class ApplyMomentumGpuOp final : public ApplyGpuOp<T, kResource> {
  using Base = ApplyGpuOp<T, kResource>;

 public:
  explicit ApplyMomentumGpuOp(OpKernelConstruction& ctx) : Base(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("use_nesterov", &use_nesterov_));
  }

 private:
  absl::Status Apply(OpKernelContext& ctx, GpuDevice& gpu) const override {
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "lr"));
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 4, "momentum"));
    const VariableArg args[] = {{0, "var"}, {1, "accum"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 3, "grad", vars[0].shape()));
      return CudaStatus(
          LaunchApplyMomentum<T>(vars[0].data<T>(), vars[1].data<T>(), Base::In(ctx, 2),
                                 Base::In(ctx, 3), Base::In(ctx, 4), use_nesterov_,
                                 vars[0].NumElements(), gpu.multiprocessors(), gpu.stream()),
          "ApplyMomentum");
    });
  }

  bool use_nesterov_ = false;
};

template <typename T, bool kResource>
class ApplyAdagradGpuOp final : public ApplyGpuOp<T, kResource> {
  using Base = ApplyGpuOp<T, kResource>;

 public:
  explicit ApplyAdagradGpuOp(OpKernelConstruction& ctx) : Base(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("update_slots", &update_slots_));
  }

 private:
  absl::Status Apply(OpKernelContext& ctx, GpuDevice& gpu) const override {
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "lr"));
    const VariableArg args[] = {{0, "var"}, {1, "accum"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 3, "grad", vars[0].shape()));
      return CudaStatus(
          LaunchApplyAdagrad<T>(vars[0].data<T>(), vars[1].data<T>(), Base::In(ctx, 2),
                                Base::In(ctx, 3), update_slots_, vars[0].NumElements(),
                                gpu.multiprocessors(), gpu.stream()),
          "ApplyAdagrad");
    });
  }

  bool update_slots_ = true;
};

template <typename T, bool kResource>
class ApplyAdamGpuOp final : public ApplyGpuOp<T, kResource> {
  using Base = ApplyGpuOp<T, kResource>;

 public:
  explicit ApplyAdamGpuOp(OpKernelConstruction& ctx) : Base(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("use_nesterov", &use_nesterov_));
  }

 private:
  absl::Status Apply(OpKernelContext& ctx, GpuDevice& gpu) const override {
    static constexpr const char* kScalars[] = {"beta1_power", "beta2_power", "lr",
                                               "beta1",       "beta2",       "epsilon"};
    for (int i = 0; i < 6; ++i) TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 3 + i, kScalars[i]));
    const VariableArg args[] = {{0, "var"}, {1, "m"}, {2, "v"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 9, "grad", vars[0].shape()));
      return CudaStatus(
          LaunchApplyAdam<T>(vars[0].data<T>(), vars[1].data<T>(), vars[2].data<T>(),
                             Base::In(ctx, 3), Base::In(ctx, 4), Base::In(ctx, 5), Base::In(ctx, 6),
                             Base::In(ctx, 7), Base::In(ctx, 8), Base::In(ctx, 9), use_nesterov_,
                             vars[0].NumElements(), gpu.multiprocessors(), gpu.stream()),
          "ApplyAdam");
    });
  }

  bool use_nesterov_ = false;
};

#define TG_REGISTER_APPLY_(op, T, kernel)                                                       \
  TG_REGISTER_KERNEL(KernelDefBuilder(op).Device(DEVICE_GPU).TypeConstraint<T>("T"),            \
                     kernel<T, false>);                                                         \
  TG_REGISTER_KERNEL(KernelDefBuilder("Resource" op).Device(DEVICE_GPU).TypeConstraint<T>("T"), \
                     kernel<T, true>)
#define TG_REGISTER_APPLY_ALL_(T)                                           \
  TG_REGISTER_APPLY_("ApplyGradientDescent", T, ApplyGradientDescentGpuOp); \
  TG_REGISTER_APPLY_("ApplyMomentum", T, ApplyMomentumGpuOp);               \
  TG_REGISTER_APPLY_("ApplyAdagrad", T, ApplyAdagradGpuOp);                 \
  TG_REGISTER_APPLY_("ApplyAdam", T, ApplyAdamGpuOp)
TG_REGISTER_APPLY_ALL_(float);
TG_REGISTER_APPLY_ALL_(double);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
