// Training ops: the optimizer updates (TensorFlow's names, inputs and attrs).
// The Apply* forms update a reference variable (ops::Variable) in place and
// output it; the ResourceApply* forms update a resource variable
// (ops::VarHandleOp) and have no outputs — run them as targets. Both run on
// the variable's device (the Placer colocates them through the reference or
// resource edge). Update rules: kernels/training/training_ops.cc.
//
//   auto w = ops::Variable(scope.WithOpName("w"), {2}, DT_FLOAT);
//   auto step = ops::ApplyGradientDescent(scope, w, 0.1f, grad);
//   auto accum = ops::Variable(scope.WithOpName("w/Momentum"), {2}, DT_FLOAT);
//   auto nesterov = ops::ApplyMomentum(scope, w, accum, 0.1f, grad, 0.9f,
//                                      ops::ApplyMomentum::UseNesterov(true));
//
// Attrs: UseLocking(true) holds the variables' locks for the whole update, so
// concurrent steps never lose an update (default false, TensorFlow's too).
// The optimizers in client/training/optimizer.h build these for you.
#ifndef TENSORGRID_CLIENT_OPS_TRAINING_OPS_H_
#define TENSORGRID_CLIENT_OPS_TRAINING_OPS_H_

#include <optional>

#include "client/output.h"
#include "client/scope.h"

namespace tensorgrid {
namespace ops {
namespace internal {

template <typename Self>
struct UseLockingAttr {
  // Hold the variables' locks during the update (default false).
  Self UseLocking(bool x) const {
    Self r = static_cast<const Self&>(*this);
    r.use_locking_ = x;
    return r;
  }
  std::optional<bool> use_locking_;
};

template <typename Self>
struct UseNesterovAttr {
  // Nesterov momentum (default false).
  Self UseNesterov(bool x) const {
    Self r = static_cast<const Self&>(*this);
    r.use_nesterov_ = x;
    return r;
  }
  std::optional<bool> use_nesterov_;
};

template <typename Self>
struct UpdateSlotsAttr {
  // Add grad^2 to the accumulator before the update (default true).
  Self UpdateSlots(bool x) const {
    Self r = static_cast<const Self&>(*this);
    r.update_slots_ = x;
    return r;
  }
  std::optional<bool> update_slots_;
};

// The result of a ref-form update: the updated variable.
class RefUpdate {
 public:
  operator Output() const { return out; }
  operator Input() const { return out; }

  Operation operation;
  Output out;
};

// The result of a resource-form update: a node to run as a target.
class ResourceUpdate {
 public:
  operator Operation() const { return operation; }

  Operation operation;
};

}  // namespace internal

// var -= alpha * delta
class ApplyGradientDescent : public internal::RefUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs> {};
  ApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta,
                       const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
};

class ResourceApplyGradientDescent : public internal::ResourceUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs> {};
  ResourceApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta,
                               const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
};

// accum = accum * momentum + grad; var -= lr * accum
// (Nesterov: var -= grad * lr + accum * momentum * lr)
class ApplyMomentum : public internal::RefUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs>, internal::UseNesterovAttr<Attrs> {};
  ApplyMomentum(const Scope& scope, Input var, Input accum, Input lr, Input grad, Input momentum,
                const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs UseNesterov(bool x) { return Attrs().UseNesterov(x); }
};

class ResourceApplyMomentum : public internal::ResourceUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs>, internal::UseNesterovAttr<Attrs> {};
  ResourceApplyMomentum(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                        Input momentum, const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs UseNesterov(bool x) { return Attrs().UseNesterov(x); }
};

// accum += grad * grad; var -= lr * grad / sqrt(accum)
class ApplyAdagrad : public internal::RefUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs>, internal::UpdateSlotsAttr<Attrs> {};
  ApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input grad,
               const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs UpdateSlots(bool x) { return Attrs().UpdateSlots(x); }
};

class ResourceApplyAdagrad : public internal::ResourceUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs>, internal::UpdateSlotsAttr<Attrs> {};
  ResourceApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                       const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs UpdateSlots(bool x) { return Attrs().UpdateSlots(x); }
};

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
// m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2)
// var -= lr_t * m / (sqrt(v) + epsilon)
class ApplyAdam : public internal::RefUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs>, internal::UseNesterovAttr<Attrs> {};
  ApplyAdam(const Scope& scope, Input var, Input m, Input v, Input beta1_power, Input beta2_power,
            Input lr, Input beta1, Input beta2, Input epsilon, Input grad,
            const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs UseNesterov(bool x) { return Attrs().UseNesterov(x); }
};

class ResourceApplyAdam : public internal::ResourceUpdate {
 public:
  struct Attrs : internal::UseLockingAttr<Attrs>, internal::UseNesterovAttr<Attrs> {};
  ResourceApplyAdam(const Scope& scope, Input var, Input m, Input v, Input beta1_power,
                    Input beta2_power, Input lr, Input beta1, Input beta2, Input epsilon,
                    Input grad, const Attrs& attrs = Attrs());
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs UseNesterov(bool x) { return Attrs().UseNesterov(x); }
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_TRAINING_OPS_H_
