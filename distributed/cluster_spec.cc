#include "distributed/cluster_spec.h"

#include <cctype>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/platform/json.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

absl::Status ValidateJobName(absl::string_view job) {
  if (job.empty()) return errors::InvalidArgument("job name is empty");
  bool ok = std::isalpha(static_cast<unsigned char>(job[0]));
  for (char c : job) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) {
    return errors::InvalidArgument("job name '", job,
                                   "' is invalid: it must be a letter followed by letters, "
                                   "digits or '_'");
  }
  return absl::OkStatus();
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

// Checks "host:port" (or "[v6]:port") and returns the port.
absl::StatusOr<int> ValidateAddress(absl::string_view address, const ClusterSpecOptions& options) {
  auto malformed = [&](absl::string_view why) {
    return errors::InvalidArgument("address '", address, "' is not host:port: ", why);
  };
  size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return malformed("no ':port'");
  absl::string_view host = address.substr(0, colon);
  absl::string_view port = address.substr(colon + 1);
  if (host.empty()) return malformed("the host is empty");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return malformed("unbalanced '[' in the host");
    for (char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return malformed("bad character in the IPv6 host");
      }
    }
  } else {
    for (char c : host) {
      if (c == ':') return malformed("more than one ':' (write IPv6 hosts as [::1]:port)");
      if (!IsHostChar(c))
        return malformed(absl::StrCat("bad character '", std::string(1, c), "' in the host"));
    }
  }
  if (port.empty()) return malformed("the port is empty");
  int value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || value > 65535) {
      return malformed(absl::StrCat("port '", port, "' is not an integer in 0..65535"));
    }
    value = value * 10 + (c - '0');
  }
  if (value > 65535)
    return malformed(absl::StrCat("port '", port, "' is not an integer in 0..65535"));
  if (value == 0 && !options.allow_port_zero) {
    return errors::InvalidArgument("address '", address,
                                   "' has port 0, which is only allowed with allow_port_zero");
  }
  return value;
}

// Splits a comma-separated task list, trimming whitespace; an empty item is
// an error quoting the whole list.
absl::StatusOr<std::vector<std::string>> SplitTasks(absl::string_view list) {
  std::vector<std::string> tasks;
  for (absl::string_view task : absl::StrSplit(list, ',')) {
    task = absl::StripAsciiWhitespace(task);
    if (task.empty()) return errors::InvalidArgument("empty address in task list '", list, "'");
    tasks.emplace_back(task);
  }
  return tasks;
}

}  // namespace

