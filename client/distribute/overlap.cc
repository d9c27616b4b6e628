#include "client/distribute/overlap.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace tensorgrid {
namespace distribute {
namespace {

struct Span {
  int64_t start_ns, end_ns;
};

Span SpanOf(const NodeExecStats& ns) {
  if (ns.all_start_nanos() != 0) {
    return {ns.all_start_nanos(), ns.all_start_nanos() + ns.all_end_rel_nanos()};
  }
  const int64_t start = ns.all_start_micros() * 1000;
  return {start, start + ns.all_end_rel_micros() * 1000};
}

bool IsGradient(const std::string& node_name) {
  return absl::StartsWith(node_name, "gradients/") || absl::StrContains(node_name, "/gradients/");
}

bool IsAllReduce(const NodeExecStats& ns) {
  return absl::EndsWith(ns.timeline_label(), " = CollectiveReduce");
}

}  // namespace

AllReduceOverlap MeasureAllReduceOverlap(const StepStats& stats) {
  AllReduceOverlap o;
  for (const DeviceStepStats& dev : stats.dev_stats()) {
    int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
    std::vector<Span> reduces;
    for (const NodeExecStats& ns : dev.node_stats()) {
      const Span s = SpanOf(ns);
      if (IsAllReduce(ns)) {
        reduces.push_back(s);
      } else if (IsGradient(ns.node_name())) {
        first = std::min(first, s.start_ns);
        last = std::max(last, s.end_ns);
      }
    }
    if (last > 0) o.backprop_ms += (last - first) / 1e6;
    for (const Span& s : reduces) {
      ++o.all_reduces;
      o.all_reduce_ms += (s.end_ns - s.start_ns) / 1e6;
      if (s.start_ns < last) {
        ++o.started_in_backprop;
        o.hidden_ms += (std::min(s.end_ns, last) - s.start_ns) / 1e6;
      }
    }
  }
  return o;
}

std::string AllReduceOverlap::ToString() const {
  return absl::StrFormat(
      "%d all-reduce%s, %d started during backprop; %.2f of %.2f ms hidden behind backprop "
      "(%.2f ms)",
      all_reduces, all_reduces == 1 ? "" : "s", started_in_backprop, hidden_ms, all_reduce_ms,
      backprop_ms);
}

}  // namespace distribute
}  // namespace tensorgrid
