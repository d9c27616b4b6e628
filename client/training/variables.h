// Variables with initializers, and the graph-wide view of them: TensorFlow's
// tf.Variable / tf.get_variable, tf.global_variables(),
// tf.global_variables_initializer() and tf.report_uninitialized_variables()
// for the C++ client.
//
//   Scope root = Scope::NewRootScope();
//   training::Variable w(root, "w", {784, 10}, DT_FLOAT, training::GlorotUniform(1));
//   training::Variable b(root, "b", {10}, DT_FLOAT, training::Zeros());
//   auto y = ops::Add(root, ops::MatMul(root, x, w), b);
//   Operation init = training::GlobalVariablesInitializer(root);
//   ClientSession session(root);
//   TG_RETURN_IF_ERROR(session.Run({}, {}, {init}, nullptr));
//
// What a Variable named "w" builds (TensorFlow's names):
//   w                       VariableV2 (or VarHandleOp with use_resource)
//   w/Initializer/...       the initial value, from the Initializer
//   w/Assign                Assign (AssignVariableOp) of the initial value: the initializer
//   w/Read/ReadVariableOp   the value (resource variables only)
// The initializer ops are colocated with the variable (`_class: loc:@w`), so
// they run where it lives, e.g. on its ps task under a ReplicaDeviceSetter.
//
// The registry: the variable node itself carries what GlobalVariables needs
// (attrs `_tg_initializer`, its initializer's name, and `_tg_collections`,
// e.g. ["variables", "trainable_variables"]), so every scope of the graph
// sees every variable built through this helper, in creation order, and the
// marks travel with the GraphDef. Variables built with ops::Variable directly
// are not registered. GlobalVariablesInitializer and
// ReportUninitializedVariables cover the variables that exist when they are
// called: call them after building the model and the optimizer (whose slots
// are variables too), as in TensorFlow.
//
// Thread safety: that of Scope (build from one thread).
#ifndef TENSORGRID_CLIENT_TRAINING_VARIABLES_H_
#define TENSORGRID_CLIENT_TRAINING_VARIABLES_H_

#include <memory>
#include <string>
#include <vector>

#include "client/output.h"
#include "client/scope.h"
#include "client/training/initializers.h"
#include "core/framework/tensor_shape.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {
namespace training {

// Collection names, TensorFlow's GraphKeys.
inline constexpr char kGlobalVariables[] = "variables";
inline constexpr char kTrainableVariables[] = "trainable_variables";
inline constexpr char kGlobalStep[] = "global_step";

// How a distribution strategy keeps a variable's copies (TensorFlow's
// tf.VariableSynchronization, the two kinds tensorgrid has). kAuto: a
// trainable variable is mirrored on every replica, a non-trainable one (the
// global step) has one copy. kOnWrite: mirrored even when not trainable, for
// state every replica updates alike in its step, such as batch norm's moving
// statistics: each replica writes the same (all-reduced) value to its copy.
// Outside a strategy's scope both mean one plain variable.
enum class VariableSynchronization { kAuto, kOnWrite };

struct VariableOptions {
  // Joins the trainable variables (what Optimizer::Minimize updates by default).
  bool trainable = true;
  VariableSynchronization synchronization = VariableSynchronization::kAuto;
  // A resource variable (VarHandleOp) instead of a reference one (VariableV2).
  bool use_resource = false;
  // More collections to join, besides "variables" (and "trainable_variables").
  std::vector<std::string> collections;
};

class Variable;

// Builds the variables of scopes that carry it (Scope::WithVariableCreator),
// instead of the Variable constructor: how a distribution strategy
// (client/distribute/strategy.h) places and mirrors the variables made in
// its scope. `scope` is the caller's, without the creator.
class VariableCreator : public VariableCreatorHook {
 public:
  virtual Variable Create(const Scope& scope, const std::string& name, const TensorShape& shape,
                          DataType dtype, const Initializer& initializer,
                          const VariableOptions& options) const = 0;
};

// A variable built with its initializer. A plain value (names and dtypes,
// like Output); default-constructed, or after an error, it is invalid.
//
// A mirrored variable (Variable::Mirrored) has one component variable per
// replica. Inside a replica's step function (client/distribute) every
// accessor below answers for that replica's component, so model code uses
// the variable as if it were one (TensorFlow's MirroredVariable); elsewhere
// it answers for component 0, the primary.
class Variable {
 public:
  Variable() = default;
  // Builds variable `name` (made unique within `scope`'s name scope like a
  // sub scope: "w", "w_1") of `shape` and `dtype`, initialized by
  // `initializer`. Errors go on the scope. The scope's control dependencies
  // do not apply to the variable and its initializer (TensorFlow's
  // init_scope); its device, device functions and colocation do.
  Variable(const Scope& scope, const std::string& name, const TensorShape& shape, DataType dtype,
           const Initializer& initializer, const VariableOptions& options = VariableOptions());

