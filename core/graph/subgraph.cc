#include "core/graph/subgraph.h"

#include "absl/container/flat_hash_set.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

absl::StatusOr<std::pair<Node*, int>> FindTensor(const Graph& graph, const std::string& tensor,
                                                 absl::string_view what) {
  std::string node_name;
  int port;
  TG_RETURN_IF_ERROR(ParseTensorName(tensor, &node_name, &port));
  Node* n = graph.FindNode(node_name);
  if (n == nullptr) {
    return errors::NotFound(what, " '", tensor, "' names a node that is not in the graph");
  }
  if (n->op_def() == nullptr) {  // its outputs are unknown: say why
    return errors::Unimplemented(what, " '", tensor, "': ", n->NotRegisteredMessage());
  }
  if (port >= n->num_outputs()) {
    return errors::InvalidArgument(what, " '", tensor, "': node '", node_name, "' (", n->op(),
                                   ") has ", n->num_outputs(), " output(s)");
  }
  return std::make_pair(n, port);
}

absl::StatusOr<Node*> AddCallNode(Graph* graph, absl::string_view op, const std::string& name,
                                  DataType type, int index) {
  NodeDef def;
  def.set_name(graph->NewName(name));
  def.set_op(std::string(op));
  SetAttr(&def, "T", type);
  SetAttr(&def, "index", index);
  return graph->AddNode(std::move(def));
}

}  // namespace

absl::Status RewriteGraphForExecution(Graph* graph, const std::vector<std::string>& feeds,
                                      const std::vector<std::string>& fetches,
                                      const std::vector<std::string>& targets,
                                      std::vector<FeedSpec>* feed_specs) {
  feed_specs->clear();
  std::vector<Node*> roots;
  absl::flat_hash_set<std::string> seen_feeds;
  // Resolve everything before changing the graph.
  std::vector<std::pair<Node*, int>> feed_tensors, fetch_tensors;
  for (const std::string& f : feeds) {
    if (!seen_feeds.insert(f).second)
      return errors::InvalidArgument("tensor '", f, "' is fed twice");
    TG_ASSIGN_OR_RETURN(auto t, FindTensor(*graph, f, "feed"));
    if (IsRefType(t.first->output_type(t.second))) {
      return errors::InvalidArgument("feed '", f,
                                     "' is a variable reference; feed its value instead");
    }
    feed_tensors.push_back(t);
  }
  for (const std::string& f : fetches) {
    TG_ASSIGN_OR_RETURN(auto t, FindTensor(*graph, f, "fetch"));
    fetch_tensors.push_back(t);
  }
  for (const std::string& name : targets) {
    Node* n = graph->FindNode(name);
    if (n == nullptr) return errors::NotFound("target '", name, "' is not in the graph");
    roots.push_back(n);
  }

  for (size_t i = 0; i < feeds.size(); ++i) {
    auto [src, port] = feed_tensors[i];
    FeedSpec spec;
    spec.name = feeds[i];
    spec.dtype = src->output_type(port);
    if (src->op() == "Placeholder" || src->op() == "PlaceholderWithDefault") {
      TG_RETURN_IF_ERROR(GetNodeAttr(src->def(), "shape", &spec.shape));
    }
    TG_ASSIGN_OR_RETURN(Node * arg, AddCallNode(graph, "_Arg", "_arg_" + src->name(), spec.dtype,
                                                static_cast<int>(i)));
    std::vector<const Edge*> moved;
    for (const Edge* e : src->out_edges()) {
      if (e->src_output == port) moved.push_back(e);
    }
    for (const Edge* e : moved) {
      Node* dst = e->dst;
      int input = e->dst_input;
      graph->RemoveEdge(e);
      graph->AddEdge(arg, 0, dst, input);
    }
    // A fetch of the fed tensor reads the fed value.
    for (auto& t : fetch_tensors) {
      if (t.first == src && t.second == port) t = {arg, 0};
    }
    feed_specs->push_back(std::move(spec));
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    auto [src, port] = fetch_tensors[i];
    TG_ASSIGN_OR_RETURN(Node * ret,
                        AddCallNode(graph, "_Retval", "_retval_" + src->name(),
                                    RemoveRefType(src->output_type(port)), static_cast<int>(i)));
    graph->AddEdge(src, port, ret, 0);
    roots.push_back(ret);
  }
  PruneForRoots(graph, roots);
  return absl::OkStatus();
}

}  // namespace tensorgrid
