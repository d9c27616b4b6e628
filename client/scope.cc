#include "client/scope.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "client/merge_device.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/shape_inference.h"
#include "core/framework/versions.h"
#include "core/platform/status.h"

namespace tensorgrid {

struct ScopeGraph {
  // Tells this graph's Operations from another's (never 0: "unknown").
  const uint64_t id = [] {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }();
  GraphDef graph;
  std::unordered_map<std::string, int> node_index;  // node name -> index in graph.node
  // Every full name handed out (nodes and name scopes) -> the last numeric
  // suffix tried for it, as in TensorFlow's name map.
  std::unordered_map<std::string, int> name_counts;
  std::unordered_set<std::string> node_names;  // reserved for nodes (a subset of name_counts)
  // Node name -> the shapes inferred for its outputs.
  std::unordered_map<std::string, std::vector<PartialTensorShape>> shapes;
  absl::Status status;
};

struct Scope::DeviceLayer {
  DeviceFunction fn;
  std::string outer_device;
  std::shared_ptr<const DeviceLayer> outer;
};

namespace {

std::string Join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : absl::StrCat(prefix, "/", name);
}

// `full_name` if unused, else the first free "full_name_<k>"; reserves it.
std::string ReserveUniqueName(ScopeGraph& g, const std::string& full_name) {
  auto it = g.name_counts.find(full_name);
  if (it == g.name_counts.end()) {
    g.name_counts.emplace(full_name, 0);
    return full_name;
  }
  std::string candidate;
  do {
    candidate = absl::StrCat(full_name, "_", ++it->second);
  } while (g.name_counts.count(candidate) > 0);
  g.name_counts.emplace(candidate, 0);
  return candidate;
}

}  // namespace

Scope::Scope(std::shared_ptr<ScopeGraph> graph) : graph_(std::move(graph)) {}
Scope::Scope(const Scope&) = default;
Scope& Scope::operator=(const Scope&) = default;
Scope::Scope(Scope&&) noexcept = default;
Scope& Scope::operator=(Scope&&) noexcept = default;
Scope::~Scope() = default;

uint64_t Scope::graph_id() const { return graph_->id; }

Scope Scope::NewRootScope() {
  auto graph = std::make_shared<ScopeGraph>();
  *graph->graph.mutable_versions() = CurrentGraphDefVersions();
  return Scope(std::move(graph));
}

Scope Scope::NewSubScope(const std::string& child_scope_name) const {
  Scope child(*this);
  child.op_name_.clear();
  if (child_scope_name.empty()) return child;
  child.name_ = ReserveUniqueName(*graph_, Join(name_, child_scope_name));
  return child;
}

Scope Scope::WithOpNameImpl(std::string op_name) const {
  Scope s(*this);
  s.op_name_ = std::move(op_name);
  return s;
}

Scope Scope::WithControlDependencies(absl::Span<const Operation> ops) const {
  Scope s(*this);
  for (const Operation& op : ops) {
    if (std::find(s.control_deps_.begin(), s.control_deps_.end(), op) == s.control_deps_.end()) {
      s.control_deps_.push_back(op);
    }
  }
  return s;
}

Scope Scope::WithNoControlDependencies() const {
  Scope s(*this);
  s.control_deps_.clear();
  return s;
}

Scope Scope::WithDevice(const std::string& device) const {
  Scope s(*this);
  s.device_ = device;
  return s;
}

Scope Scope::WithDeviceFunction(DeviceFunction fn) const {
  if (!fn) {
    UpdateStatus(errors::InvalidArgument("WithDeviceFunction: an empty function"));
    return *this;
  }
  Scope s(*this);
  s.device_layers_ = std::make_shared<const DeviceLayer>(
      DeviceLayer{std::move(fn), std::move(s.device_), device_layers_});
  s.device_.clear();
  return s;
}

Scope Scope::ColocateWith(const Operation& op) const {
  Scope s(*this);
  s.colocation_.clear();
  if (const NodeDef* node = FindNode(op.name())) {
    std::vector<std::string> classes;
    if (HasNodeAttr(*node, "_class") && GetNodeAttr(*node, "_class", &classes).ok()) {
      for (std::string& c : classes) {
        if (absl::StartsWith(c, "loc:@")) s.colocation_.push_back(std::move(c));
      }
    }
  } else if (ok()) {
    UpdateStatus(op.valid() ? errors::InvalidArgument("ColocateWith: '", op.name(),
                                                      "' is not a node of this scope's graph")
                            : errors::InvalidArgument("ColocateWith: an invalid Operation"));
  }
  if (s.colocation_.empty() && op.valid()) s.colocation_.push_back("loc:@" + op.name());
  std::sort(s.colocation_.begin(), s.colocation_.end());
  return s;
}