  // The variable a node built by this helper describes; invalid for any other node.
  static Variable FromNodeDef(const NodeDef& node);
  // A mirrored variable over `components` (one per replica, the primary
  // first; plain variables of one dtype and shape) whose initializer() is
  // `initializer` (which should initialize every component).
  static Variable Mirrored(std::vector<Variable> components, const Operation& initializer);

  bool valid() const { return handle_.valid(); }
  // The variable node's name ("layer1/w").
  const std::string& name() const { return Resolve().handle_.node_name(); }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  bool is_resource() const { return is_resource_; }
  bool trainable() const { return trainable_; }

  // The variable node.
  const Operation& op() const { return Resolve().handle_.op(); }
  // What updates take: the reference output (ref variables) or the resource handle.
  const Output& handle() const { return Resolve().handle_; }
  // What computations take: the reference output itself (its consumers read
  // the current value), or the "<name>/Read/ReadVariableOp" output.
  // (Gradients are taken with respect to handle(): a resource variable's
  // gradient flows into its handle through this and any other read.)
  const Output& value() const { return Resolve().value_; }
  // Runs the initial value into the variable (every component's, for a
  // mirrored variable).
  const Operation& initializer() const { return initializer_; }

  // Mirrored variables: the components, primary first; empty otherwise.
  const std::vector<Variable>& components() const;

  operator Output() const { return value(); }  // NOLINT: implicit, as a tf.Variable converts
  operator Input() const { return value(); }   // NOLINT

 private:
  // The component of the current replica (see internal::ReplicaGuard).
  const Variable& Resolve() const;

  Output handle_;
  Output value_;
  Operation initializer_;
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  bool is_resource_ = false;
  bool trainable_ = false;
  std::shared_ptr<const std::vector<Variable>> components_;
};

namespace internal {
// While alive, mirrored variables on this thread resolve to component
// `replica` (client/distribute sets it around each replica's step function).
class ReplicaGuard {
 public:
  explicit ReplicaGuard(int replica);
  ~ReplicaGuard();
  ReplicaGuard(const ReplicaGuard&) = delete;
  ReplicaGuard& operator=(const ReplicaGuard&) = delete;

 private:
  int saved_;
};
// The replica set by the innermost ReplicaGuard on this thread, or -1.
int CurrentReplica();
}  // namespace internal

// The variables built through Variable in `scope`'s graph that joined
// `collection`, in creation order (empty if the scope holds an error).
std::vector<Variable> GetCollection(const Scope& scope, const std::string& collection);
// Every variable (collection "variables").
std::vector<Variable> GlobalVariables(const Scope& scope);
// The trainable ones (collection "trainable_variables").
std::vector<Variable> TrainableVariables(const Scope& scope);

// One NoOp ("init") depending on the initializer of every variable that
// exists now; running it initializes them all.
Operation GlobalVariablesInitializer(const Scope& scope);

// A 1-D string tensor: the names of the variables that exist now and are not
// initialized when it runs (empty once all are). Each check
// (IsVariableInitialized / VarIsInitializedOp) runs on its variable's device.
Output ReportUninitializedVariables(const Scope& scope);

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_VARIABLES_H_
