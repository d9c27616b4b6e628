#include "tools/inspect_lib.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/device_name.h"
#include "core/framework/shape_inference.h"
#include "core/graph/graph.h"
#include "core/graph/partition.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/proto_text.h"
#include "tools/flags.h"

namespace tensorgrid {
namespace tg_inspect {

namespace {

// ---------------------------------------------------------------------------
// Flags

const std::vector<tools::Flag>& FlagTable() {
  // Every flag is repeatable: a repeated flag takes the last value, except
  // --devices, whose lists accumulate.
  static const auto* table = new std::vector<tools::Flag>{
      {"graph", "FILE", true,
       "GraphDef; *.pbtxt, *.pbtx, *.txt are text, others\n"
       "binary (binary falls back to text)"},
      {"cluster", "SPEC", true,
       "\"ps=host:port;worker=host:port,host:port\": jobs by\n"
       "';', tasks by ','; task i of job J is\n"
       "/job:J/replica:0/task:i"},
      {"devices_per_task", "LIST", true, "devices of every task (default CPU:1), e.g. CPU:2,GPU:1"},
      {"devices", "NAME,...", true,
       "an explicit device list of full names instead\n"
       "(default: /job:localhost/replica:0/task:0/device:CPU:0)"},
      {"default_device", "SPEC", true,
       "where unconstrained nodes go (default: the first\n"
       "worker task if there is a worker job, else the\n"
       "first task)"},
      {"allow_soft_placement", "", true, "drop an unsatisfiable device type/id instead of failing"},
      {"json", "", true,
       "one JSON object {\"placement\":[...],\"partitions\":[...],\n"
       "\"transfers\":[...]} instead of the tables"},
      {"explain", "NODE", true, "the chain of constraints behind one node's placement"},
      {"dot", "FILE", true,
       "write a Graphviz DOT graph: one cluster per device,\n"
       "colored by task, Send->Recv edges dashed; also\n"
       "FILE.svg when Graphviz's `dot` is on PATH"},
      {"trace", "FILE", true,
       "convert a saved RunMetadata (binary or text) to\n"
       "Chrome trace JSON (chrome://tracing, ui.perfetto.dev)"},
      {"out", "FILE", true, "where --trace writes (default stdout)"},
      {"checkpoint", "PREFIX", true,
       "list a checkpoint's tensors (name, dtype, shape, bytes),\n"
       "TensorFlow's or ours: PREFIX.index and its data files"},
      {"tensor", "NAME", true, "with --checkpoint: print that tensor's values"},
      {"feed_shapes", "NAME=DIMS;...", true,
       "shapes fed to placeholders, e.g. \"images=32,784;labels=32\"\n"
       "(-1 for an unknown dimension; NAME= for a scalar), so\n"
       "that the transfers they reach have sizes"},
  };
  return *table;
}

// "images=32,784;labels=32;lr=" -> {images: [32,784], labels: [32], lr: []}.
absl::Status ParseFeedShapes(absl::string_view value,
                             std::map<std::string, PartialTensorShape>* shapes) {
  for (absl::string_view entry : absl::StrSplit(value, ';', absl::SkipEmpty())) {
    const size_t eq = entry.find('=');
    const absl::string_view name = entry.substr(0, eq);
    if (eq == absl::string_view::npos || name.empty()) {
      return errors::InvalidArgument("--feed_shapes: '", entry, "' is not NAME=DIMS");
    }
    std::vector<int64_t> dims;
    for (absl::string_view d : absl::StrSplit(entry.substr(eq + 1), ',', absl::SkipEmpty())) {
      int64_t size = 0;
      if (!absl::SimpleAtoi(d, &size) || size < -1) {
        return errors::InvalidArgument("--feed_shapes: dimension '", d, "' of '", name,
                                       "' is not a size or -1");
      }
      dims.push_back(size);
    }
    (*shapes)[std::string(name)] = PartialTensorShape(dims);
  }
  return absl::OkStatus();
}

absl::Status ApplyFlag(const tools::FlagValue& flag, Options* options) {
  const std::string& name = flag.name;
  const std::string& value = flag.value;
  if (name == "json" || name == "allow_soft_placement") {
    (name == "json" ? options->json : options->allow_soft_placement) = value == "true";
    return absl::OkStatus();
  }
  if (name == "graph") options->graph_path = value;
  if (name == "cluster") options->cluster = value;
  if (name == "devices_per_task") options->devices_per_task = value;
  if (name == "default_device") options->default_device = value;
  if (name == "explain") options->explain = value;
  if (name == "dot") options->dot_path = value;
  if (name == "trace") options->trace_path = value;
  if (name == "out") options->out_path = value;
  if (name == "checkpoint") options->checkpoint = value;
  if (name == "tensor") options->tensor = value;
  if (name == "devices") TG_RETURN_IF_ERROR(tools::AppendCommaList(flag, &options->devices));
  if (name == "feed_shapes") TG_RETURN_IF_ERROR(ParseFeedShapes(value, &options->feed_shapes));
  if (value.empty() && name != "default_device" && name != "devices_per_task") {
    return errors::InvalidArgument("flag '--", name, "' needs a non-empty value");
  }
  return absl::OkStatus();
}

absl::Status CheckCombination(const Options& o) {
  if (!o.checkpoint.empty()) {
    if (!o.graph_path.empty() || !o.trace_path.empty() || !o.cluster.empty() ||
        !o.devices.empty() || !o.explain.empty() || !o.dot_path.empty() || o.json ||
        !o.out_path.empty()) {
      return errors::InvalidArgument(
          "--checkpoint inspects a checkpoint and takes only --tensor; inspect a graph or a "
          "trace in a separate call");
    }
    return absl::OkStatus();
  }
  if (!o.tensor.empty()) return errors::InvalidArgument("--tensor applies to --checkpoint only");
  if (!o.trace_path.empty()) {
    if (!o.graph_path.empty() || !o.cluster.empty() || !o.devices.empty() || !o.explain.empty() ||
        !o.dot_path.empty() || o.json) {
      return errors::InvalidArgument(
          "--trace converts a saved RunMetadata and takes only --out; inspect a graph in a "
          "separate call");
    }
    return absl::OkStatus();
  }
  if (o.graph_path.empty()) {
    return errors::InvalidArgument("give --graph=FILE (or --trace=FILE, or --checkpoint=PREFIX)");
  }
  if (!o.out_path.empty()) return errors::InvalidArgument("--out applies to --trace only");
  if (!o.cluster.empty() && !o.devices.empty()) {
    return errors::InvalidArgument("give either --cluster or --devices, not both");
  }
  if (!o.devices_per_task.empty() && o.cluster.empty()) {
    return errors::InvalidArgument("--devices_per_task applies to --cluster");
  }
  if (!o.explain.empty() && o.json) {
    return errors::InvalidArgument("--explain prints text; drop --json");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Shapes

using ShapeMap = absl::flat_hash_map<const Node*, std::vector<PartialTensorShape>>;

// Checks `fed` against the nodes they name: each must exist, and its first
// output's inferred shape (a Placeholder's declared one) must allow the fed one.
absl::Status CheckFeedShapes(const Graph& graph, const ShapeMap& inferred,
                             const std::map<std::string, PartialTensorShape>& fed) {
  for (const auto& [name, shape] : fed) {
    const Node* n = graph.FindNode(name);
    if (n == nullptr || n->num_outputs() == 0) {
      return errors::InvalidArgument("--feed_shapes names '", name,
                                     "', which is not a node of the graph with an output");
    }
    const PartialTensorShape& declared = inferred.at(n)[0];
    if (declared.unknown_rank()) continue;
    bool fits = declared.dims() == shape.dims();
    for (int d = 0; fits && d < shape.dims(); ++d) {
      fits = declared.dim_size(d) < 0 || shape.dim_size(d) < 0 ||
             declared.dim_size(d) == shape.dim_size(d);
    }
    if (!fits) {
      return errors::InvalidArgument("--feed_shapes gives '", name, "' the shape ",
                                     shape.DebugString(), ", but its shape is ",
                                     declared.DebugString());
    }
  }
  return absl::OkStatus();
}

// Runs every op's shape function in topological order; outputs of ops
// without one (or whose function fails) stay unknown. A node in `fed` has
// that shape on its first output instead.
ShapeMap InferShapes(const Graph& graph, const std::map<std::string, PartialTensorShape>& fed) {
  ShapeMap shapes;
  absl::StatusOr<std::vector<Node*>> order = TopologicalSort(graph);
  if (!order.ok()) return shapes;
  for (const Node* n : *order) {
    std::vector<PartialTensorShape>& out = shapes[n];
    out.assign(n->num_outputs(), PartialTensorShape());
    if (auto it = fed.find(n->name()); it != fed.end() && n->num_outputs() > 0) {
      out[0] = it->second;
      continue;
    }
    if (n->op_def() == nullptr || !n->op_def()->shape_fn) continue;
    std::vector<PartialTensorShape> inputs(n->num_inputs());
    std::vector<std::optional<Tensor>> constants(n->num_inputs());
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Edge* e = n->input_edge(i);
      if (e == nullptr) continue;
      const std::vector<PartialTensorShape>& src = shapes[e->src];
      if (e->src_output < static_cast<int>(src.size())) inputs[i] = src[e->src_output];
      constants[i] = InferenceConstant(e->src->def(), e->src_output);
    }
    ShapeInferenceContext ctx(n->def(), std::move(inputs), n->num_outputs(), std::move(constants));
    if (!n->op_def()->shape_fn(ctx).ok()) continue;
    for (int i = 0; i < n->num_outputs(); ++i) out[i] = ctx.output(i);
  }
  return shapes;
}

int64_t BytesOf(DataType dtype, const PartialTensorShape& shape) {
  const int size = DataTypeSize(dtype);
  if (size == 0 || !shape.IsFullyDefined()) return -1;
  int64_t elements = 1;
  for (int d = 0; d < shape.dims(); ++d) elements *= shape.dim_size(d);
  return elements * size;
}

// ---------------------------------------------------------------------------
// Partitions

// Fills `transfer` from a _Send and what it sends: a tensor of the graph, or
// Partition's dummy Const for a control edge.
void DescribeSend(const NodeDef& send, const Graph& graph, const ShapeMap& shapes,
                  const absl::flat_hash_map<std::string, const NodeDef*>& partition_nodes,
                  Transfer* t) {
  t->send_node = send.name();
  GetNodeAttr(send, "tensor_name", &t->tensor_name).IgnoreError();
  GetNodeAttr(send, "send_device", &t->send_device).IgnoreError();
  GetNodeAttr(send, "recv_device", &t->recv_device).IgnoreError();
  GetNodeAttr(send, "T", &t->dtype).IgnoreError();
  PartialTensorShape shape;
  std::string src;
  int port = 0;
  if (send.input_size() > 0 && ParseTensorName(send.input(0), &src, &port).ok()) {
    const Node* node = graph.FindNode(src);
    if (node != nullptr) {
      t->tensor = absl::StrCat(src, ":", port);
      auto it = shapes.find(node);
      if (it != shapes.end() && port < static_cast<int>(it->second.size()))
        shape = it->second[port];
    } else if (auto it = partition_nodes.find(src); it != partition_nodes.end()) {
      // The Const carrying control edges: "^x", or "^x +7" when it stands for
      // eight nodes that one destination waits for.
      const NodeDef& dummy = *it->second;
      std::vector<std::string> waited;
      for (const std::string& in : dummy.input()) {
        if (absl::StartsWith(in, "^")) waited.push_back(in);
      }
      t->tensor = waited.empty() ? src : waited.front();
      if (waited.size() > 1) absl::StrAppend(&t->tensor, " +", waited.size() - 1);
      Tensor value;
      if (GetNodeAttr(dummy, "value", &value).ok()) {
        shape = PartialTensorShape(value.shape().dim_sizes());
      }
    }
  }
  t->shape = shape.DebugString();
  t->bytes = BytesOf(t->dtype, shape);
}

std::vector<Transfer> CollectTransfers(const Graph& graph, const ShapeMap& shapes,
                                       const std::map<std::string, GraphDef>& partitions) {
  absl::flat_hash_map<std::string, const NodeDef*> nodes;
  absl::flat_hash_map<std::string, std::string> recv_by_tensor;
  for (const auto& [device, def] : partitions) {
    for (const NodeDef& n : def.node()) {
      nodes[n.name()] = &n;
      std::string tensor_name;
      if (n.op() == "_Recv" && GetNodeAttr(n, "tensor_name", &tensor_name).ok()) {
        recv_by_tensor[tensor_name] = n.name();
      }
    }
  }
  std::vector<Transfer> transfers;
  for (const auto& [device, def] : partitions) {
    for (const NodeDef& n : def.node()) {
      if (n.op() != "_Send") continue;
      Transfer t;
      DescribeSend(n, graph, shapes, nodes, &t);
      auto it = recv_by_tensor.find(t.tensor_name);
      if (it != recv_by_tensor.end()) t.recv_node = it->second;
      transfers.push_back(std::move(t));
    }
  }
  std::sort(transfers.begin(), transfers.end(), [](const Transfer& a, const Transfer& b) {
    if (a.send_device != b.send_device)
      return DeviceNameUtils::CompareFullNames(a.send_device, b.send_device);
    return a.send_node < b.send_node;
  });
  return transfers;
}

void AddBytes(int64_t bytes, int64_t* total) {
  if (*total < 0) return;
  *total = bytes < 0 ? -1 : *total + bytes;
}

std::vector<PartitionSummary> Summarize(const Graph& graph, std::vector<std::string> devices,
                                        const std::map<std::string, GraphDef>& partitions,
                                        const std::vector<Transfer>& transfers,
                                        const std::map<std::string, std::string>& addresses) {
  std::sort(devices.begin(), devices.end(), DeviceNameUtils::CompareFullNames);
  std::vector<PartitionSummary> out;
  for (const std::string& device : devices) {
    PartitionSummary s;
    s.device = device;
    absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(device);
    if (parsed.ok()) s.task = DeviceNameUtils::TaskName(*parsed);
    auto address = addresses.find(s.task);
    if (address != addresses.end()) s.address = address->second;
    auto it = partitions.find(device);
    if (it != partitions.end()) {
      for (const NodeDef& n : it->second.node()) {
        s.nodes += graph.FindNode(n.name()) != nullptr;
        s.sends += n.op() == "_Send";
        s.recvs += n.op() == "_Recv";
      }
    }
    for (const Transfer& t : transfers) {
      if (t.send_device == device) AddBytes(t.bytes, &s.bytes_sent);
      if (t.recv_device == device) AddBytes(t.bytes, &s.bytes_received);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------

absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args) {
  Options options;
  TG_ASSIGN_OR_RETURN(options.help,
                      tools::ParseArgs(FlagTable(), args, [&](const tools::FlagValue& flag) {
                        return ApplyFlag(flag, &options);
                      }));
  if (options.help) return options;
  TG_RETURN_IF_ERROR(CheckCombination(options));
  return options;
}

std::string Usage() {
  return R"(usage: tg_inspect --graph=FILE [--cluster=SPEC [--devices_per_task=CPU:2,GPU:1]
                  | --devices=NAME,...] [--default_device=SPEC] [--allow_soft_placement]
                  [--json] [--explain=NODE] [--dot=FILE]
       tg_inspect --trace=RUN_METADATA [--out=FILE]
       tg_inspect --checkpoint=PREFIX [--tensor=NAME]

Places a GraphDef on a device set with the same Placer and Partition the master
uses (the whole graph: no feeds, fetches or pruning) and prints where every
node went and why, then one row per device: nodes, Sends, Recvs and the bytes
they move per step ("?" when a shape is not known statically), then every
transfer.

)" + tools::FlagsHelp(FlagTable()) +
         R"(
Exit status: 0 on success, 1 when the graph cannot be loaded or placed
("error: CODE: message" on stderr), 2 for bad flags.
)";
}

absl::StatusOr<std::vector<Job>> ParseCluster(absl::string_view cluster) {
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (absl::string_view entry : absl::StrSplit(cluster, ';')) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t eq = entry.find('=');
    if (entry.empty() || eq == absl::string_view::npos) {
      return errors::InvalidArgument("cluster '", cluster,
                                     "': expected JOB=host:port[,host:port...] "
                                     "for each job (jobs separated by ';'), got '",
                                     entry, "'");
    }
    Job job;
    job.name = std::string(absl::StripAsciiWhitespace(entry.substr(0, eq)));
    if (job.name.empty() || !DeviceNameUtils::Parse(absl::StrCat("/job:", job.name)).ok() ||
        job.name.find('/') != std::string::npos) {
      return errors::InvalidArgument("cluster '", cluster, "': '", job.name,
                                     "' is not a valid job name");
    }
    if (!seen.insert(job.name).second) {
      return errors::InvalidArgument("cluster '", cluster, "': job '", job.name,
                                     "' is given twice");
    }
    for (absl::string_view address : absl::StrSplit(entry.substr(eq + 1), ',')) {
      address = absl::StripAsciiWhitespace(address);
      if (address.empty()) {
        return errors::InvalidArgument("cluster '", cluster, "': job '", job.name,
                                       "' has an empty task address");
      }
      job.addresses.emplace_back(address);
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

absl::StatusOr<std::vector<DeviceAttributes>> ClusterDevices(absl::string_view cluster,
                                                             absl::string_view devices_per_task) {
  TG_ASSIGN_OR_RETURN(std::vector<Job> jobs, ParseCluster(cluster));
  std::vector<std::pair<std::string, int>> kinds;
  for (absl::string_view item :
       absl::StrSplit(devices_per_task.empty() ? "CPU:1" : devices_per_task, ',')) {
    item = absl::StripAsciiWhitespace(item);
    const size_t colon = item.rfind(':');
    int count = 0;
    std::string type =
        absl::AsciiStrToUpper(item.substr(0, colon == absl::string_view::npos ? 0 : colon));
    if (colon == absl::string_view::npos || type.empty() ||
        !absl::SimpleAtoi(item.substr(colon + 1), &count) || count < 1) {
      return errors::InvalidArgument("--devices_per_task='", devices_per_task,
                                     "': expected TYPE:COUNT items like CPU:2,GPU:1, got '", item,
                                     "'");
    }
    for (const auto& [t, n] : kinds) {
      if (t == type) {
        return errors::InvalidArgument("--devices_per_task='", devices_per_task, "': ", type,
                                       " is given twice");
      }
    }
    kinds.emplace_back(std::move(type), count);
  }
  std::vector<DeviceAttributes> devices;
  for (const Job& job : jobs) {
    for (size_t task = 0; task < job.addresses.size(); ++task) {
      for (const auto& [type, count] : kinds) {
        for (int id = 0; id < count; ++id) {
          devices.push_back(
              {DeviceNameUtils::FullName(job.name, 0, static_cast<int>(task), type, id), type});
        }
      }
    }
  }
  return devices;
}

absl::StatusOr<std::vector<DeviceAttributes>> ListedDevices(const std::vector<std::string>& names) {
  std::vector<DeviceAttributes> devices;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    TG_ASSIGN_OR_RETURN(ParsedDeviceName parsed, DeviceNameUtils::Parse(name));
    if (!parsed.IsFullySpecified()) {
      return errors::InvalidArgument(
          "--devices: '", name,
          "' is not a full device name (/job:J/replica:R/task:T/device:TYPE:ID)");
    }
    std::string full = DeviceNameUtils::ToString(parsed);
    if (!seen.insert(full).second) {
      return errors::InvalidArgument("--devices: '", name, "' is given twice");
    }
    devices.push_back({std::move(full), parsed.type});
  }
  return devices;
}

absl::StatusOr<std::vector<DeviceAttributes>> DevicesFromOptions(const Options& options) {
  if (!options.cluster.empty()) return ClusterDevices(options.cluster, options.devices_per_task);
  if (!options.devices.empty()) return ListedDevices(options.devices);
  return std::vector<DeviceAttributes>{{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU"}};
}

std::string DefaultDevice(const std::vector<DeviceAttributes>& devices) {
  std::vector<std::string> names;
  for (const DeviceAttributes& d : devices) names.push_back(d.name);
  std::sort(names.begin(), names.end(), DeviceNameUtils::CompareFullNames);
  std::string first;
  for (const std::string& name : names) {
    absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(name);
    if (!parsed.ok()) continue;
    if (parsed->job == "worker") return DeviceNameUtils::TaskName(*parsed);
    if (first.empty()) first = DeviceNameUtils::TaskName(*parsed);
  }
  return first;
}

std::map<std::string, std::string> TaskAddresses(const std::vector<Job>& jobs) {
  std::map<std::string, std::string> out;
  for (const Job& job : jobs) {
    for (size_t i = 0; i < job.addresses.size(); ++i) {
      out[absl::StrCat("/job:", job.name, "/replica:0/task:", i)] = job.addresses[i];
    }
  }
  return out;
}

absl::StatusOr<Inspection> Inspect(const GraphDef& graph_def,
                                   const std::vector<DeviceAttributes>& devices,
                                   const PlacerOptions& options,
                                   const std::map<std::string, std::string>& addresses,
                                   const std::map<std::string, PartialTensorShape>& feed_shapes) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportGraphDef(graph_def));
  Placer placer(graph.get(), devices, options);
  TG_RETURN_IF_ERROR(placer.Run());

  Inspection inspection;
  for (const Node* n : graph->nodes()) {
    const Placement& p = placer.placements().at(n->name());
    inspection.placement.push_back({n->name(), n->op(), n->requested_device(), p.device, p.reason});
  }
  PartitionOptions partition;
  partition.node_to_loc = [](const Node& n) { return n.assigned_device_name(); };
  TG_RETURN_IF_ERROR(Partition(*graph, partition, &inspection.partition_graphs));

  TG_RETURN_IF_ERROR(CheckFeedShapes(*graph, InferShapes(*graph, {}), feed_shapes));
  const ShapeMap shapes = InferShapes(*graph, feed_shapes);
  inspection.transfers = CollectTransfers(*graph, shapes, inspection.partition_graphs);
  std::vector<std::string> names;
  for (const DeviceAttributes& d : devices) names.push_back(d.name);
  inspection.partitions =
      Summarize(*graph, names, inspection.partition_graphs, inspection.transfers, addresses);
  return inspection;
}

absl::StatusOr<Explanation> ExplainPlacement(const GraphDef& graph_def,
                                             const std::vector<DeviceAttributes>& devices,
                                             const PlacerOptions& options, absl::string_view node) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportGraphDef(graph_def));
  if (graph->FindNode(node) == nullptr) {
    return errors::NotFound("--explain: the graph has no node named '", node, "'");
  }
  Placer placer(graph.get(), devices, options);
  Explanation out;
  out.placement = placer.Run();
  out.text = placer.Explain(node);
  return out;
}

absl::StatusOr<RunMetadata> LoadRunMetadata(const std::string& path) {
  TG_ASSIGN_OR_RETURN(const std::string content, ReadFileToString(path, "RunMetadata file"));
  RunMetadata metadata;
  std::string text_error;
  if (HasTextProtoExtension(path)) {
    if (!ParseTextProto(content, &metadata, &text_error)) {
      return errors::InvalidArgument("cannot parse '", path,
                                     "' as a text RunMetadata: ", text_error);
    }
  } else if (!metadata.ParseFromString(content) || metadata.ByteSizeLong() == 0) {
    metadata.Clear();
    if (!ParseTextProto(content, &metadata, &text_error)) {
      return errors::InvalidArgument(
          "cannot parse '", path,
          "' as a RunMetadata: not a binary proto, and as text: ", text_error);
    }
  }
  if (metadata.step_stats().dev_stats_size() == 0) {
    return errors::InvalidArgument(
        "RunMetadata '", path,
        "' holds no step stats: run the step with RunOptions trace_level "
        "FULL_TRACE");
  }
  return metadata;
}

}  // namespace tg_inspect
}  // namespace tensorgrid
