#include "tools/inspect_format.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/framework/device_name.h"
#include "core/framework/types.h"
#include "core/platform/json.h"

namespace tensorgrid {
namespace tg_inspect {

namespace {

using Row = std::vector<std::string>;

// Columns padded to their widest cell; `right` columns (numbers) align right.
// No trailing spaces.
std::string AlignedTable(const Row& header, const std::vector<Row>& rows,
                         const std::vector<bool>& right) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const Row& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const Row& row) {
    std::string out;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c > 0) out += "  ";
      out += right[c] ? pad + row[c] : row[c] + pad;
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out = line(header);
  for (const Row& row : rows) out += line(row);
  return out;
}

std::string Bytes(int64_t bytes) { return bytes < 0 ? "?" : absl::StrCat(bytes); }
std::string JsonBytes(int64_t bytes) { return bytes < 0 ? "null" : absl::StrCat(bytes); }

int64_t SumBytes(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }

// "/job:ps/replica:0/task:0/device:CPU:0" -> "CPU:0".
std::string ShortDevice(const std::string& device) {
  absl::StatusOr<ParsedDeviceName> p = DeviceNameUtils::Parse(device);
  if (!p.ok() || !p->has_type || !p->has_id) return device;
  return absl::StrCat(p->type, ":", p->id);
}

std::string Plural(size_t n, absl::string_view what) {
  return absl::StrCat(n, " ", what, n == 1 ? "" : "s");
}

// Tasks in device order, each once.
std::vector<std::string> Tasks(const Inspection& inspection) {
  std::vector<std::string> tasks;
  for (const PartitionSummary& p : inspection.partitions) {
    if (std::find(tasks.begin(), tasks.end(), p.task) == tasks.end()) tasks.push_back(p.task);
  }
  return tasks;
}

std::string DotQuote(absl::string_view s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}),
                      "\"");
}

std::string ClusterId(const std::string& device) {
  std::string id = "cluster";
  for (char c : device) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (word) {
      id += c;
    } else if (id.back() != '_') {
      id += '_';
    }
  }
  return id;
}

// Light fills that stay readable behind black text, one per task.
constexpr const char* kTaskColors[] = {"#dae8fc", "#d5e8d4", "#ffe6cc", "#e1d5e7",
                                       "#fff2cc", "#f8cecc", "#d0f0f0", "#e6e6e6"};

}  // namespace

std::string FormatPlacementTable(const Inspection& inspection) {
  std::vector<Row> rows;
  std::vector<std::string> devices;
  for (const PlacementRow& p : inspection.placement) {
    rows.push_back({p.node, p.op, p.requested.empty() ? "-" : p.requested, p.assigned, p.reason});
    if (std::find(devices.begin(), devices.end(), p.assigned) == devices.end()) {
      devices.push_back(p.assigned);
    }
  }
  return absl::StrCat("Placement of ", Plural(rows.size(), "node"), " on ",
                      Plural(devices.size(), "device"), ":\n",
                      AlignedTable({"NODE", "OP", "REQUESTED", "ASSIGNED", "REASON"}, rows,
                                   {false, false, false, false, false}));
}

std::string FormatPartitionSummary(const Inspection& inspection) {
  const bool addresses = std::any_of(inspection.partitions.begin(), inspection.partitions.end(),
                                     [](const PartitionSummary& p) { return !p.address.empty(); });
  auto row = [&](const PartitionSummary& p, const std::string& device) {
    Row r = {p.task};
    if (addresses) r.push_back(p.address);
    for (std::string cell : {device, absl::StrCat(p.nodes), absl::StrCat(p.sends),
                             absl::StrCat(p.recvs), Bytes(p.bytes_sent), Bytes(p.bytes_received)}) {
      r.push_back(std::move(cell));
    }
    return r;
  };
  std::vector<Row> rows;
  int used = 0;
  const std::vector<std::string> tasks = Tasks(inspection);
  for (const std::string& task : tasks) {
    PartitionSummary total;
    int devices = 0;
    for (const PartitionSummary& p : inspection.partitions) {
      if (p.task != task) continue;
      rows.push_back(row(p, ShortDevice(p.device)));
      used += p.nodes > 0;
      ++devices;
      total.task = p.task;
      total.address = p.address;
      total.nodes += p.nodes;
      total.sends += p.sends;
      total.recvs += p.recvs;
      total.bytes_sent = SumBytes(total.bytes_sent, p.bytes_sent);
      total.bytes_received = SumBytes(total.bytes_received, p.bytes_received);
    }
    if (devices > 1) rows.push_back(row(total, "total"));
  }
  // The known total, and how many transfers it leaves out.
  int64_t moved = 0;
  size_t unknown = 0;
  for (const Transfer& t : inspection.transfers) {
    if (t.bytes < 0) {
      ++unknown;
    } else {
      moved += t.bytes;
    }
  }
  const std::string volume =
      unknown == 0 ? absl::StrCat(moved, " bytes per step")
                   : absl::StrCat("at least ", moved, " bytes per step (",
                                  unknown == inspection.transfers.size() ? "all " : "",
                                  Plural(unknown, "transfer"),
                                  " of unknown size: --feed_shapes can give them)");
  Row header = {"TASK"};
  std::vector<bool> right = {false};
  if (addresses) {
    header.push_back("ADDRESS");
    right.push_back(false);
  }
  for (const char* h : {"DEVICE", "NODES", "SENDS", "RECVS", "BYTES_OUT", "BYTES_IN"}) {
    header.push_back(h);
    right.push_back(header.size() > (addresses ? 3u : 2u));
  }
  return absl::StrCat("Partitions: ", used, " of ", Plural(inspection.partitions.size(), "device"),
                      " in ", Plural(tasks.size(), "task"), " used; ",
                      Plural(inspection.transfers.size(), "transfer"), ", ", volume, ":\n",
                      AlignedTable(header, rows, right));
}

