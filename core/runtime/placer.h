// Placer: assigns every node of a graph to one device of a device set, and
// records why.
//
//   PlacerOptions options;
//   options.default_device = "/job:worker/replica:0/task:0";
//   Placer placer(graph, {{"/job:ps/replica:0/task:0/device:CPU:0", "CPU"}, ...}, options);
//   TG_RETURN_IF_ERROR(placer.Run());
//   placer.placements().at("w").reason;   // "explicit request '/job:ps/task:0'"
//   std::cerr << placer.Explain("w/Assign");
//
// The rules, one pass each:
//  1. Colocation groups (union-find): a node joins every node its `_class`
//     attr names ("loc:@w"; nodes naming the same absent node join each
//     other); a node whose input is a reference (Assign, AssignAdd, ...) or a
//     resource (ReadVariableOp, ...) joins that input's producer, and so does
//     an Identity reading a reference (a variable's "read").
//  2. Per group, the members' requested devices are merged. A conflict is
//     InvalidArgument naming the members and their requests (with soft
//     placement a conflicting type/id is dropped instead) — except that a
//     node joined by a reference/resource edge gives way: its conflicting
//     request is ignored, and its reason says so.
//  3. Per group, the device types for which every member has a kernel are
//     intersected (nodes of unregistered ops don't constrain). Candidates are
//     the devices matching the merged request with such a type. With none and
//     `allow_soft_placement`, type and id are dropped (job/replica/task kept).
//  4. Heuristics for nodes with no request that are not colocated: metadata
//     ops (Shape, ShapeN, Size, Rank) and `_Retval` follow their input's
//     device; input-less generators (Const, Placeholder, ...) follow their
//     only consumer's and `_Arg` its first (lowest id) consumer's — each when
//     its kernel supports that device's type.
//  5. Otherwise the best candidate: one matching `default_device`, then one
//     in its address space, then by device type (GPU before CPU, then by
//     name), then by name (CompareFullNames). Deterministic: it depends on
//     the graph and the device set, not on their order.
// An impossible placement is InvalidArgument naming the node, its request,
// the colocation group with each member's request, the devices that exist and
// the device types with kernels. Run overwrites existing assignments.
//
// Not thread-safe; the graph must outlive the Placer.
#ifndef TENSORGRID_CORE_RUNTIME_PLACER_H_
#define TENSORGRID_CORE_RUNTIME_PLACER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/framework/device_name.h"
#include "core/graph/graph.h"

namespace tensorgrid {

struct DeviceAttributes {
  std::string name;  // full name, e.g. /job:ps/replica:0/task:0/device:CPU:0
  std::string type;  // "CPU"; empty: taken from the name
};

struct PlacerOptions {
  bool allow_soft_placement = false;
  // Print "node: (Op): /job:.../device:CPU:0" to stderr for every node, once
  // per Run.
  bool log_device_placement = false;
  // Partial spec preferred for what requests leave open, e.g.
  // "/job:localhost/replica:0/task:0".
  std::string default_device;
  // Stateful nodes (variables, queues) that earlier steps of the session
  // placed, by name: each stays on that device with its colocation group,
  // since its state lives there (TensorFlow keeps them the same way). A
  // group that cannot run there is InvalidArgument, never a silent move.
  absl::flat_hash_map<std::string, std::string> pinned;
};

struct Placement {
  std::string device;  // full name
  std::string reason;  // e.g. "colocated with 'v' (reference edge)"
};

class Placer {
 public:
  Placer(Graph* graph, std::vector<DeviceAttributes> devices, PlacerOptions options);
  ~Placer();
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  // Assigns every node (Node::set_assigned_device_name) and records its
  // Placement; InvalidArgument when that is impossible or a name is malformed.
  absl::Status Run();
  // By node name; filled by a successful Run.
  const absl::flat_hash_map<std::string, Placement>& placements() const { return placements_; }
  // The chain of constraints behind one node's placement, multi-line and
  // human-readable (also after a failed Run, as far as it got).
  std::string Explain(absl::string_view node) const;

 private:
  struct Link;
  struct NodeState;
  struct Group;
  struct Dev {
    DeviceAttributes attrs;
    ParsedDeviceName parsed;
  };

  // The passes of Run, in order.
  absl::Status ParseDevices();
  absl::Status ParseRequests();
  void ColocateReferenceAndResourceEdges();
  absl::Status ColocateByClassAttr();
  void BuildGroups();
  absl::Status MergeGroupRequests(Group& group);
  void FindKernelTypes(Group& group);
  void OrientGroups();
  absl::Status AssignDevices();
  void RecordPlacements();

  // Union-find over node ids; `joiner`'s edge or attr is `why` they share a device.
  int Find(int id);
  void Union(Node* joiner, Node* other, const std::string& why);
  // Assignment.
  absl::Status AssignGroup(Group& group, Node* trigger);
  bool TryFollow(Node* node, Node* leader, const std::string& reason);
  std::vector<int> Candidates(const ParsedDeviceName& spec, const Group& group) const;
  int BestCandidate(const std::vector<int>& candidates) const;
  // Explanations.
  absl::Status ImpossiblePlacement(const Group& group, Node* trigger) const;
  const Node* GroupAnchor(const Group& group) const;  // first member whose request counts
  std::string NodeReason(const Node* node) const;
  std::string DescribeGroup(const Group& group, absl::string_view indent) const;
  std::string DescribeDevices() const;
  // Whether some device matches `request` (its job and task alone under
  // soft placement).
  bool NamesADevice(const ParsedDeviceName& request) const;
  // " (did you mean '/job:ps'?)" for a job that does not exist but one close
  // to it does; the jobs, or a job's tasks, when the request names neither.
  std::string Suggestion(const ParsedDeviceName& request) const;
  std::string DescribeKernels(const Group& group) const;

  Graph* const graph_;
  std::vector<Dev> devices_;               // sorted by name (job, replica, task, type, id)
  std::vector<std::string> device_types_;  // GPU, CPU, then the rest by name
  const PlacerOptions options_;
  ParsedDeviceName default_spec_;
  std::vector<NodeState> nodes_;  // by node id
  std::vector<Group> groups_;
  bool ran_ = false;
  absl::flat_hash_map<std::string, Placement> placements_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_PLACER_H_
