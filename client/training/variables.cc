#include "client/training/variables.h"

#include <algorithm>

#include "client/node_builder.h"
#include "client/ops/array_ops.h"
#include "client/ops/state_ops.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {
namespace {

// The registry's marks on a variable node (see variables.h).
constexpr char kInitializerAttr[] = "_tg_initializer";
constexpr char kCollectionsAttr[] = "_tg_collections";

std::string ReadOpName(const std::string& variable) { return variable + "/Read/ReadVariableOp"; }

std::vector<std::string> Collections(const VariableOptions& options) {
  std::vector<std::string> collections = {kGlobalVariables};
  if (options.trainable) collections.push_back(kTrainableVariables);
  for (const std::string& c : options.collections) {
    if (std::find(collections.begin(), collections.end(), c) == collections.end()) {
      collections.push_back(c);
    }
  }
  return collections;
}

thread_local int current_replica = -1;

const std::vector<Variable>& NoComponents() {
  static const auto* none = new std::vector<Variable>();
  return *none;
}

}  // namespace

namespace internal {
ReplicaGuard::ReplicaGuard(int replica) : saved_(current_replica) { current_replica = replica; }
ReplicaGuard::~ReplicaGuard() { current_replica = saved_; }
int CurrentReplica() { return current_replica; }
}  // namespace internal

Variable Variable::Mirrored(std::vector<Variable> components, const Operation& initializer) {
  if (components.empty() || !components.front().valid()) return Variable();
  Variable v = components.front();
  if (v.components_ != nullptr) return Variable();  // components must be plain
  v.initializer_ = initializer;
  v.components_ = std::make_shared<const std::vector<Variable>>(std::move(components));
  return v;
}

const std::vector<Variable>& Variable::components() const {
  return components_ == nullptr ? NoComponents() : *components_;
}

const Variable& Variable::Resolve() const {
  if (components_ == nullptr) return *this;
  const int replica = internal::CurrentReplica();
  if (replica <= 0 || replica >= static_cast<int>(components_->size())) return *this;
  return (*components_)[replica];
}

Variable::Variable(const Scope& outer, const std::string& name, const TensorShape& shape,
                   DataType dtype, const Initializer& initializer, const VariableOptions& options) {
  if (auto* creator = dynamic_cast<const VariableCreator*>(outer.variable_creator().get())) {
    *this = creator->Create(outer.WithVariableCreator(nullptr), name, shape, dtype, initializer,
                            options);
    return;
  }
  const Scope scope = outer.WithNoControlDependencies();
  // Reserving the name as a sub scope first gives the variable and its
  // initializer ops ("w", "w/Assign") one unique prefix.
  const Scope vs = scope.NewSubScope(name);
  const std::string& full = vs.name_scope();
  const std::string leaf =
      scope.name_scope().empty() ? full : full.substr(scope.name_scope().size() + 1);
  const char* op_type = options.use_resource ? "VarHandleOp" : "VariableV2";
  Operation var = NodeBuilder(scope.WithOpName(leaf), op_type)
                      .Attr("shape", shape)
                      .Attr("dtype", dtype)
                      .Attr(kInitializerAttr, full + "/Assign")
                      .Attr(kCollectionsAttr, Collections(options))
                      .Finalize();
  if (!var.valid()) return;
  const Scope colocated = vs.ColocateWith(var);
  Output initial = initializer(colocated.NewSubScope("Initializer"), shape, dtype);
  if (!initial.valid()) return;
  Output handle(var, 0);
  Output value = handle;
  Operation init;
  if (options.use_resource) {
    init = ops::AssignVariableOp(colocated.WithOpName("Assign"), handle, initial).operation;
    value = ops::ReadVariableOp(colocated.NewSubScope("Read").WithOpName("ReadVariableOp"), handle,
                                dtype);
  } else {
    init = ops::Assign(colocated.WithOpName("Assign"), handle, initial).operation;
  }
  if (!init.valid() || !value.valid() || !outer.ok()) return;
  handle_ = handle;
  value_ = value;
  initializer_ = init;
  dtype_ = dtype;
  shape_ = shape;
  is_resource_ = options.use_resource;
  trainable_ = options.trainable;
}

