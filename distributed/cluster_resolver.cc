#include "distributed/cluster_resolver.h"

#include <cstdlib>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/platform/status.h"
#include "distributed/mpi_cluster_resolver.h"
#include "distributed/slurm_cluster_resolver.h"

namespace tensorgrid {

Environment Environment::Process() {
  Environment env;
  env.process_ = true;
  return env;
}

Environment Environment::FromMap(std::map<std::string, std::string> variables) {
  Environment env;
  env.variables_ = std::move(variables);
  return env;
}

std::optional<std::string> Environment::Get(const std::string& name) const {
  if (process_) {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }
  auto it = variables_.find(name);
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

bool Environment::Has(const std::string& name) const {
  std::optional<std::string> value = Get(name);
  return value.has_value() && !value->empty();
}

std::string ResolvedTask::ToString() const {
  std::string out = absl::StrCat("cluster resolver ", resolver);
  if (!source.empty()) absl::StrAppend(&out, " (", source, ")");
  absl::StatusOr<std::string> address =
      config.cluster.TaskAddress(config.task.job, config.task.index);
  absl::StrAppend(&out, ": this task is ", config.task.name());
  if (address.ok()) absl::StrAppend(&out, " at ", *address);
  absl::StrAppend(&out, "; cluster ", config.cluster.ToString());
  if (!cuda_visible_devices.empty()) {
    absl::StrAppend(&out, "; CUDA_VISIBLE_DEVICES=", cuda_visible_devices);
  }
  return out;
}

std::string ResolvedTask::ApplyCudaVisibleDevices() const {
  if (cuda_visible_devices.empty()) return "";
  const char* have = std::getenv("CUDA_VISIBLE_DEVICES");
  if (have != nullptr) {
    return absl::StrCat("CUDA_VISIBLE_DEVICES is already ", have, "; kept (the resolver's is ",
                        cuda_visible_devices, ")");
  }
  setenv("CUDA_VISIBLE_DEVICES", cuda_visible_devices.c_str(), 1);
  return absl::StrCat("CUDA_VISIBLE_DEVICES set to ", cuda_visible_devices);
}

bool FlagsClusterResolver::Present() const {
  return !options_.cluster.empty() || !options_.ps_hosts.empty() ||
         !options_.worker_hosts.empty() || !options_.job_name.empty();
}

absl::StatusOr<ResolvedTask> FlagsClusterResolver::Resolve() const {
  const bool hosts = !options_.ps_hosts.empty() || !options_.worker_hosts.empty();
  if (hosts && !options_.cluster.empty()) {
    return errors::InvalidArgument("give --cluster or --ps_hosts/--worker_hosts, not both");
  }
  if (!hosts && options_.cluster.empty()) {
    return errors::InvalidArgument(
        "--job_name and --task_index need --cluster or --ps_hosts/--worker_hosts");
  }
  if (options_.job_name.empty()) {
    return errors::InvalidArgument(hosts ? "--ps_hosts/--worker_hosts need --job_name"
                                         : "--cluster needs --job_name");
  }
  ResolvedTask out;
  out.resolver = name();
  if (hosts) {
    absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromHostsFlags(
        options_.ps_hosts, options_.worker_hosts, options_.spec_options);
    if (!spec.ok()) return WithContext(spec.status(), "--ps_hosts/--worker_hosts");
    out.config.cluster = *std::move(spec);
  } else {
    absl::StatusOr<ClusterSpec> spec =
        ClusterSpec::FromFlag(options_.cluster, options_.spec_options);
    if (!spec.ok()) return WithContext(spec.status(), "--cluster");
    out.config.cluster = *std::move(spec);
  }
  out.config.task.job = options_.job_name;
  out.config.task.index = options_.task_index < 0 ? 0 : options_.task_index;
  if (!out.config.cluster.HasJob(out.config.task.job)) {
    return errors::InvalidArgument("--job_name '", out.config.task.job,
                                   "' is not a job of the cluster ", out.config.cluster.ToString());
  }
  if (out.config.task.index >= out.config.cluster.num_tasks(out.config.task.job)) {
    return errors::InvalidArgument("--task_index ", out.config.task.index,
                                   " is out of range: job '", out.config.task.job, "' has ",
                                   out.config.cluster.num_tasks(out.config.task.job), " task(s)");
  }
  return out;
}

absl::StatusOr<ResolvedTask> TfConfigClusterResolver::Resolve() const {
  std::optional<std::string> json = env_.Get("TF_CONFIG");
  if (!json.has_value() || json->empty()) return errors::InvalidArgument("TF_CONFIG is not set");
  ResolvedTask out;
  out.resolver = name();
  TG_ASSIGN_OR_RETURN(out.config, TfConfig::ParseTfConfig(*json, options_.spec_options));
  return out;
}

absl::StatusOr<std::unique_ptr<ClusterResolver>> NewClusterResolver(
    const ClusterResolverOptions& options, const Environment& env) {
  const std::string& kind = options.resolver;
  std::unique_ptr<ClusterResolver> flags = std::make_unique<FlagsClusterResolver>(options);
  std::unique_ptr<ClusterResolver> tf_config =
      std::make_unique<TfConfigClusterResolver>(options, env);
  std::unique_ptr<ClusterResolver> slurm = std::make_unique<SlurmClusterResolver>(options, env);
  std::unique_ptr<ClusterResolver> mpi = std::make_unique<MpiClusterResolver>(options, env);
  if (kind == "flags") return flags;
  // Flags of the flags resolver given to another one would be ignored silently.
  if (kind != "auto" && (!options.job_name.empty() || options.task_index >= 0)) {
    return errors::InvalidArgument(
        "--job_name and --task_index belong with --cluster_resolver=flags, not ", kind);
  }
  if (kind == "tf_config") return tf_config;
  if (kind == "slurm") return slurm;
  if (kind == "mpi") return mpi;
  if (kind != "auto") {
    return errors::InvalidArgument("--cluster_resolver='", kind,
                                   "' is not auto, flags, tf_config, slurm or mpi");
  }
  // Under mpirun, --cluster alone is MPI's host list, not a flags cluster.
  const bool mpi_hosts = options.job_name.empty() && options.ps_hosts.empty() &&
                         options.worker_hosts.empty() && mpi->Present();
  if (flags->Present() && !mpi_hosts) return flags;
  if (tf_config->Present()) return tf_config;
  if (slurm->Present()) return slurm;
  if (mpi->Present()) return mpi;
  return errors::InvalidArgument(
      "no cluster: give --cluster (or --ps_hosts/--worker_hosts) and --job_name, set TF_CONFIG, "
      "or start under srun (SLURM_PROCID) or mpirun (OMPI_COMM_WORLD_RANK, PMIX_RANK)");
}

absl::StatusOr<ResolvedTask> ResolveCluster(const ClusterResolverOptions& options,
                                            const Environment& env) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<ClusterResolver> resolver, NewClusterResolver(options, env));
  absl::StatusOr<ResolvedTask> task = resolver->Resolve();
  if (!task.ok())
    return WithContext(task.status(), absl::StrCat("cluster resolver ", resolver->name()));
  return task;
}

