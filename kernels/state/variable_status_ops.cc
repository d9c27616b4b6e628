// Whether variables hold a value yet: IsVariableInitialized (a ref variable)
// and VarIsInitializedOp (a resource variable), TensorFlow's ops; and
// _UninitializedVariableNames, which turns N such answers into the names of
// the variables that are not initialized. TensorFlow builds the last step of
// report_uninitialized_variables from stack, logical_not and boolean_mask;
// here it is one node, which training::ReportUninitializedVariables builds.
#include <string>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

class IsVariableInitializedOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    const std::shared_ptr<Var>& var = ctx.input_ref(0);
    if (var == nullptr) return errors::InvalidArgument("input 'ref' is not a variable reference");
    absl::MutexLock lock(&var->mu);
    ctx.set_output(0, Tensor::Scalar<bool>(var->initialized));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class VarIsInitializedOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& t = ctx.input(0);
    if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
      return errors::InvalidArgument("input 'resource' must be a scalar resource handle, got ",
                                     t.DebugString());
    }
    const ResourceHandle& h = t.scalar<ResourceHandle>();
    auto var = ctx.resource_manager()->Lookup<Var>(h.container, h.name);
    bool initialized = false;
    if (var.ok()) {
      absl::MutexLock lock(&(*var)->mu);
      initialized = (*var)->initialized;
    } else if (!absl::IsNotFound(var.status())) {
      return var.status();
    }
    ctx.set_output(0, Tensor::Scalar<bool>(initialized));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class UninitializedVariableNamesOp final : public OpKernel {
 public:
  explicit UninitializedVariableNamesOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("names", &names_));
    if (static_cast<int>(names_.size()) != num_inputs()) {
      ctx.SetStatus(errors::InvalidArgument("attr 'names' has ", names_.size(), " names for ",
                                            num_inputs(), " inputs"));
    }
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    std::vector<std::string> uninitialized;
    for (int i = 0; i < num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (t.NumElements() != 1) {
        return errors::InvalidArgument("input ", i, " (for '", names_[i],
                                       "') must be a scalar, got shape ", t.shape().DebugString());
      }
      if (!t.data<bool>()[0]) uninitialized.push_back(names_[i]);
    }
    ctx.set_output(0,
                   Tensor::FromVector<std::string>(
                       uninitialized, TensorShape({static_cast<int64_t>(uninitialized.size())})));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  std::vector<std::string> names_;
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("IsVariableInitialized").Device(DEVICE_CPU),
                   IsVariableInitializedOp);
TG_REGISTER_KERNEL(KernelDefBuilder("VarIsInitializedOp").Device(DEVICE_CPU), VarIsInitializedOp);
// On a GPU: only the variable's state is read; the answer is in host memory.
TG_REGISTER_KERNEL(
    KernelDefBuilder("IsVariableInitialized").Device(DEVICE_GPU).HostMemory("is_initialized"),
    IsVariableInitializedOp);
TG_REGISTER_KERNEL(
    KernelDefBuilder("VarIsInitializedOp").Device(DEVICE_GPU).HostMemory("is_initialized"),
    VarIsInitializedOp);
TG_REGISTER_KERNEL(KernelDefBuilder("_UninitializedVariableNames").Device(DEVICE_CPU),
                   UninitializedVariableNamesOp);

}  // namespace tensorgrid
