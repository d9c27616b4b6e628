#include "distributed/slurm_cluster_resolver.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace slurm {
namespace {

constexpr size_t kMaxHosts = 1000000;

bool AllDigits(absl::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

// "1-3,7" or "01-10" -> the numbers as strings, padded like their lower bound.
absl::StatusOr<std::vector<std::string>> ExpandRanges(absl::string_view ranges,
                                                      absl::string_view hostlist) {
  std::vector<std::string> out;
  for (absl::string_view range : absl::StrSplit(ranges, ',')) {
    std::vector<absl::string_view> bounds = absl::StrSplit(range, absl::MaxSplits('-', 1));
    absl::string_view lo_text = bounds[0];
    absl::string_view hi_text = bounds.size() == 2 ? bounds[1] : bounds[0];
    int lo = 0, hi = 0;
    if (!AllDigits(lo_text) || !AllDigits(hi_text) || !absl::SimpleAtoi(lo_text, &lo) ||
        !absl::SimpleAtoi(hi_text, &hi)) {
      return errors::InvalidArgument("hostlist '", hostlist, "': '[", ranges, "]' has '", range,
                                     "', which is not N or N-M with decimal N and M");
    }
    if (hi < lo) {
      return errors::InvalidArgument("hostlist '", hostlist, "': range '", range,
                                     "' runs backwards");
    }
    if (out.size() + static_cast<size_t>(hi - lo) >= kMaxHosts) {
      return errors::InvalidArgument("hostlist '", hostlist, "' has over ", kMaxHosts, " hosts");
    }
    const int width = static_cast<int>(lo_text.size());
    for (int n = lo; n <= hi; ++n) {
      std::string number = std::to_string(n);
      if (static_cast<int>(number.size()) < width) number.insert(0, width - number.size(), '0');
      out.push_back(std::move(number));
    }
  }
  return out;
}

// One name with any number of bracket groups: "r[1-2]-n[01-02]".
absl::Status ExpandName(absl::string_view name, absl::string_view hostlist,
                        std::vector<std::string>* out) {
  if (name.empty()) return errors::InvalidArgument("hostlist '", hostlist, "' has an empty name");
  std::vector<std::string> partial = {""};
  size_t pos = 0;
  while (pos < name.size()) {
    const size_t open = name.find('[', pos);
    const size_t close_before = name.find(']', pos);
    if (close_before != absl::string_view::npos &&
        (open == absl::string_view::npos || close_before < open)) {
      return errors::InvalidArgument("hostlist '", hostlist, "': ']' without '[' in '", name, "'");
    }
    const absl::string_view text =
        name.substr(pos, open == absl::string_view::npos ? name.npos : open - pos);
    for (std::string& p : partial) absl::StrAppend(&p, text);
    if (open == absl::string_view::npos) break;
    const size_t close = name.find(']', open);
    if (close == absl::string_view::npos) {
      return errors::InvalidArgument("hostlist '", hostlist, "': '[' without ']' in '", name, "'");
    }
    const absl::string_view ranges = name.substr(open + 1, close - open - 1);
    if (ranges.find('[') != absl::string_view::npos) {
      return errors::InvalidArgument("hostlist '", hostlist, "': nested '[' in '", name, "'");
    }
    TG_ASSIGN_OR_RETURN(std::vector<std::string> numbers, ExpandRanges(ranges, hostlist));
    if (partial.size() * numbers.size() + out->size() > kMaxHosts) {
      return errors::InvalidArgument("hostlist '", hostlist, "' has over ", kMaxHosts, " hosts");
    }
    std::vector<std::string> next;
    next.reserve(partial.size() * numbers.size());
    for (const std::string& p : partial) {
      for (const std::string& n : numbers) next.push_back(p + n);
    }
    partial = std::move(next);
    pos = close + 1;
  }
  for (std::string& p : partial) out->push_back(std::move(p));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostlist(absl::string_view hostlist) {
  std::vector<std::string> out;
  // Split at the commas outside brackets.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    const char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) {
      return errors::InvalidArgument("hostlist '", hostlist, "': ']' without '['");
    }
    if (c == ',' && depth == 0) {
      TG_RETURN_IF_ERROR(ExpandName(hostlist.substr(start, i - start), hostlist, &out));
      start = i + 1;
    }
  }
  if (depth != 0) return errors::InvalidArgument("hostlist '", hostlist, "': '[' without ']'");
  return out;
}

absl::StatusOr<std::vector<int>> ExpandTasksPerNode(absl::string_view tasks_per_node) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(tasks_per_node, ',')) {
    absl::string_view count_text = item;
    int repeat = 1;
    const size_t paren = item.find('(');
    bool ok = true;
    if (paren != absl::string_view::npos) {
      count_text = item.substr(0, paren);
      absl::string_view times = item.substr(paren);
      ok = absl::ConsumePrefix(&times, "(x") && absl::ConsumeSuffix(&times, ")") &&
           AllDigits(times) && absl::SimpleAtoi(times, &repeat) && repeat > 0;
    }
    int count = 0;
    if (!ok || !AllDigits(count_text) || !absl::SimpleAtoi(count_text, &count) || count <= 0) {
      return errors::InvalidArgument("'", tasks_per_node, "': '", item,
                                     "' is not N or N(xM) with positive N and M");
    }
    if (out.size() + repeat > kMaxHosts) {
      return errors::InvalidArgument("'", tasks_per_node, "' counts over ", kMaxHosts, " nodes");
    }
    out.insert(out.end(), repeat, count);
  }
  return out;
}

}  // namespace slurm