Variable Variable::FromNodeDef(const NodeDef& node) {
  Variable v;
  std::string initializer;
  std::vector<std::string> collections;
  PartialTensorShape shape;
  DataType dtype;
  const bool resource = node.op() == "VarHandleOp";
  if ((!resource && node.op() != "VariableV2") || !HasNodeAttr(node, kInitializerAttr) ||
      !GetNodeAttr(node, kInitializerAttr, &initializer).ok() ||
      !GetNodeAttr(node, kCollectionsAttr, &collections).ok() ||
      !GetNodeAttr(node, "dtype", &dtype).ok() || !GetNodeAttr(node, "shape", &shape).ok() ||
      !shape.IsFullyDefined()) {
    return v;
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
  v.shape_ = TensorShape(dims);
  v.dtype_ = dtype;
  v.is_resource_ = resource;
  v.trainable_ =
      std::find(collections.begin(), collections.end(), kTrainableVariables) != collections.end();
  v.handle_ = Output(Operation(node.name(), {resource ? DT_RESOURCE : MakeRefType(dtype)}), 0);
  v.value_ = resource ? Output(Operation(ReadOpName(node.name()), {dtype}), 0) : v.handle_;
  v.initializer_ = Operation(
      initializer, resource ? std::vector<DataType>{} : std::vector<DataType>{MakeRefType(dtype)});
  return v;
}

std::vector<Variable> GetCollection(const Scope& scope, const std::string& collection) {
  std::vector<Variable> vars;
  GraphDef graph;
  if (!scope.ToGraphDef(&graph).ok()) return vars;
  for (const NodeDef& node : graph.node()) {
    std::vector<std::string> collections;
    if (!HasNodeAttr(node, kCollectionsAttr) ||
        !GetNodeAttr(node, kCollectionsAttr, &collections).ok() ||
        std::find(collections.begin(), collections.end(), collection) == collections.end()) {
      continue;
    }
    Variable v = Variable::FromNodeDef(node);
    if (v.valid()) vars.push_back(std::move(v));
  }
  return vars;
}

std::vector<Variable> GlobalVariables(const Scope& scope) {
  return GetCollection(scope, kGlobalVariables);
}

std::vector<Variable> TrainableVariables(const Scope& scope) {
  return GetCollection(scope, kTrainableVariables);
}

Operation GlobalVariablesInitializer(const Scope& scope) {
  std::vector<Operation> initializers;
  for (const Variable& v : GlobalVariables(scope)) initializers.push_back(v.initializer());
  return NodeBuilder(scope.WithControlDependencies(initializers), "NoOp", "init").Finalize();
}

Output ReportUninitializedVariables(const Scope& outer) {
  const std::vector<Variable> vars = GlobalVariables(outer);
  const Scope scope = outer.NewSubScope("report_uninitialized_variables");
  if (vars.empty()) return ops::Const(scope, Tensor(DT_STRING, TensorShape({0})));
  std::vector<Output> checks;
  std::vector<std::string> names;
  for (const Variable& v : vars) {
    const Scope colocated = scope.ColocateWith(v.op());
    Operation check =
        v.is_resource()
            ? NodeBuilder(colocated, "VarIsInitializedOp").Input(v.handle()).Finalize()
            : NodeBuilder(colocated, "IsVariableInitialized").Input(v.handle()).Finalize();
    checks.push_back(Output(check, 0));
    names.push_back(v.name());
  }
  Operation report = NodeBuilder(scope, "_UninitializedVariableNames", "names")
                         .Input(InputList(checks))
                         .Attr("names", names)
                         .Finalize();
  return Output(report, 0);
}

}  // namespace training
}  // namespace tensorgrid