std::string TaskName(absl::string_view job, int index) {
  return absl::StrCat("/job:", job, "/replica:0/task:", index);
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromMap(const JobMap& jobs,
                                                 const ClusterSpecOptions& options) {
  if (jobs.empty()) return errors::InvalidArgument("cluster has no jobs");
  std::map<std::string, std::string> owner;  // address -> task name
  for (const auto& [job, tasks] : jobs) {
    TG_RETURN_IF_ERROR(ValidateJobName(job));
    if (tasks.empty()) return errors::InvalidArgument("job '", job, "' has no tasks");
    if (job == "chief" && tasks.size() > 1) {
      return errors::InvalidArgument("job 'chief' has ", tasks.size(), " tasks (",
                                     absl::StrJoin(tasks, ","),
                                     "); a cluster has at most one chief");
    }
    for (int i = 0; i < static_cast<int>(tasks.size()); ++i) {
      absl::StatusOr<int> port = ValidateAddress(tasks[i], options);
      if (!port.ok()) return WithContext(port.status(), TaskName(job, i));
      if (*port == 0) continue;  // each "host:0" gets its own port later
      auto [it, inserted] = owner.emplace(tasks[i], TaskName(job, i));
      if (!inserted) {
        return errors::InvalidArgument("address '", tasks[i], "' is used by both ", it->second,
                                       " and ", TaskName(job, i));
      }
    }
  }
  return ClusterSpec(jobs);
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromFlag(absl::string_view flag,
                                                  const ClusterSpecOptions& options) {
  JobMap jobs;
  for (absl::string_view part : absl::StrSplit(flag, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == absl::string_view::npos) {
      return errors::InvalidArgument("cluster job '", part, "' is not job=host:port,...");
    }
    std::string job(absl::StripAsciiWhitespace(part.substr(0, eq)));
    absl::string_view list = absl::StripAsciiWhitespace(part.substr(eq + 1));
    if (list.empty())
      return errors::InvalidArgument("job '", job, "' has no tasks in '", part, "'");
    TG_ASSIGN_OR_RETURN(std::vector<std::string> tasks, SplitTasks(list));
    if (!jobs.emplace(job, std::move(tasks)).second) {
      return errors::InvalidArgument("job '", job, "' appears twice in cluster '", flag, "'");
    }
  }
  if (jobs.empty()) return errors::InvalidArgument("cluster '", flag, "' has no jobs");
  return FromMap(jobs, options);
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromHostsFlags(absl::string_view ps_hosts,
                                                        absl::string_view worker_hosts,
                                                        const ClusterSpecOptions& options) {
  JobMap jobs;
  if (!absl::StripAsciiWhitespace(ps_hosts).empty()) {
    absl::StatusOr<std::vector<std::string>> ps = SplitTasks(ps_hosts);
    if (!ps.ok()) return WithContext(ps.status(), "--ps_hosts");
    jobs["ps"] = *std::move(ps);
  }
  if (absl::StripAsciiWhitespace(worker_hosts).empty()) {
    return errors::InvalidArgument("--worker_hosts is empty; a cluster needs at least one worker");
  }
  absl::StatusOr<std::vector<std::string>> workers = SplitTasks(worker_hosts);
  if (!workers.ok()) return WithContext(workers.status(), "--worker_hosts");
  jobs["worker"] = *std::move(workers);
  return FromMap(jobs, options);
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> names;
  for (const auto& entry : jobs_) names.push_back(entry.first);
  return names;
}

bool ClusterSpec::HasJob(absl::string_view job) const {
  return jobs_.find(std::string(job)) != jobs_.end();
}

int ClusterSpec::num_tasks(absl::string_view job) const {
  auto it = jobs_.find(std::string(job));
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

absl::StatusOr<std::string> ClusterSpec::TaskAddress(absl::string_view job, int index) const {
  auto it = jobs_.find(std::string(job));
  if (it == jobs_.end()) {
    return errors::NotFound("cluster has no job '", job, "'; its jobs are [",
                            absl::StrJoin(jobs(), ", "), "]");
  }
  if (index < 0 || index >= static_cast<int>(it->second.size())) {
    return errors::NotFound("job '", job, "' has no task ", index, "; it has ", it->second.size(),
                            " task(s), 0..", it->second.size() - 1);
  }
  return it->second[index];
}

std::vector<ClusterSpec::Task> ClusterSpec::AllTasks() const {
  std::vector<Task> all;
  for (const auto& [job, tasks] : jobs_) {
    for (int i = 0; i < static_cast<int>(tasks.size()); ++i) {
      all.push_back(Task{TaskName(job, i), tasks[i]});
    }
  }
  return all;
}

std::string ClusterSpec::ToString() const {
  return absl::StrJoin(jobs_, ";", [](std::string* out, const auto& entry) {
    absl::StrAppend(out, entry.first, "=", absl::StrJoin(entry.second, ","));
  });
}

std::string ClusterSpec::ToJson() const {
  std::string out = "{";
  for (const auto& [job, tasks] : jobs_) {
    if (out.size() > 1) out += ",";
    absl::StrAppend(&out, JsonQuote(job), ":[");
    for (size_t i = 0; i < tasks.size(); ++i) {
      absl::StrAppend(&out, i ? "," : "", JsonQuote(tasks[i]));
    }
    out += "]";
  }
  return out + "}";
}

}  // namespace tensorgrid
