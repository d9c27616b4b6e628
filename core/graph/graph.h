// Graph: the mutable in-memory form of a GraphDef — nodes with typed inputs
// and outputs joined by data edges and control edges. Built from a GraphDef by
// ImportGraphDef (which validates everything a step would trip over) and
// exported back with ToGraphDef. Not thread-safe; a Graph that executors use is
// treated as immutable.
#ifndef TENSORGRID_CORE_GRAPH_GRAPH_H_
#define TENSORGRID_CORE_GRAPH_GRAPH_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/framework/op_def.h"
#include "core/framework/versions.h"
#include "proto/graph.pb.h"

namespace tensorgrid {

class Node;

inline constexpr int kControlSlot = -1;

struct Edge {
  Node* src;
  int src_output;  // kControlSlot for a control edge
  Node* dst;
  int dst_input;  // kControlSlot for a control edge
  bool IsControlEdge() const { return src_output == kControlSlot; }
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  // Null when the op is not registered (the node cannot run).
  const OpDef* op_def() const { return op_def_; }
  // "op 'X' (node 'Y') is not registered, so the node cannot run": what every
  // layer says when it meets such a node.
  std::string NotRegisteredMessage() const;
  bool IsStateful() const { return op_def_ != nullptr && op_def_->is_stateful; }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  // DT_INVALID for nodes of unregistered ops.
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }

  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge feeding input `i`, or null.
  const Edge* input_edge(int i) const;

  const std::string& requested_device() const { return def_.device(); }
  const std::string& assigned_device_name() const { return assigned_device_; }
  void set_assigned_device_name(std::string d) { assigned_device_ = std::move(d); }

 private:
  friend class Graph;
  int id_ = -1;
  NodeDef def_;
  const OpDef* op_def_ = nullptr;
  std::vector<DataType> input_types_, output_types_;
  std::vector<const Edge*> in_edges_, out_edges_;
  std::string assigned_device_;
};

class Graph {
 public:
  // A new graph has tensorgrid's own versions (producer kGraphDefVersion);
  // ImportGraphDef gives it those of the GraphDef instead.
  explicit Graph(const OpRegistry* ops = OpRegistry::Global())
      : ops_(ops), versions_(CurrentGraphDefVersions()) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node (its `input` field is ignored: wire it with AddEdge). Known
  // ops are validated and get defaults; InvalidArgument names the node.
  absl::StatusOr<Node*> AddNode(NodeDef def);
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  const Edge* AddControlEdge(Node* src, Node* dst) {
    return AddEdge(src, kControlSlot, dst, kControlSlot);
  }
  void RemoveEdge(const Edge* edge);
  // Removes the node and all its edges.
  void RemoveNode(Node* node);
  // For nodes of unregistered ops: grows the node to `count` outputs of
  // unknown type (their consumers tell how many there are).
  void EnsureUnknownOutputs(Node* node, int count);

  Node* FindNode(absl::string_view name) const;
  // Ids are dense in [0, num_node_ids()); removed ids hold null.
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  Node* FindNodeId(int id) const { return nodes_[id].get(); }
  int num_nodes() const { return num_nodes_; }
  std::vector<Node*> nodes() const;

  // A name not yet used in the graph, starting with `prefix`.
  std::string NewName(absl::string_view prefix);

  VersionDef& versions() { return versions_; }
  const VersionDef& versions() const { return versions_; }
  const OpRegistry* op_registry() const { return ops_; }

  // Nodes in id order; inputs from edges (data inputs by port, then "^control").
  // Assigned devices, when set, are written to `device`.
  void ToGraphDef(GraphDef* out) const;

 private:
  const OpRegistry* ops_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::deque<Edge> edges_;  // stable addresses; removed edges stay as dead entries
  absl::flat_hash_map<std::string, Node*> by_name_;
  int num_nodes_ = 0;
  VersionDef versions_;
};

// Validates `def` and builds a Graph: unique non-empty names; inputs name
// existing nodes ("x", "x:1", "^x", control inputs last); ports in range;
// input types match; no cycles; versions tensorgrid may consume
// (CheckGraphDefVersions). Nodes are read as TensorFlow reads them from a
// graph of `def.versions().producer()` (core/framework/versions.h). Nodes of
// unregistered ops are allowed and fail only when a step needs them. Errors
// are InvalidArgument naming the node.
absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(const GraphDef& def,
                                                      const OpRegistry* ops = OpRegistry::Global());
// Adds `def`'s nodes to an existing graph (their inputs may name nodes
// already in it); on error the graph is unchanged. A non-empty graph takes
// only nodes of its own producer version; min_consumer and bad_consumers
// merge.
absl::Status ExtendGraph(const GraphDef& def, Graph* graph);

// A deep copy (same node ids, names, devices).
std::unique_ptr<Graph> CopyGraph(const Graph& graph);

// All nodes in an order where every node follows its inputs (data and control).
// InvalidArgument naming a node on the cycle if there is one.
absl::StatusOr<std::vector<Node*>> TopologicalSort(const Graph& graph);

// Removes every node from which none of `roots` is reachable.
void PruneForRoots(Graph* graph, const std::vector<Node*>& roots);

// "name" -> ("name", 0); "name:3" -> ("name", 3). InvalidArgument if malformed.
absl::Status ParseTensorName(absl::string_view tensor, std::string* node, int* port);

// A Graphviz DOT rendering: one box per node labelled "name\nop", dashed
// control edges, data edges labelled with their dtype.
std::string ToDot(const Graph& graph);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_GRAPH_GRAPH_H_
