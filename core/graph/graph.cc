#include "core/graph/graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/framework/versions.h"
#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

std::string Node::NotRegisteredMessage() const {
  return absl::StrCat("op '", op(), "' (node '", name(),
                      "') is not registered, so the node cannot run");
}

const Edge* Node::input_edge(int i) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input == i) return e;
  }
  return nullptr;
}

absl::StatusOr<Node*> Graph::AddNode(NodeDef def) {
  if (def.name().empty())
    return errors::InvalidArgument("a node has an empty name (op ", def.op(), ")");
  if (by_name_.count(def.name())) {
    return errors::InvalidArgument("duplicate node name '", def.name(), "'");
  }
  auto node = std::make_unique<Node>();
  node->op_def_ = ops_->Find(def.op());
  if (node->op_def_ != nullptr) {
    TG_RETURN_IF_ERROR(ValidateNodeDef(*node->op_def_, &def, /*check_inputs=*/false));
    TG_RETURN_IF_ERROR(WithContext(
        InOutTypesForNode(def, *node->op_def_, &node->input_types_, &node->output_types_),
        absl::StrCat("node '", def.name(), "'")));
  } else {
    // Unregistered op: one input per data input listed; outputs grow as
    // consumers reference them (see ImportGraphDef).
    for (const std::string& in : def.input()) {
      if (!absl::StartsWith(in, "^")) node->input_types_.push_back(DT_INVALID);
    }
  }
  def.clear_input();
  node->def_ = std::move(def);
  node->id_ = static_cast<int>(nodes_.size());
  Node* raw = node.get();
  by_name_[raw->name()] = raw;
  nodes_.push_back(std::move(node));
  ++num_nodes_;
  return raw;
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  edges_.push_back(Edge{src, src_output, dst, dst_input});
  const Edge* e = &edges_.back();
  src->out_edges_.push_back(e);
  dst->in_edges_.push_back(e);
  return e;
}

void Graph::RemoveEdge(const Edge* e) {
  auto erase = [e](std::vector<const Edge*>& v) { v.erase(std::find(v.begin(), v.end(), e)); };
  erase(e->src->out_edges_);
  erase(e->dst->in_edges_);
}

void Graph::RemoveNode(Node* node) {
  while (!node->in_edges_.empty()) RemoveEdge(node->in_edges_.back());
  while (!node->out_edges_.empty()) RemoveEdge(node->out_edges_.back());
  by_name_.erase(node->name());
  nodes_[node->id_].reset();
  --num_nodes_;
}

void Graph::EnsureUnknownOutputs(Node* node, int count) {
  if (node->op_def_ != nullptr) return;
  while (node->num_outputs() < count) node->output_types_.push_back(DT_INVALID);
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (const auto& n : nodes_) {
    if (n) out.push_back(n.get());
  }
  return out;
}

std::string Graph::NewName(absl::string_view prefix) {
  std::string name(prefix);
  for (int i = 1; by_name_.count(name); ++i) name = absl::StrCat(prefix, "_", i);
  return name;
}

void Graph::ToGraphDef(GraphDef* out) const {
  out->Clear();
  *out->mutable_versions() = versions_;
  for (Node* n : nodes()) {
    NodeDef* def = out->add_node();
    *def = n->def();
    if (!n->assigned_device_name().empty()) def->set_device(n->assigned_device_name());
    std::vector<const Edge*> data(n->num_inputs(), nullptr);
    std::vector<std::string> control;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        control.push_back("^" + e->src->name());
      } else if (e->dst_input < static_cast<int>(data.size())) {
        data[e->dst_input] = e;
      }
    }
    for (const Edge* e : data) {
      if (e == nullptr) continue;
      def->add_input(e->src_output == 0 ? e->src->name()
                                        : absl::StrCat(e->src->name(), ":", e->src_output));
    }
    std::sort(control.begin(), control.end());
    for (auto& c : control) def->add_input(std::move(c));
  }
}

absl::Status ParseTensorName(absl::string_view tensor, std::string* node, int* port) {
  size_t colon = tensor.rfind(':');
  if (colon == absl::string_view::npos) {
    *node = std::string(tensor);
    *port = 0;
  } else if (!absl::SimpleAtoi(tensor.substr(colon + 1), port) || *port < 0) {
    return errors::InvalidArgument("malformed tensor name '", tensor,
                                   "' (expected 'node' or 'node:port')");
  } else {
    *node = std::string(tensor.substr(0, colon));
  }
  if (node->empty() || absl::StartsWith(*node, "^")) {
    return errors::InvalidArgument("malformed tensor name '", tensor, "'");
  }
  return absl::OkStatus();
}

