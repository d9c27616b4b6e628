#include "core/runtime/trace.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/framework/device_name.h"
#include "core/framework/types.h"
#include "core/platform/json.h"

namespace tensorgrid {

namespace {

// What the partition graphs say about a node, when the metadata has them.
struct NodeFacts {
  std::string op;
  std::string tensor_name;  // _Send/_Recv only
  std::string send_device, recv_device;
};

// One NodeExecStats placed on the timeline.
struct Slice {
  const NodeExecStats* stats;
  int pid;
  int64_t start_ns;  // relative to the step's first event
  int64_t dur_ns;
  std::string op;
  std::string peer;    // _Send/_Recv: the other end's device, from the label
  int64_t bytes = -1;  // _Send/_Recv: from the label
};

// One end of a transfer, with the keys it can be matched by, strictest first.
struct TransferEnd {
  size_t slice;
  std::string by_tensor;  // tensor_name and both devices, from the partition graphs
  std::string by_name;    // Partition's naming pattern and both devices
  std::string by_name_only;
  std::string flow_name;
  bool matched = false;
};

std::string Micros(int64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1000.0); }

std::string ShapeString(const TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "<unknown>";
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size() < 0 ? "?" : absl::StrCat(d.size()));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

absl::flat_hash_map<std::string, NodeFacts> FactsFromPartitionGraphs(const RunMetadata& metadata) {
  absl::flat_hash_map<std::string, NodeFacts> facts;
  for (const GraphDef& graph : metadata.partition_graphs()) {
    for (const NodeDef& node : graph.node()) {
      NodeFacts& f = facts[node.name()];
      f.op = node.op();
      auto attr = [&](const char* name) -> std::string {
        auto it = node.attr().find(name);
        return it == node.attr().end() ? "" : it->second.s();
      };
      f.tensor_name = attr("tensor_name");
      f.send_device = attr("send_device");
      f.recv_device = attr("recv_device");
    }
  }
  return facts;
}

// Reads the executor's label "NAME = OP[ N bytes to|from PEER]" into `slice`.
void ParseLabel(const std::string& node, const std::string& label, Slice* slice) {
  const std::string head = node + " = ";
  if (!absl::StartsWith(label, head)) return;
  absl::string_view rest = absl::string_view(label).substr(head.size());
  const size_t space = rest.find(' ');
  if (slice->op.empty()) slice->op = std::string(rest.substr(0, space));
  if (space == absl::string_view::npos) return;
  rest = rest.substr(space + 1);
  for (absl::string_view marker : {" bytes to ", " bytes from "}) {
    const size_t pos = rest.find(marker);
    if (pos == absl::string_view::npos) continue;
    int64_t bytes;
    if (absl::SimpleAtoi(rest.substr(0, pos), &bytes)) slice->bytes = bytes;
    slice->peer = std::string(rest.substr(pos + marker.size()));
    return;
  }
}

// "_send_x_0_to_CPU_1" -> "x_0|CPU_1"; "_recv_x_0_on_CPU_1" -> the same.
std::string TransferNameKey(absl::string_view name, bool is_send) {
  const absl::string_view prefix = is_send ? "_send_" : "_recv_";
  const absl::string_view infix = is_send ? "_to_" : "_on_";
  if (!absl::StartsWith(name, prefix)) return "";
  const size_t pos = name.rfind(infix);
  if (pos == absl::string_view::npos || pos < prefix.size()) return "";
  return absl::StrCat(name.substr(prefix.size(), pos - prefix.size()), "|",
                      name.substr(pos + infix.size()));
}

// What a transfer carries, from Partition's send name: "_send_x_0_to_CPU_1"
// -> "x:0", "_send_x_control_to_CPU_1" -> "^x"; "" for other names.
std::string TransferTensor(absl::string_view send_name) {
  const std::string key = TransferNameKey(send_name, /*is_send=*/true);
  const size_t bar = key.find('|');
  const size_t tag = key.rfind('_', bar);
  if (key.empty() || tag == std::string::npos || tag == 0) return "";
  const std::string src = key.substr(0, tag);
  const std::string port = key.substr(tag + 1, bar - tag - 1);
  return port == "control" ? "^" + src : absl::StrCat(src, ":", port);
}

// The point of a slice nearest to `ns` that is at least a little inside it
// (an eighth of its length, at most 1us), so that a flow event there binds to
// the slice without sitting on its edge.
int64_t InsideSlice(int64_t ns, int64_t start, int64_t dur) {
  const int64_t margin = std::min<int64_t>(dur / 8, 1000);
  return std::clamp(ns, start + margin, start + dur - margin);
}

// Pairs unmatched sends with unmatched recvs of the same key, in time order.
void MatchBy(std::vector<TransferEnd>& sends, std::vector<TransferEnd>& recvs,
             const std::function<const std::string&(const TransferEnd&)>& key,
             std::vector<std::pair<size_t, size_t>>* pairs) {
  std::map<std::string, std::deque<size_t>> waiting;
  for (size_t r = 0; r < recvs.size(); ++r) {
    if (!recvs[r].matched && !key(recvs[r]).empty()) waiting[key(recvs[r])].push_back(r);
  }
  for (size_t s = 0; s < sends.size(); ++s) {
    if (sends[s].matched || key(sends[s]).empty()) continue;
    auto it = waiting.find(key(sends[s]));
    if (it == waiting.end() || it->second.empty()) continue;
    const size_t r = it->second.front();
    it->second.pop_front();
    sends[s].matched = recvs[r].matched = true;
    pairs->emplace_back(s, r);
  }
}

class TraceWriter {
 public:
  explicit TraceWriter(const RunMetadata& metadata)
      : metadata_(metadata), facts_(FactsFromPartitionGraphs(metadata)) {}

