#include "core/runtime/placer.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/device.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {

struct Placer::Link {
  int other;        // node id
  std::string why;  // "reference edge", "_class loc:@w"
  bool joined;      // this node's edge or attr made the link
};

struct Placer::NodeState {
  Node* node = nullptr;  // null for removed ids
  int parent = -1;       // union-find
  int group = -1;
  bool has_request = false;
  ParsedDeviceName request;
  // Consumes a reference or resource edge: a conflicting request gives way.
  bool yields_request = false;
  bool request_ignored = false;
  std::vector<Link> links;                // a spanning tree of the group
  const Link* toward_anchor = nullptr;    // first hop towards GroupAnchor
  std::vector<std::string> kernel_types;  // among device_types_
  int device = -1;                        // index into devices_
  std::string follow_reason;              // set by the heuristics
};

struct Placer::Group {
  std::vector<Node*> members;      // by id
  ParsedDeviceName spec;           // the members' merged requests
  std::string merge_note;          // soft placement dropped a conflicting type/id
  std::vector<std::string> types;  // device types with a kernel for every member
  int device = -1;
  std::string soft_reason;
};

namespace {

constexpr size_t kMaxListed = 20;  // members or tasks listed in a message

int TypePriority(absl::string_view type) {
  if (type == DEVICE_GPU) return 2;
  if (type == DEVICE_CPU) return 1;
  return 0;
}

std::string Describe(const Node* n) { return absl::StrCat("'", n->name(), "' (", n->op(), ")"); }

bool IsMetadataOp(const Node* n) {
  return n->op() == "Shape" || n->op() == "ShapeN" || n->op() == "Size" || n->op() == "Rank";
}

// No data inputs, one plain output: Const, Placeholder, ...
bool IsGenerator(const Node* n) {
  return n->op_def() != nullptr && n->op() != "_Arg" && n->num_inputs() == 0 &&
         n->num_outputs() == 1 && !IsRefType(n->output_type(0)) && n->output_type(0) != DT_RESOURCE;
}

// The distinct nodes reading `n`'s outputs, by id.
std::vector<Node*> DataConsumers(const Node* n) {
  std::vector<Node*> out;
  for (const Edge* e : n->out_edges()) {
    if (!e->IsControlEdge()) out.push_back(e->dst);
  }
  std::sort(out.begin(), out.end(), [](Node* a, Node* b) { return a->id() < b->id(); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Contains(const std::vector<std::string>& v, absl::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string TypeList(const std::vector<std::string>& types) {
  return types.empty() ? "none" : absl::StrJoin(types, ", ");
}

}  // namespace

Placer::Placer(Graph* graph, std::vector<DeviceAttributes> devices, PlacerOptions options)
    : graph_(graph), options_(std::move(options)) {
  for (DeviceAttributes& d : devices) devices_.push_back(Dev{std::move(d), {}});
}

Placer::~Placer() = default;

absl::Status Placer::Run() {
  ran_ = true;
  placements_.clear();
  nodes_.clear();
  groups_.clear();
  TG_RETURN_IF_ERROR(ParseDevices());
  TG_RETURN_IF_ERROR(ParseRequests());
  // Reference edges first, so that their (more telling) reason wins when a
  // node is also colocated by `_class`.
  ColocateReferenceAndResourceEdges();
  TG_RETURN_IF_ERROR(ColocateByClassAttr());
  BuildGroups();
  for (Group& group : groups_) {
    TG_RETURN_IF_ERROR(MergeGroupRequests(group));
    FindKernelTypes(group);
  }
  OrientGroups();
  TG_RETURN_IF_ERROR(AssignDevices());
  RecordPlacements();
  return absl::OkStatus();
}

absl::Status Placer::ParseDevices() {
  if (devices_.empty()) return errors::InvalidArgument("no devices to place the graph on");
  for (Dev& d : devices_) {
    TG_ASSIGN_OR_RETURN(d.parsed, DeviceNameUtils::Parse(d.attrs.name));
    if (!d.parsed.IsFullySpecified()) {
      return errors::InvalidArgument("device '", d.attrs.name,
                                     "' is not a full device name "
                                     "(/job:<name>/replica:<r>/task:<t>/device:<TYPE>:<id>)");
    }
    if (d.attrs.type.empty()) d.attrs.type = d.parsed.type;
    if (d.attrs.type != d.parsed.type) {
      return errors::InvalidArgument("device '", d.attrs.name, "' has type '", d.attrs.type,
                                     "' but its name says '", d.parsed.type, "'");
    }
    d.attrs.name = DeviceNameUtils::ToString(d.parsed);
  }
  std::sort(devices_.begin(), devices_.end(),
            [](const Dev& a, const Dev& b) { return a.parsed < b.parsed; });
  device_types_.clear();
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (i > 0 && devices_[i].parsed == devices_[i - 1].parsed) {
      return errors::InvalidArgument("device '", devices_[i].attrs.name, "' is listed twice");
    }
    if (!Contains(device_types_, devices_[i].attrs.type)) {
      device_types_.push_back(devices_[i].attrs.type);
    }
  }
  std::sort(device_types_.begin(), device_types_.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(-TypePriority(a), a) < std::make_tuple(-TypePriority(b), b);
  });
  absl::StatusOr<ParsedDeviceName> spec = DeviceNameUtils::Parse(options_.default_device);
  if (!spec.ok()) return WithContext(spec.status(), "default_device");
  default_spec_ = *spec;
  return absl::OkStatus();
}

absl::Status Placer::ParseRequests() {
  nodes_.assign(graph_->num_node_ids(), NodeState());
  for (Node* n : graph_->nodes()) {
    NodeState& s = nodes_[n->id()];
    s.node = n;
    s.parent = n->id();
    absl::StatusOr<ParsedDeviceName> request = DeviceNameUtils::Parse(n->requested_device());
    if (!request.ok()) return WithContext(request.status(), absl::StrCat("node ", Describe(n)));
    s.request = *request;
    s.has_request = !request->IsEmpty();
  }
  return absl::OkStatus();
}

int Placer::Find(int id) {
  while (nodes_[id].parent != id) {
    nodes_[id].parent = nodes_[nodes_[id].parent].parent;
    id = nodes_[id].parent;
  }
  return id;
}

void Placer::Union(Node* joiner, Node* other, const std::string& why) {
  const int a = Find(joiner->id());
  const int b = Find(other->id());
  if (a == b) return;  // keep the links a tree: one path between two members
  nodes_[std::max(a, b)].parent = std::min(a, b);
  nodes_[joiner->id()].links.push_back(Link{other->id(), why, true});
  nodes_[other->id()].links.push_back(Link{joiner->id(), why, false});
}

void Placer::ColocateReferenceAndResourceEdges() {
  for (Node* n : graph_->nodes()) {
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) continue;
      const DataType in = n->input_type(e->dst_input);
      const char* why = nullptr;
      // As TensorFlow: only an input that is itself a reference (Assign's
      // ref), not a value read from one (Identity of a variable).
      if (IsRefType(in)) {
        why = "reference edge";
      } else if (in == DT_RESOURCE) {
        why = "resource edge";
      }
      if (why == nullptr) continue;
      nodes_[n->id()].yields_request = true;
      Union(n, e->src, why);
    }
  }
}

