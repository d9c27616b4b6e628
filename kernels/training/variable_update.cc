#include "kernels/training/variable_update.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/framework/device_context.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

absl::Status Uninitialized(const std::string& variable) {
  return errors::FailedPrecondition("attempting to use uninitialized variable '", variable, "'");
}

// The variable behind input `arg`: a ref input, or a resource handle.
absl::StatusOr<std::shared_ptr<Var>> FindVariable(const OpKernelContext& ctx,
                                                  const VariableArg& arg, bool resource) {
  if (!resource) {
    const std::shared_ptr<Var>& var = ctx.input_ref(arg.input);
    if (var == nullptr) {
      return errors::InvalidArgument("input '", arg.name, "' is not a variable reference");
    }
    return var;
  }
  const Tensor& t = ctx.input(arg.input);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return errors::InvalidArgument("input '", arg.name, "' must be a scalar resource handle, got ",
                                   t.DebugString());
  }
  const ResourceHandle& h = t.scalar<ResourceHandle>();
  absl::StatusOr<std::shared_ptr<Var>> var =
      ctx.resource_manager()->Lookup<Var>(h.container, h.name);
  if (absl::IsNotFound(var.status())) return Uninitialized(h.name);
  if (!var.ok()) return WithContext(var.status(), absl::StrCat("input '", arg.name, "'"));
  return var;
}

// Checks `var` and makes its buffer exclusive (copying a shared one); returns
// a handle to that buffer.
absl::StatusOr<Tensor> PrepareLocked(Var& var, const VariableArg& arg, DataType dtype)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(var.mu) {
  if (!var.initialized) return Uninitialized(var.name());
  if (var.dtype() != dtype) {
    return errors::InvalidArgument("input '", arg.name, "': variable '", var.name(), "' has type ",
                                   DataTypeString(var.dtype()), ", but the update's T is ",
                                   DataTypeString(dtype));
  }
  if (!var.tensor.RefCountIsOne()) {
    TG_ASSIGN_OR_RETURN(var.tensor, CopyForWrite(var.tensor));
  }
  return var.tensor;
}

// PrepareLocked for a variable whose mutex an OrderedLocks holds.
absl::StatusOr<Tensor> PrepareHeld(Var& var, const VariableArg& arg,
                                   DataType dtype) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  return PrepareLocked(var, arg, dtype);
}

// Holds the distinct mutexes of some variables, locked in address order.
class OrderedLocks {
 public:
  explicit OrderedLocks(const std::vector<std::shared_ptr<Var>>& vars)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (const auto& var : vars) mutexes_.push_back(&var->mu);
    std::sort(mutexes_.begin(), mutexes_.end());
    mutexes_.erase(std::unique(mutexes_.begin(), mutexes_.end()), mutexes_.end());
    for (absl::Mutex* mu : mutexes_) mu->Lock();
  }
  ~OrderedLocks() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (auto it = mutexes_.rbegin(); it != mutexes_.rend(); ++it) (*it)->Unlock();
  }
  OrderedLocks(const OrderedLocks&) = delete;
  OrderedLocks& operator=(const OrderedLocks&) = delete;

 private:
  std::vector<absl::Mutex*> mutexes_;
};

}  // namespace

absl::Status UpdateVariables(OpKernelContext& ctx, bool resource, bool use_locking, DataType dtype,
                             absl::Span<const VariableArg> args,
                             const std::function<absl::Status(absl::Span<Tensor> vars)>& update) {
  std::vector<std::shared_ptr<Var>> vars;
  vars.reserve(args.size());
  for (const VariableArg& arg : args) {
    TG_ASSIGN_OR_RETURN(std::shared_ptr<Var> var, FindVariable(ctx, arg, resource));
    vars.push_back(std::move(var));
  }
  std::unique_ptr<OrderedLocks> locks;
  if (use_locking) locks = std::make_unique<OrderedLocks>(vars);
  std::vector<Tensor> buffers(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    absl::StatusOr<Tensor> buffer;
    if (use_locking) {
      buffer = PrepareHeld(*vars[i], args[i], dtype);
    } else {
      absl::MutexLock lock(&vars[i]->mu);
      buffer = PrepareLocked(*vars[i], args[i], dtype);
    }
    TG_RETURN_IF_ERROR(buffer.status());
    buffers[i] = *std::move(buffer);
    if (buffers[i].shape() != buffers[0].shape()) {
      return errors::InvalidArgument(
          "input '", args[i].name, "' (variable '", vars[i]->name(), "') has shape ",
          buffers[i].shape().DebugString(), ", but input '", args[0].name, "' (variable '",
          vars[0]->name(), "') has shape ", buffers[0].shape().DebugString());
    }
  }
  return update(absl::MakeSpan(buffers));
}

absl::StatusOr<Tensor> CopyForWrite(const Tensor& t) {
  if (t.OnHost()) return t.DeepCopy();
  DeviceContext* context = t.allocator()->device_context();
  if (context == nullptr) {
    return errors::Internal("no device context copies tensors in ", t.allocator()->Name());
  }
  TG_ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(t.allocator(), t.dtype(), t.shape()));
  TG_RETURN_IF_ERROR(context->CopyTensorInSameDevice(t, &copy));
  return copy;
}

absl::Status CheckScalarInput(const OpKernelContext& ctx, int input, const char* name) {
  const Tensor& t = ctx.input(input);
  if (t.dims() != 0) {
    return errors::InvalidArgument("input '", name, "' must be a scalar, got shape ",
                                   t.shape().DebugString());
  }
  return absl::OkStatus();
}

absl::Status CheckInputShape(const OpKernelContext& ctx, int input, const char* name,
                             const TensorShape& var_shape) {
  const Tensor& t = ctx.input(input);
  if (t.shape() != var_shape) {
    return errors::InvalidArgument("input '", name, "' has shape ", t.shape().DebugString(),
                                   ", but the variable has shape ", var_shape.DebugString());
  }
  return absl::OkStatus();
}

}  // namespace tensorgrid
