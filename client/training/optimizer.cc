#include "client/training/optimizer.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "client/gradients/gradients.h"
#include "client/node_builder.h"
#include "client/ops/array_ops.h"
#include "client/ops/math_ops.h"
#include "client/ops/state_ops.h"
#include "client/ops/training_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {
namespace {

// `name` of the sub scope `sub` of `scope`, relative to `scope`'s name scope:
// the op name that gives a node exactly the sub scope's name.
std::string RelativeName(const Scope& scope, const Scope& sub) {
  const std::string& full = sub.name_scope();
  return scope.name_scope().empty() ? full : full.substr(scope.name_scope().size() + 1);
}

// A scope whose nodes go where `op` is: colocated with it, whatever device
// `scope` asks for.
Scope ColocatedWith(const Scope& scope, const Operation& op) {
  return scope.WithDevice("").ColocateWith(op);
}

// `value` of a variable as `dtype` (a Cast when the dtypes differ).
Output AsType(const Scope& scope, const Output& value, DataType dtype) {
  return RemoveRefType(value.type()) == dtype ? value : ops::Cast(scope, value, dtype);
}

}  // namespace

Output Hyperparameter::ToTensor(const Scope& scope, DataType dtype) const {
  if (tensor_.valid()) return AsType(scope, tensor_, dtype);
  switch (dtype) {
    case DT_FLOAT: return ops::Const(scope, Tensor::Scalar<float>(static_cast<float>(value_)));
    case DT_DOUBLE: return ops::Const(scope, Tensor::Scalar<double>(value_));
    default:
      scope.UpdateStatus(errors::InvalidArgument("a hyperparameter of dtype ",
                                                 DataTypeString(dtype), " is not supported"));
      return Output();
  }
}

absl::StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) const {
  TG_RETURN_IF_ERROR(scope.status());
  const std::vector<Variable> vars = var_list.empty() ? TrainableVariables(scope) : var_list;
  if (vars.empty()) return errors::InvalidArgument(name_, ": no variables to optimize");
  std::vector<Output> xs;
  for (const Variable& var : vars) {
    if (!var.valid()) return errors::InvalidArgument(name_, ": an invalid variable in var_list");
    // A resource variable's gradient flows into its handle through every read.
    xs.push_back(var.handle());
  }
  std::vector<Output> grads;
  TG_RETURN_IF_ERROR(WithContext(AddSymbolicGradients(scope, {loss}, xs, &grads),
                                 absl::StrCat(name_, ": computing gradients")));
  std::vector<GradAndVar> grads_and_vars;
  for (size_t i = 0; i < vars.size(); ++i) grads_and_vars.emplace_back(grads[i], vars[i]);
  return grads_and_vars;
}

absl::StatusOr<Operation> Optimizer::Minimize(const Scope& scope, const Output& loss,
                                              const std::vector<Variable>& var_list,
                                              const std::optional<Variable>& global_step,
                                              const std::string& name) {
  TG_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads_and_vars,
                      ComputeGradients(scope, loss, var_list));
  return ApplyGradients(scope, grads_and_vars, global_step, name);
}

absl::StatusOr<Operation> Optimizer::ApplyGradients(const Scope& scope,
                                                    const std::vector<GradAndVar>& grads_and_vars,
                                                    const std::optional<Variable>& global_step,
                                                    const std::string& name) {
  TG_RETURN_IF_ERROR(scope.status());
  std::vector<GradAndVar> to_apply;
  std::vector<std::string> names;
  for (size_t i = 0; i < grads_and_vars.size(); ++i) {
    const auto& [grad, var] = grads_and_vars[i];
    if (!var.valid()) {
      return errors::InvalidArgument(name_, ": variable ", i, " of the gradient list is invalid");
    }
    const std::string quoted = absl::StrCat("'", var.name(), "'");
    if (std::find(names.begin(), names.end(), quoted) != names.end()) {
      return errors::InvalidArgument(name_, ": variable ", quoted,
                                     " appears twice in the gradient list");
    }
    names.push_back(quoted);
    if (!grad.valid()) continue;
    if (var.dtype() != DT_FLOAT && var.dtype() != DT_DOUBLE) {
      return errors::InvalidArgument(name_, ": variable '", var.name(), "' is ",
                                     DataTypeString(var.dtype()),
                                     "; optimizers update float and double variables");
    }
    if (RemoveRefType(grad.type()) != var.dtype()) {
      return errors::InvalidArgument(name_, ": the gradient '", grad.name(), "' for variable '",
                                     var.name(), "' is ", DataTypeString(grad.type()),
                                     ", the variable ", DataTypeString(var.dtype()));
    }
    to_apply.push_back(grads_and_vars[i]);
  }
  if (to_apply.empty()) {
    return errors::InvalidArgument(name_, ": no gradients provided for any variable: [",
                                   absl::StrJoin(names, ", "), "]");
  }
  if (global_step && !global_step->valid()) {
    return errors::InvalidArgument(name_, ": the global step is an invalid variable");
  }

  std::vector<Variable> vars;
  for (const GradAndVar& gv : to_apply) vars.push_back(gv.second);
  CreateSlots(scope, vars);
  TG_RETURN_IF_ERROR(scope.status());

  const Scope apply = scope.NewSubScope(name.empty() ? name_ : name);
  std::vector<Operation> updates;
  for (const auto& [grad, var] : to_apply) {
    updates.push_back(
        ApplyDense(ColocatedWith(apply.NewSubScope("update_" + var.name()), var.op()), grad, var));
  }
  TG_RETURN_IF_ERROR(scope.status());
  const std::vector<Operation> finish = Finish(apply, updates);

  // The step's op is named like `apply` ("Adam", "Adam_1"), as in TensorFlow.
  const Scope named = scope.WithOpName(RelativeName(scope, apply));
  Operation result;
  if (!global_step) {
    result = NodeBuilder(named.WithControlDependencies(finish), "NoOp").Finalize();
  } else {
    const std::vector<Operation> done = {
        NodeBuilder(apply.WithControlDependencies(finish), "NoOp", "update").Finalize()};
    const Scope s = ColocatedWith(named.WithControlDependencies(done), global_step->op());
    const Input one = global_step->dtype() == DT_INT32 ? Input(int32_t{1}) : Input(int64_t{1});
    result = global_step->is_resource()
                 ? ops::AssignAddVariableOp(s, global_step->handle(), one).operation
                 : ops::AssignAdd(s, global_step->handle(), one).operation;
  }
  TG_RETURN_IF_ERROR(scope.status());
  return result;
}

