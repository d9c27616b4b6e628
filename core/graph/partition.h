// Partition: cuts a placed graph into one GraphDef per location (a device,
// or a task for the distributed master) and joins the cuts with _Send/_Recv
// pairs.
//
// Each data edge whose ends lie in different partitions becomes a _Send in
// the source's partition and a _Recv in the destination's, one pair per
// (source output, destination partition) however many consumers there are
// there. Control edges that cross partitions are carried by a tiny dummy
// tensor: a Const in the source partition, control-dependent on every node
// there that the destination waits for, sent to a _Recv that the
// destination waits on. So a node that waits for many nodes of another
// partition (an optimizer's update NoOp on a worker, waiting for the apply
// ops on a ps) costs a step one transfer, not one per node. Nodes keep their names;
// added nodes get readable unique names (_send_x_0_to_CPU_1, ...).
#ifndef TENSORGRID_CORE_GRAPH_PARTITION_H_
#define TENSORGRID_CORE_GRAPH_PARTITION_H_

#include <functional>
#include <map>
#include <string>

#include "core/graph/graph.h"
#include "proto/graph.pb.h"

namespace tensorgrid {

struct PartitionOptions {
  // The partition a node belongs to (e.g. its assigned device name).
  std::function<std::string(const Node&)> node_to_loc;
  // Incarnation of a device, for rendezvous keys.
  std::function<uint64_t(const std::string& device)> get_incarnation;
};

// Every node must have an assigned device. InvalidArgument otherwise.
absl::Status Partition(const Graph& graph, const PartitionOptions& options,
                       std::map<std::string, GraphDef>* partitions);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_GRAPH_PARTITION_H_
