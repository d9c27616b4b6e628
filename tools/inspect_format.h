// The renderings of a tg_inspect Inspection: aligned text tables, one JSON
// object, and a Graphviz DOT graph.
//
//   std::cout << FormatPlacementTable(inspection) << "\n"
//             << FormatPartitionSummary(inspection);
//
//   Placement of 10 nodes on 3 devices:
//   NODE  OP          REQUESTED       ASSIGNED                               REASON
//   x     VariableV2  /job:ps/task:0  /job:ps/replica:0/task:0/device:CPU:0  explicit request ...
#ifndef TENSORGRID_TOOLS_INSPECT_FORMAT_H_
#define TENSORGRID_TOOLS_INSPECT_FORMAT_H_

#include <string>

#include "tools/inspect_lib.h"

namespace tensorgrid {
namespace tg_inspect {

// A title line and an aligned table, ending in a newline. Placement: NODE OP
// REQUESTED ASSIGNED REASON ("-" for no request). Partitions: TASK ADDRESS
// DEVICE NODES SENDS RECVS BYTES_OUT BYTES_IN, one row per device ("?" for an
// unknown size; tasks with several devices get a "total" row). Transfers:
// TENSOR FROM TO DTYPE SHAPE BYTES, or "No transfers: ...".
std::string FormatPlacementTable(const Inspection& inspection);
std::string FormatPartitionSummary(const Inspection& inspection);
std::string FormatTransfers(const Inspection& inspection);

// {"placement":[{"node","op","requested","assigned","reason"}...],
//  "partitions":[{"task","address","device","nodes","sends","recvs","bytes",
//                 "bytes_sent","bytes_received"}...],
//  "transfers":[{"tensor","send","recv","from","to","dtype","shape","bytes"}...]}
// "bytes" of a partition is sent plus received; unknown sizes are null.
std::string InspectionToJson(const Inspection& inspection);

// Graphviz DOT: one `subgraph cluster_*` per device that has nodes, filled
// with its task's color; inside, the partition's nodes with their data
// (solid) and control (dotted) edges; between clusters, a dashed edge from
// each _Send to its _Recv labelled with the tensor and its size.
std::string InspectionToDot(const Inspection& inspection);

}  // namespace tg_inspect
}  // namespace tensorgrid

#endif  // TENSORGRID_TOOLS_INSPECT_FORMAT_H_