absl::Status Placer::ColocateByClassAttr() {
  // Nodes naming a class whose node is absent (pruned) still share a device.
  absl::flat_hash_map<std::string, Node*> absent;
  for (Node* n : graph_->nodes()) {
    if (!HasNodeAttr(n->def(), "_class")) continue;
    std::vector<std::string> classes;
    TG_RETURN_IF_ERROR(GetNodeAttr(n->def(), "_class", &classes));
    for (const std::string& c : classes) {
      if (!absl::StartsWith(c, "loc:@")) continue;
      const std::string target = c.substr(5);
      if (target == n->name()) continue;
      Node* other = graph_->FindNode(target);
      if (other == nullptr) other = absent.emplace(target, n).first->second;
      if (other != n) Union(n, other, absl::StrCat("_class ", c));
    }
  }
  return absl::OkStatus();
}

void Placer::BuildGroups() {
  std::vector<int> group_of_root(nodes_.size(), -1);
  for (Node* n : graph_->nodes()) {
    const int root = Find(n->id());
    if (group_of_root[root] < 0) {
      group_of_root[root] = static_cast<int>(groups_.size());
      groups_.emplace_back();
    }
    nodes_[n->id()].group = group_of_root[root];
    groups_[group_of_root[root]].members.push_back(n);
  }
}

