#include "client/gradients/gradients.h"

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/ops/standard_ops.h"
#include "core/framework/op_def.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// Output `index` of node `node` (an id in GraphIndex); node -1 is a node
// outside the scope's graph.
struct TensorRef {
  int node = -1;
  int index = 0;
  bool operator==(const TensorRef& o) const { return node == o.node && index == o.index; }
  template <typename H>
  friend H AbslHashValue(H h, const TensorRef& t) {
    return H::combine(std::move(h), t.node, t.index);
  }
};

// Floating-point tensors carry gradients; so do resource handles, which
// receive the gradient of the variable read through them.
bool CarriesGradient(DataType dtype) {
  switch (RemoveRefType(dtype)) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_COMPLEX64:
    case DT_COMPLEX128:
    case DT_RESOURCE: return true;
    default: return false;
  }
}

bool HasNoGradient(const NodeDef& node) {
  return GradOpRegistry::Global()->HasNoGradient(node.op());
}

// The scope's graph, indexed for walking it both ways.
class GraphIndex {
 public:
  struct Node {
    const NodeDef* def = nullptr;
    std::vector<DataType> input_types, output_types;
    std::vector<TensorRef> inputs;  // data inputs, in order
    std::vector<std::string> input_names;
    // Per output: the (node, input slot) pairs that read it.
    std::vector<std::vector<std::pair<int, int>>> consumers;
  };

  absl::Status Build(const Scope& scope) {
    TG_RETURN_IF_ERROR(scope.ToGraphDef(&graph_));
    nodes_.resize(graph_.node_size());
    for (int id = 0; id < graph_.node_size(); ++id) {
      const NodeDef& def = graph_.node(id);
      ids_[def.name()] = id;
      nodes_[id].def = &def;
      const OpDef* op = OpRegistry::Global()->Find(def.op());
      if (op == nullptr) {
        return errors::NotFound("node '", def.name(), "' has unregistered op '", def.op(), "'");
      }
      TG_RETURN_IF_ERROR(
          InOutTypesForNode(def, *op, &nodes_[id].input_types, &nodes_[id].output_types));
      nodes_[id].consumers.resize(nodes_[id].output_types.size());
    }
    for (int id = 0; id < graph_.node_size(); ++id) {
      for (const std::string& input : graph_.node(id).input()) {
        if (input.empty() || input[0] == '^') continue;
        TensorRef t = Parse(input);
        Node& node = nodes_[id];
        if (t.node >= 0 && t.index < static_cast<int>(nodes_[t.node].output_types.size())) {
          nodes_[t.node].consumers[t.index].emplace_back(id, static_cast<int>(node.inputs.size()));
        } else {
          t.node = -1;
        }
        node.inputs.push_back(t);
        node.input_names.push_back(input);
      }
    }
    return absl::OkStatus();
  }

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return nodes_[id]; }
  const std::string& name(int id) const { return nodes_[id].def->name(); }
  const std::string& op(int id) const { return nodes_[id].def->op(); }
  // -1 when the graph has no such node.
  int Find(const std::string& name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
  }
  DataType type(TensorRef t) const { return nodes_[t.node].output_types[t.index]; }
  // "node" for output 0, else "node:index", as TensorFlow names tensors.
  std::string Name(TensorRef t) const {
    return t.index == 0 ? name(t.node) : absl::StrCat(name(t.node), ":", t.index);
  }
  Operation ToOperation(int id) const { return Operation(name(id), nodes_[id].output_types); }
  // Input `slot` of node `id` as an Output (typed by the consumer's side when
  // its producer is outside the graph).
  Output InputOf(int id, int slot) const {
    const Node& node = nodes_[id];
    const TensorRef t = node.inputs[slot];
    if (t.node >= 0) return Output(ToOperation(t.node), t.index);
    TensorRef named = Parse(node.input_names[slot]);
    std::vector<DataType> types(named.index + 1, node.input_types[slot]);
    std::string producer = node.input_names[slot].substr(0, node.input_names[slot].rfind(':'));
    return Output(Operation(producer, std::move(types)), named.index);
  }

 private:
  // "name" or "name:index"; node -1 when the name is not a node here.
  TensorRef Parse(const std::string& input) const {
    TensorRef t;
    std::string name = input;
    const size_t colon = input.rfind(':');
    if (colon != std::string::npos && absl::SimpleAtoi(input.substr(colon + 1), &t.index)) {
      name = input.substr(0, colon);
    } else {
      t.index = 0;
    }
    t.node = Find(name);
    return t;
  }

  GraphDef graph_;
  std::vector<Node> nodes_;
  absl::flat_hash_map<std::string, int> ids_;
};