absl::StatusOr<ResolvedTask> SlurmClusterResolver::Resolve() const {
  using cluster_resolver_internal::GetIndexVariable;
  TG_ASSIGN_OR_RETURN(int rank, GetIndexVariable(env_, "SLURM_PROCID"));
  TG_ASSIGN_OR_RETURN(int local_id, GetIndexVariable(env_, "SLURM_LOCALID"));
  const std::optional<std::string> nodelist = env_.Get("SLURM_STEP_NODELIST");
  const std::optional<std::string> tasks_per_node = env_.Get("SLURM_STEP_TASKS_PER_NODE");
  const std::optional<std::string> node_name = env_.Get("SLURMD_NODENAME");
  if (!nodelist.has_value()) return errors::InvalidArgument("SLURM_STEP_NODELIST is not set");
  if (!tasks_per_node.has_value()) {
    return errors::InvalidArgument("SLURM_STEP_TASKS_PER_NODE is not set");
  }
  if (!node_name.has_value() || node_name->empty()) {
    return errors::InvalidArgument("SLURMD_NODENAME is not set");
  }
  absl::StatusOr<std::vector<std::string>> nodes = slurm::ExpandHostlist(*nodelist);
  if (!nodes.ok()) return WithContext(nodes.status(), "SLURM_STEP_NODELIST");
  absl::StatusOr<std::vector<int>> counts = slurm::ExpandTasksPerNode(*tasks_per_node);
  if (!counts.ok()) return WithContext(counts.status(), "SLURM_STEP_TASKS_PER_NODE");
  const std::string layout = absl::StrCat("SLURM_STEP_NODELIST=", *nodelist,
                                          " SLURM_STEP_TASKS_PER_NODE=", *tasks_per_node);
  if (nodes->size() != counts->size()) {
    return errors::InvalidArgument(layout, ": ", nodes->size(), " node(s) but ", counts->size(),
                                   " task count(s)");
  }
  // srun's default (block) distribution: ranks fill each node in turn.
  std::vector<std::string> addresses;
  std::string expected_node;
  int expected_local = -1;
  for (size_t n = 0; n < nodes->size(); ++n) {
    for (int k = 0; k < (*counts)[n]; ++k) {
      const int port = options_.port_base + k;
      if (port < 1 || port > 65535) {
        return errors::InvalidArgument("--port_base=", options_.port_base, " plus local task ", k,
                                       " on ", (*nodes)[n], " is not a port in 1..65535");
      }
      if (static_cast<int>(addresses.size()) == rank) {
        expected_node = (*nodes)[n];
        expected_local = k;
      }
      addresses.push_back(absl::StrCat((*nodes)[n], ":", port));
    }
  }
  std::optional<std::string> num_tasks = env_.Get("SLURM_STEP_NUM_TASKS");
  if (num_tasks.has_value() && *num_tasks != std::to_string(addresses.size())) {
    return errors::InvalidArgument("SLURM_STEP_NUM_TASKS=", *num_tasks, " but ", layout, " has ",
                                   addresses.size(), " task(s)");
  }
  if (rank >= static_cast<int>(addresses.size())) {
    return errors::InvalidArgument("SLURM_PROCID=", rank, " is out of range: ", layout, " has ",
                                   addresses.size(), " task(s)");
  }
  if (expected_node != *node_name || expected_local != local_id) {
    return errors::FailedPrecondition(
        "SLURM_PROCID=", rank, " runs on SLURMD_NODENAME=", *node_name,
        " as SLURM_LOCALID=", local_id, ", but a block distribution of ", layout, " puts it on ",
        expected_node, " as local task ", expected_local, " (", addresses[rank],
        "), where the other tasks will look for it; start "
        "the step with srun --distribution=block");
  }
  ResolvedTask out;
  out.resolver = name();
  out.source = absl::StrCat("SLURM_PROCID=", rank, " SLURM_LOCALID=", local_id,
                            " SLURMD_NODENAME=", *node_name, " ", layout);
  TG_ASSIGN_OR_RETURN(
      out.config, cluster_resolver_internal::AssignRanks("slurm_jobs", options_.slurm_jobs,
                                                         addresses, rank, options_.spec_options));
  if (options_.gpus_per_task > 0) {
    std::vector<int> gpus;
    for (int g = 0; g < options_.gpus_per_task; ++g)
      gpus.push_back(local_id * options_.gpus_per_task + g);
    out.cuda_visible_devices = absl::StrJoin(gpus, ",");
  }
  return out;
}

}  // namespace tensorgrid
