// Scope: where the ops:: wrappers put the nodes they build, in TensorFlow's
// C++ shape. A root scope owns a graph; every scope derived from it shares that
// graph (and its error status) and adds its own name prefix, device, control
// dependencies or colocation to the nodes built through it.
//
//   Scope root = Scope::NewRootScope();
//   Scope layer = root.NewSubScope("layer1");              // names "layer1/..."
//   auto w = ops::Variable(layer.WithOpName("w"), {2, 2}, DT_FLOAT);   // "layer1/w"
//   auto y = ops::MatMul(layer.WithDevice("/job:ps/task:0"), x, w);    // "layer1/MatMul"
//   GraphDef graph;
//   TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
//
// Names: an op gets its type as its name ("MatMul"), made unique with a
// suffix ("MatMul_1", "MatMul_2", ...) within its name scope; WithOpName sets
// the exact name instead (reusing a name is an error). Literal inputs become
// Const nodes named like any other ("Const", "Const_1", ...).
//
// Devices: WithDevice requests a device; WithDeviceFunction lets a function
// choose it per node (TensorFlow's `tf.device(fn)`; see ReplicaDeviceSetter in
// client/training/device_setter.h).
//
// Errors: the first error (an unknown op, mismatched input dtypes, a bad
// attr, a duplicate name) is kept on the scope, shared by every scope of the
// graph; later building is a no-op that returns invalid Operations and
// Outputs. Check `scope.status()` (or the result of ToGraphDef) once at the end.
//
// Thread safety: none, as in TensorFlow. A graph and all scopes over it must
// be used from one thread at a time; a ClientSession over the graph must not
// run while nodes are being added.
#ifndef TENSORGRID_CLIENT_SCOPE_H_
#define TENSORGRID_CLIENT_SCOPE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "client/output.h"
#include "proto/graph.pb.h"

namespace tensorgrid {

class NodeBuilder;
struct ScopeGraph;  // the graph and name table every scope of one root shares

// Chooses the device of a node from its NodeDef; see Scope::WithDeviceFunction.
using DeviceFunction = std::function<std::string(const NodeDef& node)>;

// Something a scope carries for the code that builds through it, not for
// its nodes: a distribution strategy (client/distribute) hands out scopes
// whose training::Variable builds go through the strategy (TensorFlow's
// variable_creator_scope). Scope only stores it.
class VariableCreatorHook {
 public:
  virtual ~VariableCreatorHook() = default;
};

class Scope {
 public:
  static Scope NewRootScope();

  Scope(const Scope&);
  Scope& operator=(const Scope&);
  Scope(Scope&&) noexcept;
  Scope& operator=(Scope&&) noexcept;
  ~Scope();

  // A child name scope: its nodes are named "<this scope>/<name>/...". The
  // child name itself is made unique ("layer", "layer_1"). An empty name gives
  // a copy of this scope without its op name.
  Scope NewSubScope(const std::string& child_scope_name) const;
  // The next op built through the returned scope gets exactly this name
  // (joined from the fragments, prefixed by the name scope).
  template <typename... Fragments>
  Scope WithOpName(const Fragments&... fragments) const {
    return WithOpNameImpl(absl::StrCat(fragments...));
  }
  // Adds control dependencies on `ops` (to those already in effect).
  Scope WithControlDependencies(absl::Span<const Operation> ops) const;
  // On the node of `control` (an Output; a template so that `{op}` stays unambiguous).
  template <typename T, typename = std::enable_if_t<std::is_same<T, Output>::value>>
  Scope WithControlDependencies(const T& control) const {
    return WithControlDependencies(absl::Span<const Operation>(&control.op(), 1));
  }
  Scope WithNoControlDependencies() const;
  // The requested device of nodes built through the returned scope. It
  // replaces an earlier WithDevice, unless a WithDeviceFunction came between.
  Scope WithDevice(const std::string& device) const;
  // Nodes built through the returned scope get their device from `fn`, which
  // sees each finished NodeDef (TensorFlow's `tf.device(fn)`):
  //
  //   Scope s = root.WithDeviceFunction([](const NodeDef& node) -> std::string {
  //     return node.op() == "VariableV2" ? "/job:ps/task:0" : "/job:worker";
  //   });
  //   ops::Variable(s.WithDevice("/device:CPU:1"), ...);   // /job:ps/task:0/device:CPU:1
  //
  // The rule, for a scope with device functions f_1 (outermost) ... f_n:
  //  1. The node starts with the WithDevice request made after f_n (or "").
  //  2. For k = n down to 1, innermost first: f_k is called with the node
  //     (op, attrs with their defaults, inputs, and the device so far), and
  //     the device becomes MergeDevice(result, device so far) (see
  //     merge_device.h): every part (job, replica, task, type, id) the node
  //     already has wins, the function's result fills in the rest; then the
  //     WithDevice request in effect where f_k was added (before it) fills in
  //     what is still unset.
  // So a WithDevice inside a function refines what the function chooses
  // ("/task:1" under a function's "/job:worker/task:0" gives
  // "/job:worker/task:1"), and a function sees only the requests and functions
  // inside it, as in TensorFlow's device stack. Without device functions the
  // device is the WithDevice request verbatim.
  // Exceptions: a node built with ColocateWith in effect skips the functions
  // and the requests before them (its colocation group decides its device, as
  // TensorFlow sets the device stack aside under `colocate_with`). A device
  // that does not parse — a function's result or a request — fails the
  // node's build with InvalidArgument naming the node and the device; an
  // empty `fn` is InvalidArgument too.
  // `fn` is copied into the scope and shared by its copies; it is called once
  // per node, on the building thread.
  Scope WithDeviceFunction(DeviceFunction fn) const;
  // Nodes built through the returned scope are colocated with `op` (TensorFlow's
  // `_class: ["loc:@op"]` attr; if `op` is itself colocated, with its group).
  Scope ColocateWith(const Operation& op) const;
  Scope ColocateWith(const Output& output) const { return ColocateWith(output.op()); }
  Scope ClearColocation() const;
  // The returned scope (and scopes derived from it) carries `creator`; null
  // removes it. See VariableCreatorHook.
  Scope WithVariableCreator(std::shared_ptr<const VariableCreatorHook> creator) const;
  const std::shared_ptr<const VariableCreatorHook>& variable_creator() const { return creator_; }

