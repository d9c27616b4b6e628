#include "core/graph/partition.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_replace.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

std::string InputName(const Node& src, int port) {
  return port == 0 ? src.name() : absl::StrCat(src.name(), ":", port);
}

// "…/device:CPU:1" -> "CPU_1", for readable node names.
std::string ShortDevice(const std::string& device) {
  size_t pos = device.rfind("/device:");
  std::string s = pos == std::string::npos ? device : device.substr(pos + 8);
  return absl::StrReplaceAll(s, {{":", "_"}, {"/", "_"}});
}

class Partitioner {
 public:
  Partitioner(const Graph& graph, const PartitionOptions& options,
              std::map<std::string, GraphDef>* out)
      : graph_(graph), options_(options), out_(out) {}

  absl::Status Run() {
    for (Node* n : graph_.nodes()) {
      if (n->assigned_device_name().empty()) {
        return errors::InvalidArgument("cannot partition: node '", n->name(), "' (", n->op(),
                                       ") has no assigned device");
      }
    }
    // Copy nodes, then inputs in port order so data inputs precede control ones.
    absl::flat_hash_map<const Node*, NodeDef*> defs;
    for (Node* n : graph_.nodes()) {
      NodeDef* def = Part(*n).add_node();
      *def = n->def();
      def->clear_input();
      def->set_device(n->assigned_device_name());
      defs[n] = def;
    }
    for (Node* n : graph_.nodes()) {
      std::vector<const Edge*> data(n->num_inputs(), nullptr);
      std::vector<const Edge*> control;
      for (const Edge* e : n->in_edges()) {
        if (e->IsControlEdge()) {
          control.push_back(e);
        } else {
          data[e->dst_input] = e;
        }
      }
      NodeDef* def = defs[n];
      for (const Edge* e : data) {
        if (e == nullptr) return errors::Internal("node '", n->name(), "' has an unwired input");
        def->add_input(Loc(*e->src) == Loc(*n) ? InputName(*e->src, e->src_output)
                                               : DataRecv(*e->src, e->src_output, *n));
      }
      // Control edges from another partition: one signal per source
      // partition, however many of its nodes `n` waits for.
      std::vector<std::pair<std::string, std::vector<const Node*>>> remote;
      for (const Edge* e : control) {
        const std::string loc = Loc(*e->src);
        if (loc == Loc(*n)) {
          def->add_input("^" + e->src->name());
          continue;
        }
        auto it = std::find_if(remote.begin(), remote.end(),
                               [&](const auto& group) { return group.first == loc; });
        if (it == remote.end()) it = remote.insert(remote.end(), {loc, {}});
        it->second.push_back(e->src);
      }
      for (auto& [loc, srcs] : remote) def->add_input("^" + ControlRecv(srcs, *n));
    }
    return absl::OkStatus();
  }

 private:
  std::string Loc(const Node& n) const { return options_.node_to_loc(n); }
  GraphDef& Part(const Node& n) { return Part(Loc(n)); }
  GraphDef& Part(const std::string& loc) {
    GraphDef& g = (*out_)[loc];
    *g.mutable_versions() = graph_.versions();
    return g;
  }

  std::string UniqueName(const std::string& base) {
    std::string name = base;
    for (int i = 1; graph_.FindNode(name) != nullptr || used_.count(name); ++i) {
      name = absl::StrCat(base, "_", i);
    }
    used_.insert(name);
    return name;
  }

  // Adds a _Send of `send_input` (in src's partition, on its device) /
  // _Recv (in dst's) pair, named after `name` and `tag`; returns the recv
  // name.
  std::string AddTransfer(const Node& src, const std::string& name, const std::string& send_input,
                          DataType type, const std::string& tag, const Node& dst) {
    const std::string& src_dev = src.assigned_device_name();
    const std::string& dst_dev = dst.assigned_device_name();
    const std::string tensor_name = UniqueName(absl::StrCat("edge_", name, "_", tag));
    auto common = [&](NodeDef* def) {
      def->set_device(def->op() == "_Send" ? src_dev : dst_dev);
      SetAttr(def, "tensor_name", tensor_name);
      SetAttr(def, "send_device", src_dev);
      SetAttr(
          def, "send_device_incarnation",
          static_cast<int64_t>(options_.get_incarnation ? options_.get_incarnation(src_dev) : 0));
      SetAttr(def, "recv_device", dst_dev);
      SetAttr(def, "client_terminated", false);
    };
    NodeDef* send = Part(src).add_node();
    send->set_name(
        UniqueName(absl::StrCat("_send_", name, "_", tag, "_to_", ShortDevice(dst_dev))));
    send->set_op("_Send");
    send->add_input(send_input);
    SetAttr(send, "T", type);
    common(send);
    NodeDef* recv = Part(dst).add_node();
    recv->set_name(
        UniqueName(absl::StrCat("_recv_", name, "_", tag, "_on_", ShortDevice(dst_dev))));
    recv->set_op("_Recv");
    SetAttr(recv, "tensor_type", type);
    common(recv);
    return recv->name();
  }

  std::string DataRecv(const Node& src, int port, const Node& dst) {
    auto key = std::make_tuple(&src, port, Loc(dst));
    auto it = recvs_.find(key);
    if (it != recvs_.end()) return it->second;
    std::string recv = AddTransfer(src, src.name(), InputName(src, port),
                                   RemoveRefType(src.output_type(port)), std::to_string(port), dst);
    recvs_[key] = recv;
    return recv;
  }

  // The signal that every node of `srcs` (all in one partition) has run,
  // received in dst's partition: a tiny Const there control-dependent on
  // them, sent once per (sources, destination partition).
  std::string ControlRecv(const std::vector<const Node*>& srcs, const Node& dst) {
    std::vector<std::string> names;
    for (const Node* src : srcs) names.push_back(src->name());
    std::sort(names.begin(), names.end());
    auto key = std::make_pair(std::move(names), Loc(dst));
    auto it = control_recvs_.find(key);
    if (it != control_recvs_.end()) return it->second;
    const Node& first = *srcs.front();
    const std::string name =
        srcs.size() == 1 ? first.name() : absl::StrCat("deps_of_", dst.name());
    NodeDef* dummy = Part(first).add_node();
    dummy->set_name(UniqueName(absl::StrCat("_control_", name)));
    dummy->set_op("Const");
    dummy->set_device(first.assigned_device_name());
    for (const Node* src : srcs) dummy->add_input("^" + src->name());
    SetAttr(dummy, "dtype", DT_FLOAT);
    SetAttr(dummy, "value", Tensor(DT_FLOAT, TensorShape({0})));
    std::string recv = AddTransfer(first, name, dummy->name(), DT_FLOAT, "control", dst);
    control_recvs_[key] = recv;
    return recv;
  }

  const Graph& graph_;
  const PartitionOptions& options_;
  std::map<std::string, GraphDef>* out_;
  absl::flat_hash_set<std::string> used_;
  std::map<std::tuple<const Node*, int, std::string>, std::string> recvs_;
  // (the sources' names, sorted; the destination partition) -> the recv.
  std::map<std::pair<std::vector<std::string>, std::string>, std::string> control_recvs_;
};

}  // namespace

absl::Status Partition(const Graph& graph, const PartitionOptions& options,
                       std::map<std::string, GraphDef>* partitions) {
  partitions->clear();
  return Partitioner(graph, options, partitions).Run();
}

}  // namespace tensorgrid
