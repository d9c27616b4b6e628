// The gradient function of each differentiable op, by op type, in the shape
// of TensorFlow's tensorflow/cc/framework/grad_op_registry.h:
//
//   // z = MatMul(a, b): dz flows in, da and db flow out.
//   absl::Status MatMulGrad(const Scope& scope, const ForwardOp& op,
//                           const std::vector<Output>& grad_outputs,
//                           std::vector<Output>* grad_inputs) {
//     grad_inputs->push_back(ops::MatMul(scope, grad_outputs[0], op.input(1),
//                                        ops::MatMul::TransposeB(true)));
//     grad_inputs->push_back(ops::MatMul(scope, op.input(0), grad_outputs[0],
//                                        ops::MatMul::TransposeA(true)));
//     return absl::OkStatus();
//   }
//   TG_REGISTER_GRADIENT("MatMul", MatMulGrad);
//
// A gradient function gets one gradient per output of the op (an invalid
// Output, NoGradient(), for an output no gradient flows into) and returns
// one per data input, NoGradient() for an input that is not differentiable
// (a shape, axes, integer labels). It builds its nodes through `scope`.
//
// TG_REGISTER_NO_GRADIENT("ZerosLike") declares that an op's outputs carry
// no gradient back to its inputs at all: AddSymbolicGradients treats paths
// through it like paths through integer tensors (not paths).
//
// Registration happens at static initialization; lookups are thread-safe.
#ifndef TENSORGRID_CLIENT_GRADIENTS_GRAD_OP_REGISTRY_H_
#define TENSORGRID_CLIENT_GRADIENTS_GRAD_OP_REGISTRY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "client/output.h"
#include "client/scope.h"
#include "core/framework/attr_value_util.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

// The node a gradient function differentiates: its NodeDef (op type and
// attrs, defaults filled in), its data inputs and its outputs. Valid for the
// duration of the gradient function's call.
class ForwardOp {
 public:
  ForwardOp(const NodeDef& node, std::vector<Output> inputs, Operation op)
      : node_(node), inputs_(std::move(inputs)), op_(std::move(op)) {}

  const NodeDef& node() const { return node_; }
  const std::string& name() const { return node_.name(); }
  const std::string& type() const { return node_.op(); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Output& input(int i) const { return inputs_[i]; }
  int num_outputs() const { return op_.num_outputs(); }
  Output output(int i) const { return Output(op_, i); }
  template <typename T>
  absl::Status GetAttr(absl::string_view attr, T* value) const {
    return GetNodeAttr(node_, attr, value);
  }

 private:
  const NodeDef& node_;
  std::vector<Output> inputs_;
  Operation op_;
};

using GradFunc = absl::Status (*)(const Scope& scope, const ForwardOp& op,
                                  const std::vector<Output>& grad_outputs,
                                  std::vector<Output>* grad_inputs);

// "No gradient": what a gradient function returns for a non-differentiable
// input, and what it is given for an output no gradient flows into.
inline Output NoGradient() { return Output(); }

class GradOpRegistry {
 public:
  static GradOpRegistry* Global();

  // A second registration for one op is a programmer error (aborts).
  void Register(const std::string& op, GradFunc func);
  void RegisterNoGradient(const std::string& op);
  // The gradient function of `op`; nullptr when none is registered (also
  // for ops registered as having no gradient).
  GradFunc Lookup(absl::string_view op) const;
  // Registered with TG_REGISTER_NO_GRADIENT.
  bool HasNoGradient(absl::string_view op) const;

 private:
  mutable absl::Mutex mu_;
  // nullptr: registered as having no gradient.
  absl::flat_hash_map<std::string, GradFunc> funcs_ ABSL_GUARDED_BY(mu_);
};

struct GradOpRegistrar {
  GradOpRegistrar(const std::string& op, GradFunc func);
  explicit GradOpRegistrar(const std::string& op);  // no gradient
};

#define TG_REGISTER_GRADIENT(op, func) TG_REGISTER_GRADIENT_UNIQ_(__COUNTER__, op, func)
#define TG_REGISTER_GRADIENT_UNIQ_(ctr, op, func) TG_REGISTER_GRADIENT_UNIQ2_(ctr, op, func)
#define TG_REGISTER_GRADIENT_UNIQ2_(ctr, op, func) \
  static ::tensorgrid::GradOpRegistrar tg_grad_registrar_##ctr(op, func)

#define TG_REGISTER_NO_GRADIENT(op) TG_REGISTER_NO_GRADIENT_UNIQ_(__COUNTER__, op)
#define TG_REGISTER_NO_GRADIENT_UNIQ_(ctr, op) TG_REGISTER_NO_GRADIENT_UNIQ2_(ctr, op)
#define TG_REGISTER_NO_GRADIENT_UNIQ2_(ctr, op) \
  static ::tensorgrid::GradOpRegistrar tg_grad_registrar_##ctr(op)

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_GRADIENTS_GRAD_OP_REGISTRY_H_
