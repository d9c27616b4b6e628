// Optimizers: TensorFlow's tf.train.Optimizer and four of its kinds
// (GradientDescentOptimizer, MomentumOptimizer, AdagradOptimizer,
// AdamOptimizer) for the C++ client. An optimizer builds, for each variable,
// one update op (ApplyAdam, ResourceApplyAdam, ...; client/ops/training_ops.h)
// that runs in place on the variable's device.
//
//   training::Variable w(root, "w", {784, 10}, DT_FLOAT, training::GlorotUniform(1));
//   auto loss = ...;
//   training::Variable step = training::GetOrCreateGlobalStep(root);
//   training::AdamOptimizer adam(0.001);
//   TG_ASSIGN_OR_RETURN(Operation train, adam.Minimize(root, loss, {w}, step));
//   Operation init = training::GlobalVariablesInitializer(root);  // after Minimize: slots too
//   // run init once, then train per step
//
// Minimize is ComputeGradients (symbolic gradients of the loss, from
// client/gradients) followed by ApplyGradients; call the two yourself to
// clip or otherwise change the gradients in between.
//
// Slots: per-variable state ("momentum", "accumulator", "m", "v") lives in
// variables named "<var>/<optimizer name>" ("w/Adam", "w/Adam_1"), zero- or
// constant-initialized, non-trainable, of the variable's kind (ref or
// resource), and colocated with it (`_class: loc:@<var>`), so a variable on a
// ps task keeps its slots there. Adam's beta1_power and beta2_power are
// non-slot variables colocated with the first variable by name. All of them
// join GlobalVariables, so GlobalVariablesInitializer initializes them. Slot
// and non-slot variables are named in the scope given to ApplyGradients
// (give the root scope for TensorFlow's names). One optimizer object builds
// into one graph: it remembers the slots it made.
//
// Updates are colocated with their variable; each update's hyperparameters
// are Consts (or the given tensors, cast to the variable's dtype) built
// beside it. With UseLocking(true) each update holds its variables' locks, so
// concurrent steps (several workers, or several Run calls) never lose one.
//
// Errors are returned (and any error already on the scope is returned too).
// Thread safety: that of Scope; one optimizer builds from one thread.
#ifndef TENSORGRID_CLIENT_TRAINING_OPTIMIZER_H_
#define TENSORGRID_CLIENT_TRAINING_OPTIMIZER_H_

#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client/output.h"
#include "client/scope.h"
#include "client/training/initializers.h"
#include "client/training/variables.h"

namespace tensorgrid {
namespace training {

// A learning rate or other hyperparameter: a number, or a scalar tensor
// computed in the graph (a placeholder, a decay schedule).
class Hyperparameter {
 public:
  Hyperparameter(double value) : value_(value) {}  // NOLINT: implicit by design
  template <typename T, typename = std::enable_if_t<std::is_convertible<T, Output>::value &&
                                                    !std::is_arithmetic<T>::value>>
  Hyperparameter(const T& tensor) : tensor_(tensor) {}  // NOLINT: implicit by design

  // The value as a scalar of `dtype` built in `scope`: a Const, or the tensor
  // (Cast when its dtype differs).
  Output ToTensor(const Scope& scope, DataType dtype) const;

 private:
  double value_ = 0;
  Output tensor_;
};

// A gradient and the variable it is for; an invalid gradient (Output()) is
// skipped, as TensorFlow skips None.
using GradAndVar = std::pair<Output, Variable>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The gradients of `loss` with respect to each variable (all trainable
  // variables when `var_list` is empty), through AddSymbolicGradients on the
  // variables' handle(): a ref variable's reference output, a resource
  // variable's handle (its gradient sums over every read). Its errors are
  // returned, e.g. InvalidArgument for a variable the loss does not depend
  // on (TensorFlow would give a None gradient).
  absl::StatusOr<std::vector<GradAndVar>> ComputeGradients(
      const Scope& scope, const Output& loss, const std::vector<Variable>& var_list = {}) const;

  // One op that applies every gradient to its variable (creating slots first)
  // and then, if `global_step` is given, adds one to it. The op is named
  // `name` (default: the optimizer's name, made unique), its update ops
  // "<name>/update_<var>/...". InvalidArgument when no gradient is valid, a
  // gradient's dtype is not its variable's, or a variable appears twice.
  absl::StatusOr<Operation> ApplyGradients(
      const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
      const std::optional<Variable>& global_step = std::nullopt, const std::string& name = "");

  // ComputeGradients, then ApplyGradients.
  absl::StatusOr<Operation> Minimize(const Scope& scope, const Output& loss,
                                     const std::vector<Variable>& var_list = {},
                                     const std::optional<Variable>& global_step = std::nullopt,
                                     const std::string& name = "");

  // Slot `slot_name` of `var` (invalid if the optimizer made none).
  Variable GetSlot(const Variable& var, const std::string& slot_name) const;
  // The slot names this optimizer has made ("m", "v").
  std::vector<std::string> GetSlotNames() const;

  const std::string& name() const { return name_; }
  bool use_locking() const { return use_locking_; }

 protected:
  Optimizer(std::string name, bool use_locking)
      : name_(std::move(name)), use_locking_(use_locking) {}

  // Creates what the updates of `vars` need (slots, non-slot variables),
  // before any update is built. `scope` is ApplyGradients' own.
  virtual void CreateSlots(const Scope& scope, const std::vector<Variable>& vars) {}
  // The update of `var` by `grad`, built in `scope` (colocated with `var`).
  virtual Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) = 0;
  // The ops the step's result waits for, given the updates; by default the
  // updates. Adam adds its beta power updates (which wait for the updates).
  virtual std::vector<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates) {
    return updates;
  }

