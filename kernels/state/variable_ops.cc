// Variables: legacy ref variables (Variable, VariableV2, Assign, AssignAdd,
// AssignSub) and resource variables (VarHandleOp, ReadVariableOp,
// AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp).
//
// Both kinds store a `Var` in the device's ResourceMgr, so they persist across
// steps of a session. Writers replace the variable's buffer unless it is
// referenced by nobody else, in which case they update it in place; readers
// get a Tensor sharing the buffer, which later writes therefore never change.
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

absl::Status Uninitialized(const std::string& variable) {
  return errors::FailedPrecondition("attempting to use uninitialized variable '", variable, "'");
}

// var.tensor = value (sharing the buffer); caller holds var.mu.
absl::Status StoreLocked(Var& var, const std::string& variable, const Tensor& value,
                         bool validate_shape, const PartialTensorShape* declared)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(var.mu) {
  if (value.dtype() != var.dtype()) {
    return errors::InvalidArgument("cannot assign a ", DataTypeString(value.dtype()),
                                   " value to variable '", variable, "' of type ",
                                   DataTypeString(var.dtype()));
  }
  if (validate_shape) {
    if (var.initialized && var.tensor.shape() != value.shape()) {
      return errors::InvalidArgument("cannot assign a value of shape ", value.shape().DebugString(),
                                     " to variable '", variable, "' of shape ",
                                     var.tensor.shape().DebugString());
    }
    if (declared != nullptr && !declared->IsCompatibleWith(value.shape())) {
      return errors::InvalidArgument("cannot assign a value of shape ", value.shape().DebugString(),
                                     " to variable '", variable, "' declared with shape ",
                                     declared->DebugString());
    }
  }
  var.tensor = value;
  var.initialized = true;
  return absl::OkStatus();
}

// var.tensor (+|-)= value, in place when no one else holds the buffer.
template <typename T, bool kAdd>
absl::Status UpdateLocked(Var& var, const std::string& variable, const Tensor& value)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(var.mu) {
  if (!var.initialized) return Uninitialized(variable);
  if (var.tensor.shape() != value.shape()) {
    return errors::InvalidArgument("cannot update variable '", variable, "' of shape ",
                                   var.tensor.shape().DebugString(), " with a value of shape ",
                                   value.shape().DebugString());
  }
  if (!var.tensor.RefCountIsOne()) var.tensor = var.tensor.DeepCopy();
  T* dst = var.tensor.data<T>();
  const T* src = value.data<T>();
  const int64_t n = value.NumElements();
  for (int64_t i = 0; i < n; ++i) dst[i] = kAdd ? dst[i] + src[i] : dst[i] - src[i];
  return absl::OkStatus();
}

class VariableOp final : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("dtype", &dtype_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("container", &container_));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shared_name", &shared_name_));
    if (shared_name_.empty()) shared_name_ = name();
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(
        std::shared_ptr<Var> var,
        ctx.resource_manager()->LookupOrCreate<Var>(container_, shared_name_, [this] {
          return std::make_shared<Var>(dtype_, shared_name_);
        }));
    if (var->dtype() != dtype_) {
      return errors::InvalidArgument("variable '", shared_name_, "' exists with type ",
                                     DataTypeString(var->dtype()), ", not ",
                                     DataTypeString(dtype_));
    }
    ctx.set_output_ref(0, std::move(var));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  std::string container_, shared_name_;
};

class AssignOp final : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("validate_shape", &validate_shape_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    const std::shared_ptr<Var>& var = ctx.input_ref(0);
    if (var == nullptr) return errors::InvalidArgument("input 0 is not a variable reference");
    {
      absl::MutexLock lock(&var->mu);
      TG_RETURN_IF_ERROR(StoreLocked(*var, var->name(), ctx.input(1), validate_shape_, nullptr));
    }
    ctx.set_output_ref(0, var);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool validate_shape_ = true;
};

template <typename T, bool kAdd>
class AssignUpdateOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    const std::shared_ptr<Var>& var = ctx.input_ref(0);
    if (var == nullptr) return errors::InvalidArgument("input 0 is not a variable reference");
    {
      absl::MutexLock lock(&var->mu);
      TG_RETURN_IF_ERROR((UpdateLocked<T, kAdd>(*var, var->name(), ctx.input(1))));
    }
    ctx.set_output_ref(0, var);
    return absl::OkStatus();
  }
};

class VarHandleOp final : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    ResourceHandle h;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("container", &h.container));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("shared_name", &h.name));
    if (h.name.empty()) h.name = name();
    h.device = ctx.device()->name();
    h.type_name = "Var";
    handle_ = Tensor::Scalar<ResourceHandle>(h);
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    ctx.set_output(0, handle_);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  Tensor handle_;
};