std::string FormatTransfers(const Inspection& inspection) {
  if (inspection.transfers.empty()) return "No transfers: the graph runs on one device.\n";
  std::vector<Row> rows;
  for (const Transfer& t : inspection.transfers) {
    rows.push_back(
        {t.tensor, t.send_device, t.recv_device, DataTypeString(t.dtype), t.shape, Bytes(t.bytes)});
  }
  return absl::StrCat("Transfers:\n",
                      AlignedTable({"TENSOR", "FROM", "TO", "DTYPE", "SHAPE", "BYTES"}, rows,
                                   {false, false, false, false, false, true}));
}

std::string InspectionToJson(const Inspection& inspection) {
  std::vector<std::string> placement, partitions, transfers;
  for (const PlacementRow& p : inspection.placement) {
    placement.push_back(absl::StrCat("{\"node\":", JsonQuote(p.node), ",\"op\":", JsonQuote(p.op),
                                     ",\"requested\":", JsonQuote(p.requested),
                                     ",\"assigned\":", JsonQuote(p.assigned),
                                     ",\"reason\":", JsonQuote(p.reason), "}"));
  }
  for (const PartitionSummary& p : inspection.partitions) {
    partitions.push_back(absl::StrCat(
        "{\"task\":", JsonQuote(p.task), ",\"address\":", JsonQuote(p.address),
        ",\"device\":", JsonQuote(p.device), ",\"nodes\":", p.nodes, ",\"sends\":", p.sends,
        ",\"recvs\":", p.recvs, ",\"bytes\":", JsonBytes(SumBytes(p.bytes_sent, p.bytes_received)),
        ",\"bytes_sent\":", JsonBytes(p.bytes_sent),
        ",\"bytes_received\":", JsonBytes(p.bytes_received), "}"));
  }
  for (const Transfer& t : inspection.transfers) {
    transfers.push_back(absl::StrCat(
        "{\"tensor\":", JsonQuote(t.tensor), ",\"send\":", JsonQuote(t.send_node),
        ",\"recv\":", JsonQuote(t.recv_node), ",\"from\":", JsonQuote(t.send_device),
        ",\"to\":", JsonQuote(t.recv_device), ",\"dtype\":", JsonQuote(DataTypeString(t.dtype)),
        ",\"shape\":", JsonQuote(t.shape), ",\"bytes\":", JsonBytes(t.bytes), "}"));
  }
  auto list = [](const std::vector<std::string>& items) {
    return items.empty() ? std::string("[]")
                         : absl::StrCat("[\n  ", absl::StrJoin(items, ",\n  "), "\n]");
  };
  return absl::StrCat("{\"placement\":", list(placement), ",\n\"partitions\":", list(partitions),
                      ",\n\"transfers\":", list(transfers), "}\n");
}

std::string InspectionToDot(const Inspection& inspection) {
  const std::vector<std::string> tasks = Tasks(inspection);
  std::string dot =
      "digraph tensorgrid {\n"
      "  compound=true;\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n"
      "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  std::string edges;
  for (const PartitionSummary& p : inspection.partitions) {
    auto it = inspection.partition_graphs.find(p.device);
    if (it == inspection.partition_graphs.end()) continue;
    const size_t task = std::find(tasks.begin(), tasks.end(), p.task) - tasks.begin();
    absl::StrAppend(&dot, "  subgraph ", ClusterId(p.device), " {\n    label=", DotQuote(p.device),
                    ";\n    style=filled;\n    color=\"#666666\";\n    fillcolor=\"",
                    kTaskColors[task % (sizeof(kTaskColors) / sizeof(kTaskColors[0]))], "\";\n");
    for (const NodeDef& n : it->second.node()) {
      const bool transfer = n.op() == "_Send" || n.op() == "_Recv";
      absl::StrAppend(&dot, "    ", DotQuote(n.name()),
                      " [label=", DotQuote(n.name() + "\n" + n.op()), transfer ? ", shape=cds" : "",
                      "];\n");
      for (const std::string& input : n.input()) {
        const bool control = !input.empty() && input[0] == '^';
        std::string src = control ? input.substr(1) : input;
        const size_t colon = src.rfind(':');
        if (!control && colon != std::string::npos) src.resize(colon);
        absl::StrAppend(&edges, "  ", DotQuote(src), " -> ", DotQuote(n.name()),
                        control ? " [style=dotted]" : "", ";\n");
      }
    }
    dot += "  }\n";
  }
  for (const Transfer& t : inspection.transfers) {
    if (t.recv_node.empty()) continue;
    absl::StrAppend(&edges, "  ", DotQuote(t.send_node), " -> ", DotQuote(t.recv_node),
                    " [style=dashed, color=\"#c0392b\", label=",
                    DotQuote(absl::StrCat(t.tensor, "\n", Bytes(t.bytes), " B")), "];\n");
  }
  return dot + edges + "}\n";
}

}  // namespace tg_inspect
}  // namespace tensorgrid
