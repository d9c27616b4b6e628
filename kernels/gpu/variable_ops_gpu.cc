// AssignAdd, AssignSub and their resource forms (AssignAddVariableOp,
// AssignSubVariableOp) on the GPU: var (+|-)= value in place, after copying
// a buffer that a reader still holds (on the device, CopyForWrite). Checks
// and messages are the CPU kernels' (kernels/state/variable_ops.cc); the
// kernels that only share buffers (Assign, ReadVariableOp, ...) are
// registered for the GPU there.
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"
#include "kernels/gpu/training_ops.cu.h"
#include "kernels/training/variable_update.h"

namespace tensorgrid {
namespace gpu {
namespace {

absl::Status Uninitialized(const std::string& variable) {
  return errors::FailedPrecondition("attempting to use uninitialized variable '", variable, "'");
}

template <typename T, bool kAdd>
absl::Status UpdateLocked(GpuDevice& gpu, Var& var, const std::string& variable,
                          const Tensor& value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(var.mu) {
  if (!var.initialized) return Uninitialized(variable);
  if (var.tensor.shape() != value.shape()) {
    return errors::InvalidArgument("cannot update variable '", variable, "' of shape ",
                                   var.tensor.shape().DebugString(), " with a value of shape ",
                                   value.shape().DebugString());
  }
  if (!var.tensor.RefCountIsOne()) {
    TG_ASSIGN_OR_RETURN(var.tensor, CopyForWrite(var.tensor));
  }
  return CudaStatus(LaunchAssignUpdate<T>(var.tensor.data<T>(), value.data<T>(), kAdd,
                                          value.NumElements(), gpu.multiprocessors(), gpu.stream()),
                    kAdd ? "AssignAdd" : "AssignSub");
}

template <typename T, bool kAdd>
class AssignUpdateGpuOp final : public OpKernel {
 public:
  explicit AssignUpdateGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const std::shared_ptr<Var>& var = ctx.input_ref(0);
    if (var == nullptr) return errors::InvalidArgument("input 0 is not a variable reference");
    {
      absl::MutexLock lock(&var->mu);
      TG_RETURN_IF_ERROR(
          (UpdateLocked<T, kAdd>(*GpuDevice::From(ctx), *var, var->name(), ctx.input(1))));
    }
    ctx.set_output_ref(0, var);
    return absl::OkStatus();
  }
};

template <typename T, bool kAdd>
class AssignUpdateVariableGpuOp final : public OpKernel {
 public:
  explicit AssignUpdateVariableGpuOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& t = ctx.input(0);
    if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
      return errors::InvalidArgument("input 0 must be a scalar resource handle, got ",
                                     t.DebugString());
    }
    const ResourceHandle& h = t.scalar<ResourceHandle>();
    auto var = ctx.resource_manager()->Lookup<Var>(h.container, h.name);
    if (!var.ok()) {
      if (absl::IsNotFound(var.status())) return Uninitialized(h.name);
      return var.status();
    }
    absl::MutexLock lock(&(*var)->mu);
    if ((*var)->dtype() != input_type(1)) {
      return errors::InvalidArgument("variable '", h.name, "' has type ",
                                     DataTypeString((*var)->dtype()), ", updated with ",
                                     DataTypeString(input_type(1)));
    }
    return UpdateLocked<T, kAdd>(*GpuDevice::From(ctx), **var, h.name, ctx.input(1));
  }
};

#define TG_REGISTER_UPDATES_(T)                                                               \
  TG_REGISTER_KERNEL(KernelDefBuilder("AssignAdd").Device(DEVICE_GPU).TypeConstraint<T>("T"), \
                     AssignUpdateGpuOp<T, true>);                                             \
  TG_REGISTER_KERNEL(KernelDefBuilder("AssignSub").Device(DEVICE_GPU).TypeConstraint<T>("T"), \
                     AssignUpdateGpuOp<T, false>);                                            \
  TG_REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("AssignAddVariableOp").Device(DEVICE_GPU).TypeConstraint<T>("dtype"),  \
      AssignUpdateVariableGpuOp<T, true>);                                                    \
  TG_REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("AssignSubVariableOp").Device(DEVICE_GPU).TypeConstraint<T>("dtype"),  \
      AssignUpdateVariableGpuOp<T, false>)
TG_REGISTER_UPDATES_(float);
TG_REGISTER_UPDATES_(double);
TG_REGISTER_UPDATES_(int64_t);

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