absl::Status Placer::MergeGroupRequests(Group& group) {
  // Members that own their placement first; then those joined through a
  // reference/resource edge, whose conflicting requests are ignored.
  for (bool yielding : {false, true}) {
    for (Node* m : group.members) {
      NodeState& s = nodes_[m->id()];
      if (!s.has_request || s.yields_request != yielding) continue;
      if (yielding) {
        if (DeviceNameUtils::AreCompatibleDevNames(group.spec, s.request)) {
          TG_RETURN_IF_ERROR(DeviceNameUtils::MergeDevNames(&group.spec, s.request));
        } else if (!NamesADevice(s.request)) {
          // Given way to its input, but a request for nothing is still an error.
          return errors::InvalidArgument("node ", Describe(m), " requests '", m->requested_device(),
                                         "', which names no device of this session",
                                         Suggestion(s.request), "\n  devices: ", DescribeDevices());
        } else {
          s.request_ignored = true;
        }
        continue;
      }
      const ParsedDeviceName before = group.spec;
      absl::Status merged =
          DeviceNameUtils::MergeDevNames(&group.spec, s.request, options_.allow_soft_placement);
      if (!merged.ok()) {
        return errors::InvalidArgument("cannot colocate node ", Describe(m),
                                       " with its colocation group: ", merged.message(),
                                       "\n  colocation group:\n", DescribeGroup(group, "    "));
      }
      if (group.merge_note.empty() && !DeviceNameUtils::AreCompatibleDevNames(before, s.request)) {
        group.merge_note =
            absl::StrCat("the group's requests conflict ('", DeviceNameUtils::ToString(before),
                         "' vs '", m->requested_device(), "' of '", m->name(),
                         "'), so the device type and id were left open");
      }
    }
  }
  return absl::OkStatus();
}

void Placer::FindKernelTypes(Group& group) {
  group.types = device_types_;
  for (Node* m : group.members) {
    if (m->op_def() == nullptr) continue;  // unregistered: no constraint
    NodeState& s = nodes_[m->id()];
    for (const std::string& type : device_types_) {
      if (KernelRegistry::Global()->HasKernel(m->def(), type)) s.kernel_types.push_back(type);
    }
    group.types.erase(
        std::remove_if(group.types.begin(), group.types.end(),
                       [&](const std::string& t) { return !Contains(s.kernel_types, t); }),
        group.types.end());
  }
}

absl::Status Placer::AssignDevices() {
  TG_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalSort(*graph_));
  // Generators and _Args wait until their consumers are placed.
  std::vector<Node*> deferred;
  for (Node* n : order) {
    const NodeState& s = nodes_[n->id()];
    Group& group = groups_[s.group];
    if (group.device >= 0) continue;
    const bool free =
        !s.has_request && group.members.size() == 1 && !options_.pinned.contains(n->name());
    const size_t consumers = DataConsumers(n).size();
    if (free && ((IsGenerator(n) && consumers == 1) || (n->op() == "_Arg" && consumers > 0))) {
      deferred.push_back(n);
      continue;
    }
    if (free && (IsMetadataOp(n) || n->op() == "_Retval") && n->input_edge(0) != nullptr) {
      Node* input = n->input_edge(0)->src;
      const char* kind = n->op() == "_Retval" ? "_Retval" : "metadata op";
      if (TryFollow(n, input,
                    absl::StrCat("follows its input '", input->name(), "' (", kind, ")"))) {
        continue;
      }
    }
    TG_RETURN_IF_ERROR(AssignGroup(group, n));
  }
  for (Node* n : deferred) {
    Node* consumer = DataConsumers(n).front();
    const std::string reason =
        n->op() == "_Arg"
            ? absl::StrCat("follows its first consumer '", consumer->name(), "' (_Arg)")
            : absl::StrCat("follows its only consumer '", consumer->name(), "'");
    if (!TryFollow(n, consumer, reason)) {
      TG_RETURN_IF_ERROR(AssignGroup(groups_[nodes_[n->id()].group], n));
    }
  }
  return absl::OkStatus();
}