// One AddSymbolicGradients call: finds the paths from the xs to the ys,
// checks them, then builds the gradient nodes in reverse topological order.
class SymbolicGradientBuilder {
 public:
  SymbolicGradientBuilder(const Scope& scope, const std::vector<Output>& ys,
                          const std::vector<Output>& xs, const std::vector<Output>* grad_ys)
      : scope_(scope), y_outputs_(ys), x_outputs_(xs), grad_ys_(grad_ys) {}

  absl::Status Run(std::vector<Output>* grad_outputs) {
    TG_RETURN_IF_ERROR(graph_.Build(scope_));
    TG_RETURN_IF_ERROR(ResolveEndpoints());
    FindPaths();
    TG_RETURN_IF_ERROR(CheckXsReachable());
    TG_RETURN_IF_ERROR(CheckGradientsRegistered());
    return Backprop(grad_outputs);
  }

 private:
  absl::Status ResolveEndpoints();
  absl::Status Resolve(const Output& output, const char* what, TensorRef* t) const;
  // Tensors reached from `starts` along data edges (and the nodes reading
  // them); with `differentiable`, only along tensors that carry gradients
  // and not into ops without one.
  absl::flat_hash_set<TensorRef> Descendants(const std::vector<TensorRef>& starts,
                                             bool differentiable,
                                             absl::flat_hash_set<int>* nodes) const;
  // Nodes that `nodes` depend on (themselves included), likewise.
  absl::flat_hash_set<int> Ancestors(const std::vector<int>& nodes, bool differentiable) const;
  void FindPaths();
  absl::Status CheckXsReachable() const;
  // Where the paths from x to the ys stop carrying gradients ("" if none).
  std::string WhyNotDifferentiable(TensorRef x) const;
  absl::Status CheckGradientsRegistered() const;
  // "from 'y' to 'x'" for some y and x that node `id` lies between.
  std::string PathThrough(int id) const;
  std::string YsString() const;
  absl::Status Backprop(std::vector<Output>* grad_outputs);
  // Adds `grad` to what flows into `t`; queues t's node once complete.
  void Contribute(TensorRef t, const Output& grad);
  absl::Status BackpropThrough(int id);
  absl::Status CheckGradInput(int id, int slot, const Output& grad) const;

  const Scope& scope_;
  const std::vector<Output>& y_outputs_;
  const std::vector<Output>& x_outputs_;
  const std::vector<Output>* grad_ys_;  // null: ones
  GraphIndex graph_;
  std::vector<TensorRef> ys_, xs_;

  absl::flat_hash_set<TensorRef> reached_;        // differentiable descendants of the xs
  std::vector<bool> on_path_;                     // reads a reached tensor and some y depends on it
  absl::flat_hash_map<TensorRef, int> expected_;  // gradients still to arrive per tensor
  std::vector<int> node_pending_;                 // the same, summed over a node's outputs

  std::optional<Scope> grad_scope_;  // "gradients", made when building starts
  absl::flat_hash_map<TensorRef, std::vector<Output>> backprops_;
  absl::flat_hash_map<TensorRef, Output> sums_;
  std::deque<int> ready_;
};

absl::Status SymbolicGradientBuilder::Resolve(const Output& output, const char* what,
                                              TensorRef* t) const {
  t->node = graph_.Find(output.node_name());
  t->index = output.index();
  if (!output.valid() || t->node < 0 ||
      t->index >= static_cast<int>(graph_.node(t->node).output_types.size())) {
    const std::string name = output.node_name().empty() ? "(none)"
                             : output.index() == 0      ? output.node_name()
                                                        : output.name();
    return errors::InvalidArgument("AddSymbolicGradients: ", what, " '", name,
                                   "' is not an output of a node in this scope's graph");
  }
  return absl::OkStatus();
}

