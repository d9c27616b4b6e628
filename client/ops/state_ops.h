// State ops: variables that keep a tensor across steps. Two kinds, as in
// TensorFlow: reference variables (Variable, i.e. the VariableV2 op, updated
// by Assign/AssignAdd/AssignSub through its reference output) and resource
// variables (VarHandleOp, read with ReadVariableOp, updated by
// AssignVariableOp/AssignAddVariableOp/AssignSubVariableOp).
//
//   auto w = ops::Variable(scope.WithOpName("w"), {2, 2}, DT_FLOAT);
//   auto init = ops::Assign(scope, w, ops::ZerosLike(scope, w));
//   auto step = ops::AssignSub(scope, w, grad);
//
//   auto v = ops::VarHandleOp(scope.WithOpName("v"), DT_FLOAT, {2});
//   auto set = ops::AssignVariableOp(scope, v, {1.f, 2.f});
//   auto read = ops::ReadVariableOp(scope, v, DT_FLOAT);
#ifndef TENSORGRID_CLIENT_OPS_STATE_OPS_H_
#define TENSORGRID_CLIENT_OPS_STATE_OPS_H_

#include <optional>
#include <string>
#include <utility>

#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace ops {
namespace internal {

// Container and SharedName, shared by the ops that create variables.
template <typename Self>
struct VariableAttrs {
  // The resource container the variable lives in ("" = the default).
  Self Container(const std::string& x) const {
    Self r = static_cast<const Self&>(*this);
    r.container_ = x;
    return r;
  }
  // The name the variable is shared under ("" = the node name).
  Self SharedName(const std::string& x) const {
    Self r = static_cast<const Self&>(*this);
    r.shared_name_ = x;
    return r;
  }
  std::optional<std::string> container_;
  std::optional<std::string> shared_name_;
};

// AssignAdd and AssignSub: ref += / -= value.
class AssignUpdateOp {
 public:
  struct Attrs {
    // Hold the variable's lock during the update (default false).
    Attrs UseLocking(bool x) const {
      Attrs r = *this;
      r.use_locking_ = x;
      return r;
    }
    std::optional<bool> use_locking_;
  };
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  operator Output() const { return output_ref; }
  operator Input() const { return output_ref; }

  Operation operation;
  Output output_ref;

 protected:
  AssignUpdateOp(const Scope& scope, Input ref, Input value, const Attrs& attrs,
                 const char* op_type);
};

}  // namespace internal

// A reference variable (op VariableV2); `ref` is its reference output.
class Variable {
 public:
  struct Attrs : internal::VariableAttrs<Attrs> {};
  Variable(const Scope& scope, const PartialTensorShape& shape, DataType dtype,
           const Attrs& attrs = Attrs());
  operator Output() const { return ref; }
  operator Input() const { return ref; }
  static Attrs Container(const std::string& x) { return Attrs().Container(x); }
  static Attrs SharedName(const std::string& x) { return Attrs().SharedName(x); }

  Operation operation;
  Output ref;
};

// ref = value; output_ref is `ref` after the assignment.
class Assign {
 public:
  struct Attrs {
    // Hold the variable's lock during the assignment (default true).
    Attrs UseLocking(bool x) const {
      Attrs r = *this;
      r.use_locking_ = x;
      return r;
    }
    // Require `value` to have the variable's shape (default true).
    Attrs ValidateShape(bool x) const {
      Attrs r = *this;
      r.validate_shape_ = x;
      return r;
    }
    std::optional<bool> use_locking_;
    std::optional<bool> validate_shape_;
  };
  Assign(const Scope& scope, Input ref, Input value, const Attrs& attrs = Attrs());
  operator Output() const { return output_ref; }
  operator Input() const { return output_ref; }
  static Attrs UseLocking(bool x) { return Attrs().UseLocking(x); }
  static Attrs ValidateShape(bool x) { return Attrs().ValidateShape(x); }

  Operation operation;
  Output output_ref;
};

// ref += value
class AssignAdd : public internal::AssignUpdateOp {
 public:
  AssignAdd(const Scope& scope, Input ref, Input value, const Attrs& attrs = Attrs())
      : AssignUpdateOp(scope, std::move(ref), std::move(value), attrs, "AssignAdd") {}
};

// ref -= value
class AssignSub : public internal::AssignUpdateOp {
 public:
  AssignSub(const Scope& scope, Input ref, Input value, const Attrs& attrs = Attrs())
      : AssignUpdateOp(scope, std::move(ref), std::move(value), attrs, "AssignSub") {}
};

// A resource variable's handle (DT_RESOURCE); the variable itself is created
// by its first AssignVariableOp.
class VarHandleOp {
 public:
  struct Attrs : internal::VariableAttrs<Attrs> {};
  VarHandleOp(const Scope& scope, DataType dtype, const PartialTensorShape& shape,
              const Attrs& attrs = Attrs());
  operator Output() const { return resource; }
  operator Input() const { return resource; }
  static Attrs Container(const std::string& x) { return Attrs().Container(x); }
  static Attrs SharedName(const std::string& x) { return Attrs().SharedName(x); }

  Operation operation;
  Output resource;
};

// The current value of the resource variable `resource`.
class ReadVariableOp {
 public:
  ReadVariableOp(const Scope& scope, Input resource, DataType dtype);
  operator Output() const { return value; }
  operator Input() const { return value; }

  Operation operation;
  Output value;
};

// Resource-variable updates: no outputs; run them as targets.
class AssignVariableOp {
 public:
  AssignVariableOp(const Scope& scope, Input resource, Input value);
  operator Operation() const { return operation; }

  Operation operation;
};

class AssignAddVariableOp {
 public:
  AssignAddVariableOp(const Scope& scope, Input resource, Input value);
  operator Operation() const { return operation; }

  Operation operation;
};

class AssignSubVariableOp {
 public:
  AssignSubVariableOp(const Scope& scope, Input resource, Input value);
  operator Operation() const { return operation; }

  Operation operation;
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_STATE_OPS_H_