Variable Optimizer::GetSlot(const Variable& var, const std::string& slot_name) const {
  auto slots = slots_.find(slot_name);
  if (slots == slots_.end()) return Variable();
  auto it = slots->second.find(var.name());
  return it == slots->second.end() ? Variable() : it->second;
}

std::vector<std::string> Optimizer::GetSlotNames() const {
  std::vector<std::string> names;
  for (const auto& [slot_name, slots] : slots_) names.push_back(slot_name);
  return names;
}

Variable Optimizer::GetOrCreateSlot(const Scope& scope, const Variable& var,
                                    const std::string& slot_name, const Initializer& initializer) {
  std::map<std::string, Variable>& slots = slots_[slot_name];
  auto it = slots.find(var.name());
  if (it != slots.end()) return it->second;
  VariableOptions options;
  options.trainable = false;
  options.use_resource = var.is_resource();
  Variable slot(ColocatedWith(scope, var.op()), var.name() + "/" + name_, var.shape(), var.dtype(),
                initializer, options);
  if (slot.valid()) slots.emplace(var.name(), slot);
  return slot;
}

// GradientDescentOptimizer

GradientDescentOptimizer::GradientDescentOptimizer(Hyperparameter learning_rate, const Attrs& attrs)
    : Optimizer(attrs.name_.value_or("GradientDescent"), attrs.use_locking_),
      learning_rate_(std::move(learning_rate)) {}

Operation GradientDescentOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                               const Variable& var) {
  const Output lr = learning_rate_.ToTensor(scope.WithOpName("learning_rate"), var.dtype());
  if (var.is_resource()) {
    return ops::ResourceApplyGradientDescent(
               scope, var.handle(), lr, grad,
               ops::ResourceApplyGradientDescent::UseLocking(use_locking()))
        .operation;
  }
  return ops::ApplyGradientDescent(scope, var.handle(), lr, grad,
                                   ops::ApplyGradientDescent::UseLocking(use_locking()))
      .operation;
}

// MomentumOptimizer

MomentumOptimizer::MomentumOptimizer(Hyperparameter learning_rate, Hyperparameter momentum,
                                     const Attrs& attrs)
    : Optimizer(attrs.name_.value_or("Momentum"), attrs.use_locking_),
      learning_rate_(std::move(learning_rate)),
      momentum_(std::move(momentum)),
      use_nesterov_(attrs.use_nesterov_.value_or(false)) {}

void MomentumOptimizer::CreateSlots(const Scope& scope, const std::vector<Variable>& vars) {
  for (const Variable& var : vars) GetOrCreateSlot(scope, var, "momentum", Zeros());
}

Operation MomentumOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                        const Variable& var) {
  const Variable accum = GetSlot(var, "momentum");
  const Output lr = learning_rate_.ToTensor(scope.WithOpName("learning_rate"), var.dtype());
  const Output momentum = momentum_.ToTensor(scope.WithOpName("momentum"), var.dtype());
  if (var.is_resource()) {
    return ops::ResourceApplyMomentum(
               scope, var.handle(), accum.handle(), lr, grad, momentum,
               ops::ResourceApplyMomentum::UseLocking(use_locking()).UseNesterov(use_nesterov_))
        .operation;
  }
  return ops::ApplyMomentum(
             scope, var.handle(), accum.handle(), lr, grad, momentum,
             ops::ApplyMomentum::UseLocking(use_locking()).UseNesterov(use_nesterov_))
      .operation;
}

// AdagradOptimizer