  std::string Write() {
    AssignProcesses();
    CollectSlices();
    WriteMetadataEvents();
    for (const Slice& s : slices_) WriteSlice(s);
    WriteFlows();
    return absl::StrCat("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":",
                        JsonQuote("tensorgrid ToChromeTrace"),
                        ",\"step_start_unix_nanos\":", base_ns_, "},\"traceEvents\":[\n",
                        absl::StrJoin(events_, ",\n"), "\n]}\n");
  }

 private:
  static std::string DeviceName(const DeviceStepStats& dev) {
    return dev.device().empty() ? "(unnamed device)" : dev.device();
  }

  // One pid per device, in device-name order (ps before worker, task:2 before task:10).
  void AssignProcesses() {
    std::vector<std::string> names;
    for (const DeviceStepStats& dev : metadata_.step_stats().dev_stats()) {
      names.push_back(DeviceName(dev));
    }
    std::sort(names.begin(), names.end(), DeviceNameUtils::CompareFullNames);
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (size_t i = 0; i < names.size(); ++i) pids_[names[i]] = static_cast<int>(i) + 1;
    devices_ = std::move(names);
  }

  void CollectSlices() {
    int64_t base = std::numeric_limits<int64_t>::max();
    for (const DeviceStepStats& dev : metadata_.step_stats().dev_stats()) {
      for (const NodeExecStats& ns : dev.node_stats()) {
        Slice s;
        s.stats = &ns;
        s.pid = pids_[DeviceName(dev)];
        const bool nanos = ns.all_start_nanos() != 0;
        s.start_ns = nanos ? ns.all_start_nanos() : ns.all_start_micros() * 1000;
        s.dur_ns =
            std::max<int64_t>(0, nanos ? ns.all_end_rel_nanos() : ns.all_end_rel_micros() * 1000);
        auto it = facts_.find(ns.node_name());
        if (it != facts_.end()) s.op = it->second.op;
        ParseLabel(ns.node_name(), ns.timeline_label(), &s);
        if (s.op.empty()) s.op = "unknown";
        base = std::min(base, s.start_ns);
        slices_.push_back(std::move(s));
      }
    }
    base_ns_ = slices_.empty() ? 0 : base;
    for (Slice& s : slices_) s.start_ns -= base_ns_;
    std::stable_sort(slices_.begin(), slices_.end(), [](const Slice& a, const Slice& b) {
      return std::tie(a.pid, a.start_ns) < std::tie(b.pid, b.start_ns);
    });
  }

  void WriteMetadataEvents() {
    for (const std::string& device : devices_) {
      const int pid = pids_[device];
      events_.push_back(absl::StrCat("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid,
                                     ",\"args\":{\"name\":", JsonQuote(device), "}}"));
      events_.push_back(absl::StrCat("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":", pid,
                                     ",\"args\":{\"sort_index\":", pid, "}}"));
    }
    for (const DeviceStepStats& dev : metadata_.step_stats().dev_stats()) {
      std::map<uint32_t, std::string> threads(dev.thread_names().begin(), dev.thread_names().end());
      for (const auto& [tid, name] : threads) {
        events_.push_back(
            absl::StrCat("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pids_[DeviceName(dev)],
                         ",\"tid\":", tid, ",\"args\":{\"name\":", JsonQuote(name), "}}"));
      }
    }
  }