absl::Status SymbolicGradientBuilder::ResolveEndpoints() {
  if (grad_ys_ != nullptr && grad_ys_->size() != y_outputs_.size()) {
    return errors::InvalidArgument("AddSymbolicGradients: got ", grad_ys_->size(), " grad_ys for ",
                                   y_outputs_.size(), " ys");
  }
  ys_.resize(y_outputs_.size());
  for (size_t i = 0; i < y_outputs_.size(); ++i) {
    TG_RETURN_IF_ERROR(Resolve(y_outputs_[i], "y", &ys_[i]));
    const DataType dtype = graph_.type(ys_[i]);
    if (!CarriesGradient(dtype) || RemoveRefType(dtype) == DT_RESOURCE) {
      return errors::InvalidArgument("AddSymbolicGradients: y '", graph_.Name(ys_[i]),
                                     "' has dtype ", DataTypeString(dtype),
                                     ", which carries no gradient");
    }
    if (grad_ys_ == nullptr) continue;
    TensorRef g;
    TG_RETURN_IF_ERROR(Resolve((*grad_ys_)[i], "grad_y", &g));
    if (graph_.type(g) != RemoveRefType(dtype)) {
      return errors::InvalidArgument("AddSymbolicGradients: grad_ys[", i, "] '", graph_.Name(g),
                                     "' has dtype ", DataTypeString(graph_.type(g)), " but y '",
                                     graph_.Name(ys_[i]), "' has dtype ",
                                     DataTypeString(RemoveRefType(dtype)));
    }
  }
  xs_.resize(x_outputs_.size());
  for (size_t i = 0; i < x_outputs_.size(); ++i) {
    TG_RETURN_IF_ERROR(Resolve(x_outputs_[i], "x", &xs_[i]));
    const DataType dtype = graph_.type(xs_[i]);
    if (!CarriesGradient(dtype)) {
      return errors::InvalidArgument("AddSymbolicGradients: x '", graph_.Name(xs_[i]),
                                     "' has dtype ", DataTypeString(dtype),
                                     ", which carries no gradient");
    }
  }
  return absl::OkStatus();
}

absl::flat_hash_set<TensorRef> SymbolicGradientBuilder::Descendants(
    const std::vector<TensorRef>& starts, bool differentiable,
    absl::flat_hash_set<int>* nodes) const {
  absl::flat_hash_set<TensorRef> seen(starts.begin(), starts.end());
  std::vector<TensorRef> stack(seen.begin(), seen.end());
  while (!stack.empty()) {
    const TensorRef t = stack.back();
    stack.pop_back();
    for (const auto& [consumer, slot] : graph_.node(t.node).consumers[t.index]) {
      (void)slot;
      const GraphIndex::Node& c = graph_.node(consumer);
      if (differentiable && HasNoGradient(*c.def)) continue;
      if (nodes != nullptr) nodes->insert(consumer);
      for (int o = 0; o < static_cast<int>(c.output_types.size()); ++o) {
        if (differentiable && !CarriesGradient(c.output_types[o])) continue;
        if (seen.insert(TensorRef{consumer, o}).second) stack.push_back(TensorRef{consumer, o});
      }
    }
  }
  return seen;
}

absl::flat_hash_set<int> SymbolicGradientBuilder::Ancestors(const std::vector<int>& nodes,
                                                            bool differentiable) const {
  absl::flat_hash_set<int> seen(nodes.begin(), nodes.end());
  std::vector<int> stack(seen.begin(), seen.end());
  while (!stack.empty()) {
    const GraphIndex::Node& n = graph_.node(stack.back());
    stack.pop_back();
    if (differentiable && HasNoGradient(*n.def)) continue;
    for (const TensorRef& t : n.inputs) {
      if (t.node < 0 || (differentiable && !CarriesGradient(graph_.type(t)))) continue;
      if (seen.insert(t.node).second) stack.push_back(t.node);
    }
  }
  return seen;
}

void SymbolicGradientBuilder::FindPaths() {
  absl::flat_hash_set<int> reading_nodes;
  reached_ = Descendants(xs_, /*differentiable=*/true, &reading_nodes);
  std::vector<int> y_nodes;
  for (const TensorRef& y : ys_) y_nodes.push_back(y.node);
  const absl::flat_hash_set<int> ancestors = Ancestors(y_nodes, /*differentiable=*/true);
  on_path_.assign(graph_.num_nodes(), false);
  node_pending_.assign(graph_.num_nodes(), 0);
  for (int id : reading_nodes) {
    if (!ancestors.contains(id)) continue;
    on_path_[id] = true;
    for (const TensorRef& t : graph_.node(id).inputs) {
      if (t.node >= 0 && reached_.contains(t)) ++expected_[t];
    }
  }
  for (const TensorRef& y : ys_) {
    if (reached_.contains(y)) ++expected_[y];
  }
  for (const auto& [t, count] : expected_) node_pending_[t.node] += count;
}