AdagradOptimizer::AdagradOptimizer(Hyperparameter learning_rate, const Attrs& attrs)
    : Optimizer(attrs.name_.value_or("Adagrad"), attrs.use_locking_),
      learning_rate_(std::move(learning_rate)),
      initial_accumulator_value_(attrs.initial_accumulator_value_.value_or(0.1)) {}

void AdagradOptimizer::CreateSlots(const Scope& scope, const std::vector<Variable>& vars) {
  for (const Variable& var : vars) {
    GetOrCreateSlot(scope, var, "accumulator", Constant(initial_accumulator_value_));
  }
}

Operation AdagradOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                       const Variable& var) {
  const Variable accum = GetSlot(var, "accumulator");
  const Output lr = learning_rate_.ToTensor(scope.WithOpName("learning_rate"), var.dtype());
  if (var.is_resource()) {
    return ops::ResourceApplyAdagrad(scope, var.handle(), accum.handle(), lr, grad,
                                     ops::ResourceApplyAdagrad::UseLocking(use_locking()))
        .operation;
  }
  return ops::ApplyAdagrad(scope, var.handle(), accum.handle(), lr, grad,
                           ops::ApplyAdagrad::UseLocking(use_locking()))
      .operation;
}

// AdamOptimizer

AdamOptimizer::AdamOptimizer(Hyperparameter learning_rate, const Attrs& attrs)
    : Optimizer(attrs.name_.value_or("Adam"), attrs.use_locking_),
      learning_rate_(std::move(learning_rate)),
      beta1_(attrs.beta1_.value_or(0.9)),
      beta2_(attrs.beta2_.value_or(0.999)),
      epsilon_(attrs.epsilon_.value_or(1e-8)) {}

void AdamOptimizer::CreateSlots(const Scope& scope, const std::vector<Variable>& vars) {
  if (!beta1_power_.valid()) {
    // Colocated with the first variable by name, as TensorFlow does.
    const Variable& first =
        *std::min_element(vars.begin(), vars.end(),
                          [](const Variable& a, const Variable& b) { return a.name() < b.name(); });
    VariableOptions options;
    options.trainable = false;
    options.use_resource = first.is_resource();
    const Scope colocated = ColocatedWith(scope, first.op());
    beta1_power_ = Variable(colocated, "beta1_power", TensorShape({}), first.dtype(),
                            Constant(beta1_), options);
    beta2_power_ = Variable(colocated, "beta2_power", TensorShape({}), first.dtype(),
                            Constant(beta2_), options);
  }
  for (const Variable& var : vars) {
    GetOrCreateSlot(scope, var, "m", Zeros());
    GetOrCreateSlot(scope, var, "v", Zeros());
  }
}

Operation AdamOptimizer::ApplyDense(const Scope& scope, const Output& grad, const Variable& var) {
  const Variable m = GetSlot(var, "m");
  const Variable v = GetSlot(var, "v");
  const DataType dtype = var.dtype();
  const Output beta1_power = AsType(scope, beta1_power_.value(), dtype);
  const Output beta2_power = AsType(scope, beta2_power_.value(), dtype);
  const Output lr = learning_rate_.ToTensor(scope.WithOpName("learning_rate"), dtype);
  const Output beta1 = Hyperparameter(beta1_).ToTensor(scope.WithOpName("beta1"), dtype);
  const Output beta2 = Hyperparameter(beta2_).ToTensor(scope.WithOpName("beta2"), dtype);
  const Output epsilon = Hyperparameter(epsilon_).ToTensor(scope.WithOpName("epsilon"), dtype);
  if (var.is_resource()) {
    return ops::ResourceApplyAdam(scope, var.handle(), m.handle(), v.handle(), beta1_power,
                                  beta2_power, lr, beta1, beta2, epsilon, grad,
                                  ops::ResourceApplyAdam::UseLocking(use_locking()))
        .operation;
  }
  return ops::ApplyAdam(scope, var.handle(), m.handle(), v.handle(), beta1_power, beta2_power, lr,
                        beta1, beta2, epsilon, grad, ops::ApplyAdam::UseLocking(use_locking()))
      .operation;
}

std::vector<Operation> AdamOptimizer::Finish(const Scope& scope,
                                             const std::vector<Operation>& updates) {
  std::vector<Operation> ops = updates;
  // beta_power *= beta, once every update has read the old value.
  const Scope after = ColocatedWith(scope.WithControlDependencies(updates), beta1_power_.op());
  for (const auto& [power, beta] :
       {std::make_pair(&beta1_power_, beta1_), std::make_pair(&beta2_power_, beta2_)}) {
    const DataType dtype = power->dtype();
    const Output factor = Hyperparameter(beta).ToTensor(after, dtype);
    if (power->is_resource()) {
      const Output now = ops::ReadVariableOp(after, power->handle(), dtype);
      ops.push_back(
          ops::AssignVariableOp(after, power->handle(), ops::Mul(after, now, factor)).operation);
    } else {
      ops.push_back(ops::Assign(after, power->handle(), ops::Mul(after, power->handle(), factor),
                                ops::Assign::UseLocking(use_locking()))
                        .operation);
    }
  }
  return ops;
}

}  // namespace training
}  // namespace tensorgrid