  // The name the next op of `default_name` type would get ("MatMul_1"), and
  // reserves it. Wrappers call it through NodeBuilder.
  std::string GetUniqueNameForOp(const std::string& default_name) const;

  // Keeps `status` if it is the first error of this graph.
  void UpdateStatus(const absl::Status& status) const;
  absl::Status status() const;
  bool ok() const { return status().ok(); }

  // The graph built so far, or the scope's first error.
  absl::Status ToGraphDef(GraphDef* graph) const;
  // Only nodes [first_node, num_nodes()) — for extending a session's graph.
  absl::Status ToGraphDef(GraphDef* graph, int first_node) const;
  // Nodes in the graph (of every scope sharing it).
  int num_nodes() const;
  // The shape its op's shape function gave `output` when the node was built
  // (TensorFlow's static shape): unknown dims where it could not tell,
  // unknown rank for an op without one or an output of another graph.
  PartialTensorShape InferredShape(const Output& output) const;

  const std::string& name_scope() const { return name_; }
  // The WithDevice request (made after the last WithDeviceFunction).
  const std::string& device() const { return device_; }
  const std::vector<Operation>& control_deps() const { return control_deps_; }
  // The graph this scope builds, as Operation::graph_id names it.
  uint64_t graph_id() const;

 private:
  friend class NodeBuilder;
  explicit Scope(std::shared_ptr<ScopeGraph> graph);
  Scope WithOpNameImpl(std::string op_name) const;
  // Appends a validated node with a name from GetUniqueNameForOp and the
  // shapes inferred for its outputs.
  void AddNode(NodeDef node, std::vector<PartialTensorShape> output_shapes) const;
  // InferredShape of input `tensor` of a NodeDef ("node" or "node:1").
  PartialTensorShape InputShape(absl::string_view tensor) const;
  // Input `tensor`'s value for shape functions (InferenceConstant), if any.
  std::optional<Tensor> InputConstant(absl::string_view tensor) const;
  // Output `port` of node `node`, as inferred (unknown if none was).
  PartialTensorShape ShapeOf(const std::string& node, int port) const;
  // The node named `name`, or nullptr.
  const NodeDef* FindNode(const std::string& name) const;
  // Sets node->device() from the WithDevice request and the device
  // functions, by the rule at WithDeviceFunction.
  absl::Status AssignDevice(NodeDef* node) const;

  // A device function, the WithDevice request in effect where it was added,
  // and the next function outward.
  struct DeviceLayer;

  std::shared_ptr<ScopeGraph> graph_;
  std::string name_;     // name scope, "" at the root, else "outer/inner"
  std::string op_name_;  // from WithOpName: the name of the op built through this scope
  std::string device_;
  std::shared_ptr<const DeviceLayer> device_layers_;  // innermost function first
  std::vector<Operation> control_deps_;
  std::vector<std::string> colocation_;  // sorted "loc:@node" entries
  std::shared_ptr<const VariableCreatorHook> creator_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_SCOPE_H_