Scope Scope::ClearColocation() const {
  Scope s(*this);
  s.colocation_.clear();
  return s;
}

Scope Scope::WithVariableCreator(std::shared_ptr<const VariableCreatorHook> creator) const {
  Scope s(*this);
  s.creator_ = std::move(creator);
  return s;
}

std::string Scope::GetUniqueNameForOp(const std::string& default_name) const {
  if (op_name_.empty()) {
    std::string name = ReserveUniqueName(*graph_, Join(name_, default_name));
    graph_->node_names.insert(name);
    return name;
  }
  // An exact name may coincide with a name scope ("x" beside "x/y"), not a node.
  std::string name = Join(name_, op_name_);
  if (!graph_->node_names.insert(name).second) {
    UpdateStatus(errors::InvalidArgument("duplicate node name '", name, "'"));
  }
  graph_->name_counts.emplace(name, 0);
  return name;
}

void Scope::UpdateStatus(const absl::Status& status) const {
  if (graph_->status.ok() && !status.ok()) graph_->status = status;
}

absl::Status Scope::status() const { return graph_->status; }

absl::Status Scope::ToGraphDef(GraphDef* graph) const { return ToGraphDef(graph, 0); }

absl::Status Scope::ToGraphDef(GraphDef* graph, int first_node) const {
  TG_RETURN_IF_ERROR(graph_->status);
  graph->Clear();
  *graph->mutable_versions() = graph_->graph.versions();
  const auto& nodes = graph_->graph.node();
  for (int i = std::max(first_node, 0); i < nodes.size(); ++i) *graph->add_node() = nodes[i];
  return absl::OkStatus();
}

int Scope::num_nodes() const { return graph_->graph.node_size(); }

void Scope::AddNode(NodeDef node, std::vector<PartialTensorShape> output_shapes) const {
  graph_->node_index[node.name()] = graph_->graph.node_size();
  graph_->shapes[node.name()] = std::move(output_shapes);
  *graph_->graph.add_node() = std::move(node);
}

PartialTensorShape Scope::ShapeOf(const std::string& node, int port) const {
  auto it = graph_->shapes.find(node);
  if (it == graph_->shapes.end() || port < 0 || port >= static_cast<int>(it->second.size())) {
    return PartialTensorShape();
  }
  return it->second[port];
}

PartialTensorShape Scope::InferredShape(const Output& output) const {
  if (!output.valid() || !output.op().MayBelongTo(graph_id())) return PartialTensorShape();
  return ShapeOf(output.node_name(), output.index());
}

namespace {

// A NodeDef input NodeBuilder wrote ("node" or "node:port") as node and
// port; false if it is neither.
bool SplitInput(absl::string_view tensor, std::string* node, int* port) {
  *port = 0;
  const size_t colon = tensor.rfind(':');
  if (colon != absl::string_view::npos) {
    if (!absl::SimpleAtoi(tensor.substr(colon + 1), port)) return false;
    tensor = tensor.substr(0, colon);
  }
  *node = std::string(tensor);
  return true;
}

}  // namespace

PartialTensorShape Scope::InputShape(absl::string_view tensor) const {
  std::string node;
  int port;
  return SplitInput(tensor, &node, &port) ? ShapeOf(node, port) : PartialTensorShape();
}

std::optional<Tensor> Scope::InputConstant(absl::string_view tensor) const {
  std::string node;
  int port;
  if (!SplitInput(tensor, &node, &port)) return std::nullopt;
  const NodeDef* producer = FindNode(node);
  return producer == nullptr ? std::nullopt : InferenceConstant(*producer, port);
}

absl::Status Scope::AssignDevice(NodeDef* node) const {
  node->set_device(device_);
  if (device_layers_ == nullptr || !colocation_.empty()) return absl::OkStatus();
  auto merge = [&](const std::string& base, const char* what) -> absl::Status {
    absl::StatusOr<std::string> merged = MergeDevice(base, node->device());
    if (!merged.ok()) {
      return WithContext(merged.status(), absl::StrCat("node '", node->name(), "' (", node->op(),
                                                       "): placing it with ", what, " '", base,
                                                       "' over its device '", node->device(), "'"));
    }
    node->set_device(*std::move(merged));
    return absl::OkStatus();
  };
  for (const DeviceLayer* layer = device_layers_.get(); layer != nullptr;
       layer = layer->outer.get()) {
    TG_RETURN_IF_ERROR(merge(layer->fn(*node), "the device function's result"));
    TG_RETURN_IF_ERROR(merge(layer->outer_device, "the outer WithDevice request"));
  }
  return absl::OkStatus();
}

const NodeDef* Scope::FindNode(const std::string& name) const {
  auto it = graph_->node_index.find(name);
  return it == graph_->node_index.end() ? nullptr : &graph_->graph.node(it->second);
}

}  // namespace tensorgrid