absl::StatusOr<const ResourceHandle*> HandleInput(OpKernelContext& ctx) {
  const Tensor& t = ctx.input(0);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return errors::InvalidArgument("input 0 must be a scalar resource handle, got ",
                                   t.DebugString());
  }
  return &t.scalar<ResourceHandle>();
}

class ReadVariableOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(const ResourceHandle* h, HandleInput(ctx));
    auto var = ctx.resource_manager()->Lookup<Var>(h->container, h->name);
    if (!var.ok()) {
      if (absl::IsNotFound(var.status())) return Uninitialized(h->name);
      return var.status();
    }
    absl::MutexLock lock(&(*var)->mu);
    if (!(*var)->initialized) return Uninitialized(h->name);
    if ((*var)->dtype() != output_type(0)) {
      return errors::InvalidArgument("variable '", h->name, "' has type ",
                                     DataTypeString((*var)->dtype()), ", read as ",
                                     DataTypeString(output_type(0)));
    }
    ctx.set_output(0, (*var)->tensor);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class AssignVariableOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(const ResourceHandle* h, HandleInput(ctx));
    const DataType dtype = input_type(1);
    TG_ASSIGN_OR_RETURN(
        std::shared_ptr<Var> var,
        ctx.resource_manager()->LookupOrCreate<Var>(
            h->container, h->name, [dtype, h] { return std::make_shared<Var>(dtype, h->name); }));
    absl::MutexLock lock(&var->mu);
    return StoreLocked(*var, h->name, ctx.input(1), /*validate_shape=*/true, nullptr);
  }
  bool IsExpensive() const override { return false; }
};

template <typename T, bool kAdd>
class AssignUpdateVariableOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    TG_ASSIGN_OR_RETURN(const ResourceHandle* h, HandleInput(ctx));
    auto var = ctx.resource_manager()->Lookup<Var>(h->container, h->name);
    if (!var.ok()) {
      if (absl::IsNotFound(var.status())) return Uninitialized(h->name);
      return var.status();
    }
    absl::MutexLock lock(&(*var)->mu);
    if ((*var)->dtype() != input_type(1)) {
      return errors::InvalidArgument("variable '", h->name, "' has type ",
                                     DataTypeString((*var)->dtype()), ", updated with ",
                                     DataTypeString(input_type(1)));
    }
    return UpdateLocked<T, kAdd>(**var, h->name, ctx.input(1));
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("VariableV2").Device(DEVICE_CPU), VariableOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Variable").Device(DEVICE_CPU), VariableOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Assign").Device(DEVICE_CPU), AssignOp);
TG_REGISTER_KERNEL(KernelDefBuilder("VarHandleOp").Device(DEVICE_CPU), VarHandleOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ReadVariableOp").Device(DEVICE_CPU), ReadVariableOp);
TG_REGISTER_KERNEL(KernelDefBuilder("AssignVariableOp").Device(DEVICE_CPU), AssignVariableOp);
// On a GPU these move handles and share buffers but never touch an element,
// so the same kernels serve (a variable then holds a device-memory tensor);
// AssignAdd and the other updates that compute are in kernels/gpu. Resource
// handles stay in host memory by their dtype, as TensorFlow's
// HostMemory("resource") says.
TG_REGISTER_KERNEL(KernelDefBuilder("VariableV2").Device(DEVICE_GPU), VariableOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Variable").Device(DEVICE_GPU), VariableOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Assign").Device(DEVICE_GPU), AssignOp);
TG_REGISTER_KERNEL(KernelDefBuilder("VarHandleOp").Device(DEVICE_GPU), VarHandleOp);
TG_REGISTER_KERNEL(KernelDefBuilder("ReadVariableOp").Device(DEVICE_GPU), ReadVariableOp);
TG_REGISTER_KERNEL(KernelDefBuilder("AssignVariableOp").Device(DEVICE_GPU), AssignVariableOp);

#define TG_REGISTER_UPDATE_KERNELS_(T)                                                        \
  TG_REGISTER_KERNEL(KernelDefBuilder("AssignAdd").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                     AssignUpdateOp<T, true>);                                                \
  TG_REGISTER_KERNEL(KernelDefBuilder("AssignSub").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                     AssignUpdateOp<T, false>);                                               \
  TG_REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("AssignAddVariableOp").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),  \
      AssignUpdateVariableOp<T, true>);                                                       \
  TG_REGISTER_KERNEL(                                                                         \
      KernelDefBuilder("AssignSubVariableOp").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),  \
      AssignUpdateVariableOp<T, false>)
TG_REGISTER_UPDATE_KERNELS_(float);
TG_REGISTER_UPDATE_KERNELS_(double);
TG_REGISTER_UPDATE_KERNELS_(int32_t);
TG_REGISTER_UPDATE_KERNELS_(int64_t);
#undef TG_REGISTER_UPDATE_KERNELS_

}  // namespace tensorgrid