namespace cluster_resolver_internal {

absl::StatusOr<std::vector<std::pair<std::string, int>>> ParseJobCounts(absl::string_view flag,
                                                                        absl::string_view value) {
  std::vector<std::pair<std::string, int>> out;
  std::set<std::string> seen;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    int count = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &count) || count <= 0) {
      return errors::InvalidArgument("--", flag, "='", value, "': '", item,
                                     "' is not JOB:COUNT with a positive count");
    }
    std::string job(absl::StripAsciiWhitespace(parts[0]));
    // The cluster's own rules for a job name, with a placeholder address.
    absl::StatusOr<ClusterSpec> check = ClusterSpec::FromMap({{job, {"h:1"}}});
    if (!check.ok()) {
      return errors::InvalidArgument("--", flag, "='", value, "': ", check.status().message());
    }
    if (!seen.insert(job).second) {
      return errors::InvalidArgument("--", flag, "='", value, "' names job '", job, "' twice");
    }
    out.emplace_back(std::move(job), count);
  }
  return out;
}

absl::StatusOr<TfConfig> AssignRanks(absl::string_view flag, absl::string_view jobs,
                                     const std::vector<std::string>& addresses, int rank,
                                     const ClusterSpecOptions& spec_options) {
  const int size = static_cast<int>(addresses.size());
  std::vector<std::pair<std::string, int>> counts;
  if (jobs.empty()) {
    counts.emplace_back("worker", size);
  } else {
    TG_ASSIGN_OR_RETURN(counts, ParseJobCounts(flag, jobs));
  }
  int total = 0;
  for (const auto& [job, count] : counts) total += count;
  if (total != size) {
    return errors::InvalidArgument("--", flag, "='", jobs, "' names ", total,
                                   " task(s) but there are ", size, ": ",
                                   absl::StrJoin(addresses, ","));
  }
  if (rank < 0 || rank >= size) {
    return errors::InvalidArgument("rank ", rank, " is out of range: there are ", size, " task(s)");
  }
  ClusterSpec::JobMap map;
  TfConfig config;
  int next = 0;
  for (const auto& [job, count] : counts) {
    for (int i = 0; i < count; ++i, ++next) {
      if (next == rank) config.task = {job, i};
      map[job].push_back(addresses[next]);
    }
  }
  TG_ASSIGN_OR_RETURN(config.cluster, ClusterSpec::FromMap(map, spec_options));
  return config;
}

absl::StatusOr<int> GetIndexVariable(const Environment& env, const std::string& name) {
  std::optional<std::string> value = env.Get(name);
  if (!value.has_value()) return errors::InvalidArgument(name, " is not set");
  int out = 0;
  if (!absl::SimpleAtoi(*value, &out) || out < 0) {
    return errors::InvalidArgument(name, "='", *value, "' is not a non-negative integer");
  }
  return out;
}

}  // namespace cluster_resolver_internal
}  // namespace tensorgrid