std::string SymbolicGradientBuilder::YsString() const {
  std::vector<std::string> names;
  for (const TensorRef& y : ys_) names.push_back(absl::StrCat("'", graph_.Name(y), "'"));
  return absl::StrCat(ys_.size() == 1 ? "y " : "ys ", absl::StrJoin(names, ", "));
}

std::string SymbolicGradientBuilder::WhyNotDifferentiable(TensorRef x) const {
  std::vector<int> y_nodes;
  for (const TensorRef& y : ys_) y_nodes.push_back(y.node);
  const absl::flat_hash_set<int> ancestors = Ancestors(y_nodes, /*differentiable=*/false);
  // Breadth first, so that the cut nearest to x is named.
  std::deque<TensorRef> queue = {x};
  absl::flat_hash_set<TensorRef> seen = {x};
  while (!queue.empty()) {
    const TensorRef t = queue.front();
    queue.pop_front();
    for (const auto& [consumer, slot] : graph_.node(t.node).consumers[t.index]) {
      (void)slot;
      if (!ancestors.contains(consumer)) continue;
      const GraphIndex::Node& c = graph_.node(consumer);
      if (HasNoGradient(*c.def)) {
        return absl::StrCat("node '", graph_.name(consumer), "' (", c.def->op(),
                            ") passes no gradient to its inputs");
      }
      for (int o = 0; o < static_cast<int>(c.output_types.size()); ++o) {
        if (!CarriesGradient(c.output_types[o])) {
          return absl::StrCat("node '", graph_.name(consumer), "' (", c.def->op(), ") outputs ",
                              DataTypeString(c.output_types[o]), ", which carries no gradient");
        }
        if (seen.insert(TensorRef{consumer, o}).second) queue.push_back(TensorRef{consumer, o});
      }
    }
  }
  return "";
}

absl::Status SymbolicGradientBuilder::CheckXsReachable() const {
  for (const TensorRef& x : xs_) {
    auto it = expected_.find(x);
    if (it != expected_.end() && it->second > 0) continue;
    const std::string why = WhyNotDifferentiable(x);
    if (!why.empty()) {
      return errors::InvalidArgument("AddSymbolicGradients: x '", graph_.Name(x),
                                     "' is not reachable from ", YsString(),
                                     " through differentiable tensors: ", why);
    }
    return errors::InvalidArgument("AddSymbolicGradients: x '", graph_.Name(x),
                                   "' is not reachable from ", YsString(), ": no y depends on it");
  }
  return absl::OkStatus();
}

std::string SymbolicGradientBuilder::PathThrough(int id) const {
  std::string from, to;
  for (const TensorRef& y : ys_) {
    if (Ancestors({y.node}, /*differentiable=*/true).contains(id)) {
      from = graph_.Name(y);
      break;
    }
  }
  for (const TensorRef& x : xs_) {
    absl::flat_hash_set<int> nodes;
    Descendants({x}, /*differentiable=*/true, &nodes);
    if (nodes.contains(id)) {
      to = graph_.Name(x);
      break;
    }
  }
  return absl::StrCat("from '", from, "' to '", to, "'");
}

absl::Status SymbolicGradientBuilder::CheckGradientsRegistered() const {
  for (int id = 0; id < graph_.num_nodes(); ++id) {
    if (on_path_[id] && GradOpRegistry::Global()->Lookup(graph_.op(id)) == nullptr) {
      return errors::InvalidArgument("AddSymbolicGradients: no gradient registered for op '",
                                     graph_.op(id), "' (node '", graph_.name(id), "') on the path ",
                                     PathThrough(id));
    }
  }
  return absl::OkStatus();
}

void SymbolicGradientBuilder::Contribute(TensorRef t, const Output& grad) {
  backprops_[t].push_back(grad);
  if (--node_pending_[t.node] == 0) ready_.push_back(t.node);
}