  void WriteSlice(const Slice& s) {
    const NodeExecStats& ns = *s.stats;
    std::vector<std::string> args;
    if (!ns.timeline_label().empty()) args.push_back("\"label\":" + JsonQuote(ns.timeline_label()));
    if (s.bytes >= 0) args.push_back(absl::StrCat("\"bytes\":", s.bytes));
    if (!s.peer.empty()) args.push_back("\"peer\":" + JsonQuote(s.peer));
    int64_t output_bytes = 0;
    std::vector<std::string> outputs;
    for (const NodeOutput& out : ns.output()) {
      const TensorDescription& d = out.tensor_description();
      const int64_t bytes = d.allocation_description().requested_bytes();
      output_bytes += bytes;
      outputs.push_back(JsonQuote(absl::StrCat(out.slot(), ": ", DataTypeString(d.dtype()), " ",
                                               ShapeString(d.shape()), ", ", bytes, " bytes")));
    }
    if (!outputs.empty()) {
      args.push_back(absl::StrCat("\"outputs\":[", absl::StrJoin(outputs, ","), "]"));
      args.push_back(absl::StrCat("\"output_bytes\":", output_bytes));
    }
    events_.push_back(absl::StrCat(
        "{\"ph\":\"X\",\"name\":", JsonQuote(ns.node_name()), ",\"cat\":", JsonQuote(s.op),
        ",\"pid\":", s.pid, ",\"tid\":", ns.thread_id(), ",\"ts\":", Micros(s.start_ns),
        ",\"dur\":", Micros(s.dur_ns), ",\"args\":{", absl::StrJoin(args, ","), "}}"));
  }

  TransferEnd MakeEnd(size_t index, bool is_send) const {
    const Slice& s = slices_[index];
    const std::string& name = s.stats->node_name();
    const std::string& device = devices_[s.pid - 1];
    TransferEnd end;
    end.slice = index;
    auto it = facts_.find(name);
    if (it != facts_.end() && !it->second.tensor_name.empty()) {
      end.by_tensor = absl::StrCat(it->second.tensor_name, "|", it->second.send_device, "|",
                                   it->second.recv_device);
    }
    end.by_name_only = TransferNameKey(name, is_send);
    if (!end.by_name_only.empty() && !s.peer.empty()) {
      end.by_name = absl::StrCat(end.by_name_only, "|", is_send ? device : s.peer, "|",
                                 is_send ? s.peer : device);
    }
    end.flow_name = is_send ? TransferTensor(name) : "";
    if (end.flow_name.empty()) {
      end.flow_name =
          it != facts_.end() && !it->second.tensor_name.empty() ? it->second.tensor_name : name;
    }
    return end;
  }

  void WriteFlows() {
    std::vector<TransferEnd> sends, recvs;
    for (size_t i = 0; i < slices_.size(); ++i) {
      if (slices_[i].op == "_Send") sends.push_back(MakeEnd(i, true));
      if (slices_[i].op == "_Recv") recvs.push_back(MakeEnd(i, false));
    }
    std::vector<std::pair<size_t, size_t>> pairs;
    MatchBy(
        sends, recvs, [](const TransferEnd& e) -> const std::string& { return e.by_tensor; },
        &pairs);
    MatchBy(
        sends, recvs, [](const TransferEnd& e) -> const std::string& { return e.by_name; }, &pairs);
    MatchBy(
        sends, recvs, [](const TransferEnd& e) -> const std::string& { return e.by_name_only; },
        &pairs);
    std::sort(pairs.begin(), pairs.end());
    int id = 0;
    for (const auto& [s, r] : pairs) {
      const Slice& send = slices_[sends[s].slice];
      const Slice& recv = slices_[recvs[r].slice];
      ++id;
      const std::string common =
          absl::StrCat("\"name\":", JsonQuote(sends[s].flow_name),
                       ",\"cat\":\"transfer\",\"id\":", id, ",\"bind_id\":", id);
      // The arrow leaves where the _Send hands the tensor over (its start)
      // and ends at the same moment inside the _Recv, or as near as the
      // _Recv allows; each flow event binds to the slice around it.
      const int64_t start_ns = InsideSlice(send.start_ns, send.start_ns, send.dur_ns);
      const int64_t end_ns = InsideSlice(start_ns, recv.start_ns, recv.dur_ns);
      events_.push_back(absl::StrCat("{\"ph\":\"s\",", common, ",\"pid\":", send.pid, ",\"tid\":",
                                     send.stats->thread_id(), ",\"ts\":", Micros(start_ns), "}"));
      events_.push_back(absl::StrCat("{\"ph\":\"f\",\"bp\":\"e\",", common, ",\"pid\":", recv.pid,
                                     ",\"tid\":", recv.stats->thread_id(),
                                     ",\"ts\":", Micros(end_ns), "}"));
    }
  }

  const RunMetadata& metadata_;
  const absl::flat_hash_map<std::string, NodeFacts> facts_;
  std::map<std::string, int> pids_;
  std::vector<std::string> devices_;  // by pid - 1
  std::vector<Slice> slices_;
  int64_t base_ns_ = 0;
  std::vector<std::string> events_;
};

}  // namespace

std::string ToChromeTrace(const RunMetadata& metadata) { return TraceWriter(metadata).Write(); }

}  // namespace tensorgrid