bool Placer::TryFollow(Node* node, Node* leader, const std::string& reason) {
  const int device = nodes_[leader->id()].device;
  NodeState& s = nodes_[node->id()];
  Group& group = groups_[s.group];
  if (device < 0 || !Contains(group.types, devices_[device].attrs.type)) return false;
  group.device = s.device = device;
  s.follow_reason = reason;
  return true;
}

std::vector<int> Placer::Candidates(const ParsedDeviceName& spec, const Group& group) const {
  std::vector<int> out;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (DeviceNameUtils::IsSpecification(spec, devices_[i].parsed) &&
        Contains(group.types, devices_[i].attrs.type)) {
      out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

int Placer::BestCandidate(const std::vector<int>& candidates) const {
  const ParsedDeviceName default_task = DeviceNameUtils::AddressSpace(default_spec_);
  auto rank = [&](int i) {
    const Dev& d = devices_[i];
    return std::make_tuple(!DeviceNameUtils::IsSpecification(default_spec_, d.parsed),
                           !DeviceNameUtils::IsSpecification(default_task, d.parsed),
                           -TypePriority(d.attrs.type), i);
  };
  return *std::min_element(candidates.begin(), candidates.end(),
                           [&](int a, int b) { return rank(a) < rank(b); });
}

absl::Status Placer::AssignGroup(Group& group, Node* trigger) {
  for (Node* m : group.members) {
    auto pin = options_.pinned.find(m->name());
    if (pin == options_.pinned.end()) continue;
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].attrs.name != pin->second) continue;
      if (!Contains(group.types, devices_[i].attrs.type)) {
        return errors::InvalidArgument(
            "stateful node ", Describe(m), " lives on ", pin->second,
            ", where an earlier step of this session placed it, but its colocation group now "
            "has no kernel there for every member (kernels for: ",
            TypeList(group.types), ")\n  colocation group:\n", DescribeGroup(group, "    "));
      }
      group.device = static_cast<int>(i);
      group.soft_reason = absl::StrCat("kept on ", pin->second, ", where an earlier step placed '",
                                       m->name(), "' (stateful)");
      for (Node* member : group.members) nodes_[member->id()].device = group.device;
      return absl::OkStatus();
    }
    return errors::Internal("stateful node '", m->name(), "' was placed on ", pin->second,
                            ", which is no longer a device of this session");
  }
  std::vector<int> candidates = Candidates(group.spec, group);
  if (candidates.empty() && options_.allow_soft_placement) {
    candidates = Candidates(DeviceNameUtils::AddressSpace(group.spec), group);
    if (!candidates.empty()) {
      bool any_match = false;
      for (const Dev& d : devices_) {
        any_match = any_match || DeviceNameUtils::IsSpecification(group.spec, d.parsed);
      }
      group.soft_reason = absl::StrCat(
          "soft placement: requested '", DeviceNameUtils::ToString(group.spec), "' but ",
          any_match ? absl::StrCat("no matching device has a kernel for every node of its group "
                                   "(kernels for: ",
                                   TypeList(group.types), ")")
                    : "no such device exists",
          "; the device type and id were dropped");
    }
  }
  if (candidates.empty()) return ImpossiblePlacement(group, trigger);
  group.device = BestCandidate(candidates);
  for (Node* m : group.members) nodes_[m->id()].device = group.device;
  return absl::OkStatus();
}