namespace {

// The most outputs a node of an unregistered op is taken to have. Its
// consumers say how many it has ("x:7"); without a bound, one input
// "x:2000000000" made ImportGraphDef allocate 8 GB (and "x:2147483647"
// overflowed port + 1; found by graphdef_fuzzer's input kept in
// tests/fuzz/regressions/graphdef/).
constexpr int kMaxUnregisteredOutputs = 1 << 16;

bool TypesCompatible(DataType produced, DataType expected) {
  if (produced == DT_INVALID || expected == DT_INVALID) return true;  // unregistered op
  if (produced == expected) return true;
  // A ref output may feed a value input (it is read).
  return IsRefType(produced) && !IsRefType(expected) && RemoveRefType(produced) == expected;
}

// `node` as TensorFlow reads it from a graph of producer version `producer`:
// before version 22 a Placeholder's shape attr without dims (and without
// unknown_rank) meant "unspecified", so it becomes an unknown shape.
NodeDef WithProducerSemantics(const NodeDef& node, int producer) {
  NodeDef def = node;
  if (producer <= kLastProducerWithUnknownEmptyPlaceholderShape && def.op() == "Placeholder") {
    auto it = def.mutable_attr()->find("shape");
    if (it != def.mutable_attr()->end() && it->second.has_shape() &&
        it->second.shape().dim_size() == 0 && !it->second.shape().unknown_rank()) {
      it->second.mutable_shape()->set_unknown_rank(true);
    }
  }
  return def;
}

// Adds the nodes of `def` to `graph` and wires all their inputs.
absl::Status AddNodesAndEdges(const GraphDef& def, Graph* graph) {
  std::vector<std::pair<Node*, const NodeDef*>> added;
  for (const NodeDef& nd : def.node()) {
    TG_ASSIGN_OR_RETURN(Node * n,
                        graph->AddNode(WithProducerSemantics(nd, def.versions().producer())));
    added.emplace_back(n, &nd);
  }
  for (auto [node, nd] : added) {
    int data_index = 0;
    bool seen_control = false;
    for (int i = 0; i < nd->input_size(); ++i) {
      absl::string_view in = nd->input(i);
      const bool control = absl::StartsWith(in, "^");
      std::string src_name;
      int port = kControlSlot;
      if (control) {
        seen_control = true;
        src_name = std::string(in.substr(1));
      } else {
        if (seen_control) {
          return errors::InvalidArgument("node '", node->name(), "': data input '", in,
                                         "' follows a control input");
        }
        TG_RETURN_IF_ERROR(WithContext(ParseTensorName(in, &src_name, &port),
                                       absl::StrCat("input ", i, " of node '", node->name(), "'")));
      }
      Node* src = graph->FindNode(src_name);
      if (src == nullptr) {
        return errors::InvalidArgument("node '", node->name(), "' input ", i, " ('", in,
                                       "') refers to unknown node '", src_name, "'");
      }
      if (control) {
        graph->AddControlEdge(src, node);
        continue;
      }
      if (src->op_def() == nullptr && port >= src->num_outputs()) {
        // Unregistered op: learn its output count from its consumers.
        if (port >= kMaxUnregisteredOutputs) {
          return errors::InvalidArgument("node '", node->name(), "' input ", i, " refers to '", in,
                                         "', but '", src_name, "' (", src->op(),
                                         ", not a registered op) may have at most ",
                                         kMaxUnregisteredOutputs, " outputs");
        }
        graph->EnsureUnknownOutputs(src, port + 1);
      }
      if (port >= src->num_outputs()) {
        return errors::InvalidArgument("node '", node->name(), "' input ", i, " refers to '", in,
                                       "', but '", src_name, "' (", src->op(), ") has ",
                                       src->num_outputs(), " output(s)");
      }
      if (data_index >= node->num_inputs()) {
        return errors::InvalidArgument("node '", node->name(), "' has too many inputs");
      }
      if (!TypesCompatible(src->output_type(port), node->input_type(data_index))) {
        return errors::InvalidArgument("input ", data_index, " of node '", node->name(), "' (",
                                       node->op(), ") expects ",
                                       DataTypeString(node->input_type(data_index)), " but '", in,
                                       "' is ", DataTypeString(src->output_type(port)));
      }
      graph->AddEdge(src, port, node, data_index++);
    }
    if (data_index != node->num_inputs()) {
      return errors::InvalidArgument("node '", node->name(), "' (", node->op(), ") has ",
                                     data_index, " data inputs, but the op takes ",
                                     node->num_inputs());
    }
  }
  return absl::OkStatus();
}

// The versions of `graph` once `def`'s nodes join it: one producer for the
// whole graph; the stricter min_consumer and all bad consumers of both.
absl::Status MergeVersions(const GraphDef& def, Graph* graph) {
  TG_RETURN_IF_ERROR(CheckGraphDefVersions(def.versions()));
  VersionDef& versions = graph->versions();
  if (graph->num_nodes() == 0) {
    versions = def.versions();
    return absl::OkStatus();
  }
  if (def.versions().producer() != versions.producer()) {
    return errors::InvalidArgument("cannot extend a graph of GraphDef producer version ",
                                   versions.producer(), " with nodes of producer version ",
                                   def.versions().producer(),
                                   " (the producer decides what some nodes mean)");
  }
  versions.set_min_consumer(std::max(versions.min_consumer(), def.versions().min_consumer()));
  for (int bad : def.versions().bad_consumers()) {
    if (std::find(versions.bad_consumers().begin(), versions.bad_consumers().end(), bad) ==
        versions.bad_consumers().end()) {
      versions.add_bad_consumers(bad);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(const GraphDef& def, const OpRegistry* ops) {
  auto graph = std::make_unique<Graph>(ops);
  TG_RETURN_IF_ERROR(MergeVersions(def, graph.get()));
  TG_RETURN_IF_ERROR(AddNodesAndEdges(def, graph.get()));
  TG_RETURN_IF_ERROR(TopologicalSort(*graph).status());
  return graph;
}

absl::Status ExtendGraph(const GraphDef& def, Graph* graph) {
  // Validate on a copy so that a failure leaves `graph` unchanged.
  std::unique_ptr<Graph> copy = CopyGraph(*graph);
  TG_RETURN_IF_ERROR(MergeVersions(def, copy.get()));
  TG_RETURN_IF_ERROR(AddNodesAndEdges(def, copy.get()));
  TG_RETURN_IF_ERROR(TopologicalSort(*copy).status());
  TG_RETURN_IF_ERROR(MergeVersions(def, graph));
  return AddNodesAndEdges(def, graph);
}

std::unique_ptr<Graph> CopyGraph(const Graph& graph) {
  GraphDef def;
  graph.ToGraphDef(&def);
  auto copy = ImportGraphDef(def, graph.op_registry());
  TG_CHECK(copy.ok());
  for (Node* n : graph.nodes()) {
    (*copy)->FindNode(n->name())->set_assigned_device_name(n->assigned_device_name());
  }
  return std::move(copy).value();
}

absl::StatusOr<std::vector<Node*>> TopologicalSort(const Graph& graph) {
  std::vector<int> pending(graph.num_node_ids(), 0);
  std::vector<Node*> ready, order;
  for (Node* n : graph.nodes()) {
    pending[n->id()] = static_cast<int>(n->in_edges().size());
    if (pending[n->id()] == 0) ready.push_back(n);
  }
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    order.push_back(n);
    for (const Edge* e : n->out_edges()) {
      if (--pending[e->dst->id()] == 0) ready.push_back(e->dst);
    }
  }
  if (static_cast<int>(order.size()) != graph.num_nodes()) {
    for (Node* n : graph.nodes()) {
      if (pending[n->id()] > 0) {
        return errors::InvalidArgument("graph has a cycle through node '", n->name(), "' (",
                                       n->op(),
                                       "); loops need control-flow ops, which are not supported");
      }
    }
  }
  return order;
}

void PruneForRoots(Graph* graph, const std::vector<Node*>& roots) {
  std::vector<bool> keep(graph->num_node_ids(), false);
  std::vector<Node*> stack(roots.begin(), roots.end());
  for (Node* n : roots) keep[n->id()] = true;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      if (!keep[e->src->id()]) {
        keep[e->src->id()] = true;
        stack.push_back(e->src);
      }
    }
  }
  for (Node* n : graph->nodes()) {
    if (!keep[n->id()]) graph->RemoveNode(n);
  }
}

std::string ToDot(const Graph& graph) {
  auto escape = [](absl::string_view s) {
    std::string out;
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  };
  std::string dot = "digraph G {\n  node [shape=box];\n";
  for (Node* n : graph.nodes()) {
    std::string label = escape(n->name()) + "\\n" + escape(n->op());
    if (!n->assigned_device_name().empty()) label += "\\n" + escape(n->assigned_device_name());
    absl::StrAppend(&dot, "  n", n->id(), " [label=\"", label, "\"];\n");
  }
  for (Node* n : graph.nodes()) {
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge()) {
        absl::StrAppend(&dot, "  n", e->src->id(), " -> n", e->dst->id(), " [style=dashed];\n");
      } else {
        absl::StrAppend(&dot, "  n", e->src->id(), " -> n", e->dst->id(), " [label=\"",
                        DataTypeString(RemoveRefType(e->src->output_type(e->src_output))),
                        "\"];\n");
      }
    }
  }
  return dot + "}\n";
}

}  // namespace tensorgrid