absl::Status SymbolicGradientBuilder::Backprop(std::vector<Output>* grad_outputs) {
  grad_scope_ = scope_.NewSubScope("gradients");
  for (size_t i = 0; i < ys_.size(); ++i) {
    if (!reached_.contains(ys_[i])) continue;
    Contribute(ys_[i],
               grad_ys_ != nullptr ? (*grad_ys_)[i] : ops::OnesLike(*grad_scope_, y_outputs_[i]).y);
  }
  TG_RETURN_IF_ERROR(scope_.status());
  while (!ready_.empty()) {
    const int id = ready_.front();
    ready_.pop_front();
    TG_RETURN_IF_ERROR(BackpropThrough(id));
  }
  grad_outputs->clear();
  for (const TensorRef& x : xs_) {
    auto it = sums_.find(x);
    if (it == sums_.end()) {
      return errors::Internal("AddSymbolicGradients: backprop never completed at x '",
                              graph_.Name(x), "'");
    }
    grad_outputs->push_back(it->second);
  }
  return absl::OkStatus();
}

absl::Status SymbolicGradientBuilder::BackpropThrough(int id) {
  const GraphIndex::Node& node = graph_.node(id);
  const Scope scope = grad_scope_->NewSubScope(graph_.name(id) + "_grad");
  std::vector<Output> grad_outputs(node.output_types.size());
  for (int o = 0; o < static_cast<int>(grad_outputs.size()); ++o) {
    auto it = backprops_.find(TensorRef{id, o});
    if (it == backprops_.end()) continue;
    grad_outputs[o] = it->second.size() == 1 ? it->second[0] : ops::AddN(scope, it->second).sum;
    sums_[TensorRef{id, o}] = grad_outputs[o];
  }
  TG_RETURN_IF_ERROR(scope_.status());
  if (!on_path_[id]) return absl::OkStatus();  // an x that no other x feeds

  std::vector<Output> inputs;
  for (int slot = 0; slot < static_cast<int>(node.inputs.size()); ++slot) {
    inputs.push_back(graph_.InputOf(id, slot));
  }
  const ForwardOp op(*node.def, std::move(inputs), graph_.ToOperation(id));
  std::vector<Output> grad_inputs;
  absl::Status s =
      GradOpRegistry::Global()->Lookup(node.def->op())(scope, op, grad_outputs, &grad_inputs);
  if (s.ok()) s = scope_.status();
  if (!s.ok()) {
    return WithContext(s, absl::StrCat("building the gradient of node '", graph_.name(id), "' (",
                                       node.def->op(), ")"));
  }
  if (grad_inputs.size() != node.inputs.size()) {
    return errors::Internal("the gradient function of op '", node.def->op(), "' returned ",
                            grad_inputs.size(), " gradients for node '", graph_.name(id),
                            "', which has ", node.inputs.size(), " inputs");
  }
  for (int slot = 0; slot < static_cast<int>(node.inputs.size()); ++slot) {
    const TensorRef t = node.inputs[slot];
    if (t.node < 0 || !reached_.contains(t)) continue;
    TG_RETURN_IF_ERROR(CheckGradInput(id, slot, grad_inputs[slot]));
    Contribute(t, grad_inputs[slot]);
  }
  return absl::OkStatus();
}

absl::Status SymbolicGradientBuilder::CheckGradInput(int id, int slot, const Output& grad) const {
  const TensorRef t = graph_.node(id).inputs[slot];
  const std::string& op = graph_.op(id);
  if (!grad.valid()) {
    return errors::InvalidArgument("AddSymbolicGradients: the gradient of op '", op,
                                   "' gives no gradient for input ", slot, " ('", graph_.Name(t),
                                   "') of node '", graph_.name(id), "', which is on the path ",
                                   PathThrough(id));
  }
  const DataType want = RemoveRefType(graph_.type(t));
  if (want != DT_RESOURCE && grad.type() != want) {
    return errors::Internal("the gradient function of op '", op, "' returned a ",
                            DataTypeString(grad.type()), " gradient for input ", slot, " ('",
                            graph_.Name(t), "') of node '", graph_.name(id), "', which is ",
                            DataTypeString(want));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs, const std::vector<Output>& grad_ys,
                                  std::vector<Output>* grad_outputs) {
  return SymbolicGradientBuilder(scope, ys, xs, &grad_ys).Run(grad_outputs);
}

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys,
                                  const std::vector<Output>& xs,
                                  std::vector<Output>* grad_outputs) {
  return SymbolicGradientBuilder(scope, ys, xs, nullptr).Run(grad_outputs);
}

}  // namespace tensorgrid