absl::Status Placer::ImpossiblePlacement(const Group& group, Node* trigger) const {
  const Node* anchor = GroupAnchor(group);
  const Node* n = anchor != nullptr ? anchor : trigger;
  std::string msg = absl::StrCat(
      "cannot place node ", Describe(n), ": no device satisfies its constraints\n  requested: ",
      n->requested_device().empty() ? std::string("nothing")
                                    : absl::StrCat("'", n->requested_device(), "'"),
      Suggestion(group.spec));
  if (group.members.size() > 1) {
    if (!group.spec.IsEmpty()) {
      absl::StrAppend(&msg, " (merged over its colocation group: '",
                      DeviceNameUtils::ToString(group.spec), "')");
    }
    absl::StrAppend(&msg, "\n  colocation group:\n", DescribeGroup(group, "    "));
  } else {
    absl::StrAppend(&msg, "\n  colocation group: this node alone");
  }
  absl::StrAppend(&msg, "\n  devices: ", DescribeDevices(),
                  "\n  kernels: ", DescribeKernels(group));
  if (!options_.allow_soft_placement && (group.spec.has_type || group.spec.has_id)) {
    absl::StrAppend(&msg, "\n  hint: allow_soft_placement would drop the device type and id");
  } else if (options_.allow_soft_placement) {
    const std::string relaxed =
        DeviceNameUtils::ToString(DeviceNameUtils::AddressSpace(group.spec));
    absl::StrAppend(&msg, "\n  soft placement: ",
                    relaxed.empty() ? std::string("no device of any type")
                                    : absl::StrCat("no device matching '", relaxed, "'"),
                    " has a kernel for every member either");
  }
  return errors::InvalidArgument(msg);
}

void Placer::RecordPlacements() {
  for (Node* n : graph_->nodes()) {
    const std::string& device = devices_[nodes_[n->id()].device].attrs.name;
    n->set_assigned_device_name(device);
    std::string reason = NodeReason(n);
    if (n->op_def() == nullptr) {  // placed like any node, so that the rest can be shown
      absl::StrAppend(&reason, "; ", n->NotRegisteredMessage());
    }
    placements_[n->name()] = Placement{device, std::move(reason)};
    if (options_.log_device_placement) {
      std::fprintf(stderr, "%s: (%s): %s\n", n->name().c_str(), n->op().c_str(), device.c_str());
    }
  }
}

const Node* Placer::GroupAnchor(const Group& group) const {
  for (const Node* m : group.members) {
    const NodeState& s = nodes_[m->id()];
    if (s.has_request && !s.request_ignored) return m;
  }
  return nullptr;
}

void Placer::OrientGroups() {
  // Breadth-first from each group's anchor over the links (a tree): every
  // other member learns its first hop towards the request that placed it.
  std::vector<bool> seen(nodes_.size(), false);
  for (const Group& group : groups_) {
    const Node* anchor = GroupAnchor(group);
    if (anchor == nullptr || group.members.size() == 1) continue;
    std::deque<int> queue = {anchor->id()};
    seen[anchor->id()] = true;
    while (!queue.empty()) {
      const int id = queue.front();
      queue.pop_front();
      for (const Link& link : nodes_[id].links) {
        if (seen[link.other]) continue;
        seen[link.other] = true;
        NodeState& next = nodes_[link.other];
        for (const Link& back : next.links) {
          if (back.other == id) next.toward_anchor = &back;
        }
        queue.push_back(link.other);
      }
    }
  }
}

std::string Placer::NodeReason(const Node* n) const {
  const NodeState& s = nodes_[n->id()];
  if (!s.follow_reason.empty()) return s.follow_reason;
  const Group& group = groups_[s.group];
  std::string colocated;
  if (group.members.size() > 1) {
    const Link* hop = s.toward_anchor != nullptr ? s.toward_anchor : &s.links.front();
    colocated =
        absl::StrCat("colocated with '", nodes_[hop->other].node->name(), "' (", hop->why, ")");
  }
  if (!group.soft_reason.empty()) {
    return colocated.empty() ? group.soft_reason : absl::StrCat(group.soft_reason, "; ", colocated);
  }
  if (s.has_request && !s.request_ignored) {
    if (DeviceNameUtils::IsSpecification(s.request, devices_[s.device].parsed)) {
      return absl::StrCat("explicit request '", n->requested_device(), "'");
    }
    return absl::StrCat("soft placement: requested '", n->requested_device(), "' but ",
                        group.merge_note);
  }
  if (!colocated.empty()) {
    if (s.request_ignored) {
      absl::StrAppend(&colocated, ", ignoring its own request '", n->requested_device(), "'");
    }
    return colocated;
  }
  return "default device";
}