  // Slot `slot_name` of `var`, made if missing: a variable of var's shape,
  // dtype and kind named "<var>/<optimizer name>", colocated with `var`.
  Variable GetOrCreateSlot(const Scope& scope, const Variable& var, const std::string& slot_name,
                           const Initializer& initializer);

 private:
  const std::string name_;
  const bool use_locking_;
  std::map<std::string, std::map<std::string, Variable>> slots_;  // slot -> variable name -> slot
};

namespace internal {

// Attrs every optimizer takes.
template <typename Self>
struct OptimizerAttrs {
  // Hold the variables' locks during each update (default false).
  Self UseLocking(bool x) const {
    Self r = static_cast<const Self&>(*this);
    r.use_locking_ = x;
    return r;
  }
  // The name of the ops ApplyGradients builds and of the slots.
  Self Name(const std::string& x) const {
    Self r = static_cast<const Self&>(*this);
    r.name_ = x;
    return r;
  }
  bool use_locking_ = false;
  std::optional<std::string> name_;
};

}  // namespace internal

// var -= learning_rate * grad
class GradientDescentOptimizer : public Optimizer {
 public:
  struct Attrs : internal::OptimizerAttrs<Attrs> {};
  explicit GradientDescentOptimizer(Hyperparameter learning_rate, const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs Name(const std::string& x) { return Attrs().Name(x); }

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  Hyperparameter learning_rate_;
};

// accumulation = momentum * accumulation + grad; var -= learning_rate * accumulation
// (slot "momentum"; Nesterov: var -= learning_rate * (grad + momentum * accumulation)).
class MomentumOptimizer : public Optimizer {
 public:
  struct Attrs : internal::OptimizerAttrs<Attrs> {
    Attrs UseNesterov(bool x) const {
      Attrs r = *this;
      r.use_nesterov_ = x;
      return r;
    }
    std::optional<bool> use_nesterov_;  // default false
  };
  MomentumOptimizer(Hyperparameter learning_rate, Hyperparameter momentum,
                    const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs Name(const std::string& x) { return Attrs().Name(x); }
  static Attrs UseNesterov(bool x) { return Attrs().UseNesterov(x); }

 protected:
  void CreateSlots(const Scope& scope, const std::vector<Variable>& vars) override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  Hyperparameter learning_rate_, momentum_;
  bool use_nesterov_;
};

// accumulator += grad^2; var -= learning_rate * grad / sqrt(accumulator)
// (slot "accumulator", starting at InitialAccumulatorValue, default 0.1).
class AdagradOptimizer : public Optimizer {
 public:
  struct Attrs : internal::OptimizerAttrs<Attrs> {
    Attrs InitialAccumulatorValue(double x) const {
      Attrs r = *this;
      r.initial_accumulator_value_ = x;
      return r;
    }
    std::optional<double> initial_accumulator_value_;  // default 0.1
  };
  explicit AdagradOptimizer(Hyperparameter learning_rate, const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs Name(const std::string& x) { return Attrs().Name(x); }
  static Attrs InitialAccumulatorValue(double x) { return Attrs().InitialAccumulatorValue(x); }

 protected:
  void CreateSlots(const Scope& scope, const std::vector<Variable>& vars) override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  Hyperparameter learning_rate_;
  double initial_accumulator_value_;
};

// Adam (Kingma & Ba), TensorFlow's form: slots "m" and "v"; beta1_power and
// beta2_power start at beta1 and beta2 and are multiplied by them after each
// step's updates, giving the bias correction
//   lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t).
class AdamOptimizer : public Optimizer {
 public:
  struct Attrs : internal::OptimizerAttrs<Attrs> {
    Attrs Beta1(double x) const {
      Attrs r = *this;
      r.beta1_ = x;
      return r;
    }
    Attrs Beta2(double x) const {
      Attrs r = *this;
      r.beta2_ = x;
      return r;
    }
    Attrs Epsilon(double x) const {
      Attrs r = *this;
      r.epsilon_ = x;
      return r;
    }
    std::optional<double> beta1_;    // default 0.9
    std::optional<double> beta2_;    // default 0.999
    std::optional<double> epsilon_;  // default 1e-8
  };
  explicit AdamOptimizer(Hyperparameter learning_rate = 0.001, const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs Name(const std::string& x) { return Attrs().Name(x); }
  static Attrs Beta1(double x) { return Attrs().Beta1(x); }
  static Attrs Beta2(double x) { return Attrs().Beta2(x); }
  static Attrs Epsilon(double x) { return Attrs().Epsilon(x); }

  // The non-slot variables (invalid before the first ApplyGradients).
  const Variable& beta1_power() const { return beta1_power_; }
  const Variable& beta2_power() const { return beta2_power_; }

 protected:
  void CreateSlots(const Scope& scope, const std::vector<Variable>& vars) override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  std::vector<Operation> Finish(const Scope& scope, const std::vector<Operation>& updates) override;

 private:
  Hyperparameter learning_rate_;
  double beta1_, beta2_, epsilon_;
  Variable beta1_power_, beta2_power_;
};

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_OPTIMIZER_H_
