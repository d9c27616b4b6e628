// The logic of the tg_inspect command-line tool, kept out of main() so that it
// can be unit tested: flags, the device set a cluster describes, placing and
// partitioning a GraphDef the way the master does, and the text, JSON and DOT
// renderings of the result (tools/inspect_format.h). Nothing here runs a graph.
//
//   TG_ASSIGN_OR_RETURN(std::vector<DeviceAttributes> devices,
//                       ClusterDevices("ps=h:2222;worker=h:2223,h:2224", "CPU:1"));
//   PlacerOptions placer;
//   placer.default_device = DefaultDevice(devices);  // "/job:worker/replica:0/task:0"
//   TG_ASSIGN_OR_RETURN(Inspection inspection, Inspect(graph_def, devices, placer));
//   std::cout << FormatPlacementTable(inspection);  // tools/inspect_format.h
//
// Transfer sizes come from static shape inference (Const values, Placeholder
// and Variable shapes, the ops' shape functions); a size that depends on
// something only known at run time is unknown (-1, printed "?").
#ifndef TENSORGRID_TOOLS_INSPECT_LIB_H_
#define TENSORGRID_TOOLS_INSPECT_LIB_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/tensor_shape.h"
#include "core/runtime/placer.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"

namespace tensorgrid {
namespace tg_inspect {

// The command line, after ParseFlags.
struct Options {
  std::string graph_path;             // --graph
  std::string cluster;                // --cluster="ps=h:p;worker=h:p,h:p"
  std::string devices_per_task;       // --devices_per_task=CPU:2,GPU:1 (with --cluster)
  std::vector<std::string> devices;   // --devices=full names, comma-separated
  std::string default_device;         // --default_device; empty: DefaultDevice()
  bool allow_soft_placement = false;  // --allow_soft_placement
  bool json = false;                  // --json
  std::string explain;                // --explain=NODE
  std::string dot_path;               // --dot=FILE
  std::string trace_path;             // --trace=FILE (a saved RunMetadata)
  std::string out_path;               // --out=FILE (with --trace; default stdout)
  std::string checkpoint;             // --checkpoint=PREFIX (tools/inspect_checkpoint.h)
  std::string tensor;                 // --tensor=NAME (with --checkpoint)
  // --feed_shapes="images=32,784;labels=32": the shapes fed to these nodes
  // (Placeholders), so that the transfers computed from them have sizes.
  std::map<std::string, PartialTensorShape> feed_shapes;
  bool help = false;  // --help / -h
};

// Parses the arguments after argv[0]. Flags take `--flag=value` or
// `--flag value`; --json and --allow_soft_placement take no value (or
// =true/=false). InvalidArgument for unknown flags, missing values, and
// combinations that make no sense (--cluster with --devices, --trace with
// --graph, --checkpoint with either, none of --graph, --trace and
// --checkpoint, --tensor without --checkpoint), unless --help.
absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args);

// The --help text.
std::string Usage();

// One job's tasks, with their addresses, from --cluster.
struct Job {
  std::string name;
  std::vector<std::string> addresses;  // task i is addresses[i]
};

// "ps=h:p;worker=h:p,h:p": jobs separated by ';', tasks by ','.
// InvalidArgument (quoting the spec) for an empty job or address, a job
// without '=', a malformed job name, or a job given twice.
absl::StatusOr<std::vector<Job>> ParseCluster(absl::string_view cluster);

// Every task of every job gets the devices of `devices_per_task`
// ("CPU:2,GPU:1": CPU:0, CPU:1 and GPU:0; "" means "CPU:1"); task i of job J
// is /job:J/replica:0/task:i.
absl::StatusOr<std::vector<DeviceAttributes>> ClusterDevices(absl::string_view cluster,
                                                             absl::string_view devices_per_task);

// Full device names, each fully specified and given once.
absl::StatusOr<std::vector<DeviceAttributes>> ListedDevices(const std::vector<std::string>& names);

// The device set the options describe: --cluster, --devices, or one local
// CPU (/job:localhost/replica:0/task:0/device:CPU:0).
absl::StatusOr<std::vector<DeviceAttributes>> DevicesFromOptions(const Options& options);

// The address space of the first worker task if there is a "worker" job,
// else of the first task ("/job:worker/replica:0/task:0"). "" for no devices.
std::string DefaultDevice(const std::vector<DeviceAttributes>& devices);

// Task address for a device's task ("localhost:2222"), from --cluster; empty
// when unknown. Keyed by "/job:J/replica:0/task:i".
std::map<std::string, std::string> TaskAddresses(const std::vector<Job>& jobs);

struct PlacementRow {
  std::string node, op;
  std::string requested;  // as written in the GraphDef ("" for none)
  std::string assigned;   // full device name
  std::string reason;     // the Placer's
};

// One cut edge: a _Send/_Recv pair.
struct Transfer {
  std::string tensor;  // what moves: "x:0", or "^x" for a control edge
  std::string send_node, recv_node, tensor_name;
  std::string send_device, recv_device;
  DataType dtype = DT_INVALID;
  std::string shape;   // "[2,2]", "[?,3]" or "<unknown>"
  int64_t bytes = -1;  // -1: not known statically
};

struct PartitionSummary {
  std::string task;     // "/job:ps/replica:0/task:0"
  std::string address;  // from --cluster, else ""
  std::string device;   // full name
  int nodes = 0;        // the graph's own nodes placed here (not _Send/_Recv)
  int sends = 0, recvs = 0;
  int64_t bytes_sent = 0, bytes_received = 0;  // -1 when any size is unknown
};

// A placed and partitioned graph.
struct Inspection {
  std::vector<PlacementRow> placement;               // in GraphDef order
  std::vector<PartitionSummary> partitions;          // every device, in device-name order
  std::vector<Transfer> transfers;                   // by sending device, then send node name
  std::map<std::string, GraphDef> partition_graphs;  // by device; devices with nodes only
};

// Places the whole graph (no feed/fetch rewrite or pruning) with the Placer
// and cuts it with Partition per device, as the master does. The Placer's
// error unchanged for an impossible placement; ImportGraphDef's for a bad graph.
// `addresses` (TaskAddresses) only labels the summary.
// `feed_shapes` (Options::feed_shapes) replace the shapes of those nodes'
// outputs before shapes are inferred: InvalidArgument for a name that is no
// node of the graph or a shape its own declared shape rules out.
absl::StatusOr<Inspection> Inspect(
    const GraphDef& graph, const std::vector<DeviceAttributes>& devices,
    const PlacerOptions& options, const std::map<std::string, std::string>& addresses = {},
    const std::map<std::string, PartialTensorShape>& feed_shapes = {});

// Placer::Explain for one node, and how placement went: the explanation is
// there also when placement fails (as far as the Placer got). NotFound when
// the graph has no such node.
struct Explanation {
  std::string text;
  absl::Status placement;
};
absl::StatusOr<Explanation> ExplainPlacement(const GraphDef& graph,
                                             const std::vector<DeviceAttributes>& devices,
                                             const PlacerOptions& options, absl::string_view node);

// A RunMetadata from a binary or text proto file (*.pbtxt, *.pbtx, *.txt are
// text; anything else binary, falling back to text). NotFound / InvalidArgument
// naming the file.
absl::StatusOr<RunMetadata> LoadRunMetadata(const std::string& path);

}  // namespace tg_inspect
}  // namespace tensorgrid

#endif  // TENSORGRID_TOOLS_INSPECT_LIB_H_