std::string Placer::DescribeGroup(const Group& group, absl::string_view indent) const {
  std::vector<std::string> lines;
  for (const Node* m : group.members) {
    if (lines.size() == kMaxListed) {
      lines.push_back(absl::StrCat(indent, "... and ", group.members.size() - kMaxListed, " more"));
      break;
    }
    const NodeState& s = nodes_[m->id()];
    std::string line =
        absl::StrCat(indent, Describe(m), ": ",
                     s.has_request ? absl::StrCat("requests '", m->requested_device(), "'")
                                   : std::string("no request"));
    if (s.request_ignored)
      absl::StrAppend(&line, " (ignored: it follows its reference/resource input)");
    for (const Link& link : s.links) {
      if (link.joined) {
        absl::StrAppend(&line, "; colocated with '", nodes_[link.other].node->name(), "' (",
                        link.why, ")");
      }
    }
    lines.push_back(std::move(line));
  }
  return absl::StrJoin(lines, "\n");
}

bool Placer::NamesADevice(const ParsedDeviceName& request) const {
  const ParsedDeviceName spec =
      options_.allow_soft_placement ? DeviceNameUtils::AddressSpace(request) : request;
  for (const Dev& d : devices_) {
    if (DeviceNameUtils::IsSpecification(spec, d.parsed)) return true;
  }
  return false;
}

namespace {

// Levenshtein distance, for "did you mean".
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string Placer::Suggestion(const ParsedDeviceName& request) const {
  if (!request.has_job) return "";
  std::vector<std::string> jobs;
  int tasks = 0;
  for (const Dev& d : devices_) {
    if (!Contains(jobs, d.parsed.job)) jobs.push_back(d.parsed.job);
    if (d.parsed.job == request.job) tasks = std::max(tasks, d.parsed.task + 1);
  }
  if (tasks == 0) {
    for (const std::string& job : jobs) {
      if (EditDistance(absl::AsciiStrToLower(job), absl::AsciiStrToLower(request.job)) <= 2) {
        return absl::StrCat(" (did you mean '/job:", job, "'?)");
      }
    }
    return absl::StrCat(" (no job '", request.job, "'; the jobs are ", absl::StrJoin(jobs, ", "),
                        ")");
  }
  if (request.has_task && request.task >= tasks) {
    return absl::StrCat(" (job '", request.job, "' has task", tasks == 1 ? " 0" : "s 0..",
                        tasks == 1 ? "" : std::to_string(tasks - 1), ")");
  }
  return "";
}

std::string Placer::DescribeDevices() const {
  // One entry per task: "/job:ps/replica:0/task:0 (CPU:0, CPU:1)".
  std::vector<std::string> tasks;
  std::string task, local;
  auto flush = [&] {
    if (!task.empty()) tasks.push_back(absl::StrCat(task, " (", local, ")"));
  };
  for (const Dev& d : devices_) {
    const std::string t = DeviceNameUtils::TaskName(d.parsed);
    if (t != task) {
      flush();
      task = t;
      local.clear();
    }
    absl::StrAppend(&local, local.empty() ? "" : ", ", d.parsed.type, ":", d.parsed.id);
  }
  flush();
  if (tasks.size() > kMaxListed) {
    const size_t more = tasks.size() - kMaxListed;
    tasks.resize(kMaxListed);
    tasks.push_back(absl::StrCat("... and ", more, " more tasks"));
  }
  return absl::StrJoin(tasks, ", ");
}

std::string Placer::DescribeKernels(const Group& group) const {
  // Also probe requested types the device set lacks: "no GPU kernel" and "no
  // GPU device" are different problems.
  std::vector<std::string> types = device_types_;
  for (const Node* m : group.members) {
    const NodeState& s = nodes_[m->id()];
    if (s.request.has_type && !Contains(types, s.request.type)) types.push_back(s.request.type);
  }
  std::vector<std::string> parts;
  for (const Node* m : group.members) {
    if (parts.size() == kMaxListed) {
      parts.push_back("...");
      break;
    }
    if (m->op_def() == nullptr) {
      parts.push_back(absl::StrCat(Describe(m), ": unregistered op, no constraint"));
      continue;
    }
    std::vector<std::string> has;
    for (const std::string& t : types) {
      if (KernelRegistry::Global()->HasKernel(m->def(), t)) has.push_back(t);
    }
    parts.push_back(absl::StrCat(Describe(m), ": ", TypeList(has)));
  }
  std::string out = absl::StrJoin(parts, "; ");
  if (group.members.size() > 1) absl::StrAppend(&out, "; every member: ", TypeList(group.types));
  return out;
}

std::string Placer::Explain(absl::string_view name) const {
  const Node* n = graph_->FindNode(name);
  if (n == nullptr) return absl::StrCat("no node named '", name, "'\n");
  if (!ran_ || n->id() >= static_cast<int>(nodes_.size()) || nodes_[n->id()].node != n ||
      nodes_[n->id()].group < 0) {
    return absl::StrCat("node ", Describe(n),
                        " has not been placed: Placer::Run has not got to it\n");
  }
  const NodeState& s = nodes_[n->id()];
  const Group& group = groups_[s.group];
  std::string out = absl::StrCat(Describe(n), " -> ",
                                 s.device >= 0 ? devices_[s.device].attrs.name : "(not placed)");
  if (s.device >= 0) absl::StrAppend(&out, "\n  reason: ", NodeReason(n));
  absl::StrAppend(&out, "\n  requested: ",
                  s.has_request ? absl::StrCat("'", n->requested_device(), "'") : "nothing",
                  s.request_ignored ? " (ignored: it follows its reference/resource input)" : "");
  if (group.members.size() == 1) {
    absl::StrAppend(&out, "\n  colocation group: this node alone");
  } else {
    absl::StrAppend(&out, "\n  colocation group (", group.members.size(), " nodes):\n",
                    DescribeGroup(group, "    "));
    const Node* anchor = GroupAnchor(group);
    if (anchor != nullptr && s.toward_anchor != nullptr) {
      std::string chain = absl::StrCat("'", n->name(), "'");
      for (const Link* link = s.toward_anchor; link != nullptr;
           link = nodes_[link->other].toward_anchor) {
        absl::StrAppend(&chain, " -(", link->why, ")- '", nodes_[link->other].node->name(), "'");
      }
      absl::StrAppend(&out, "\n  chain to the request: ", chain, " which requests '",
                      anchor->requested_device(), "'");
    }
  }
  absl::StrAppend(&out, "\n  group request: ",
                  group.spec.IsEmpty()
                      ? "none"
                      : absl::StrCat("'", DeviceNameUtils::ToString(group.spec), "'"));
  if (!group.merge_note.empty()) absl::StrAppend(&out, " (", group.merge_note, ")");
  absl::StrAppend(&out, "\n  kernels: ", DescribeKernels(group));
  std::vector<std::string> candidates;
  const ParsedDeviceName spec =
      group.soft_reason.empty() ? group.spec : DeviceNameUtils::AddressSpace(group.spec);
  for (int i : Candidates(spec, group)) candidates.push_back(devices_[i].attrs.name);
  absl::StrAppend(&out, "\n  candidates: ", TypeList(candidates));
  if (options_.default_device.empty()) {
    absl::StrAppend(&out, "\n  default device: none (prefers GPU, then CPU, then lowest name)\n");
  } else {
    absl::StrAppend(&out, "\n  default device: '", options_.default_device, "'\n");
  }
  return out;
}

}  // namespace tensorgrid
