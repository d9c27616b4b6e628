#include "distributed/mpi_cluster_resolver.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/platform/file.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace mpi {

absl::StatusOr<std::vector<HostSlots>> ParseHostfile(absl::string_view name,
                                                     absl::string_view text) {
  std::vector<HostSlots> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    HostSlots entry;
    entry.host = std::string(words[0]);
    for (size_t i = 1; i < words.size(); ++i) {
      absl::string_view word = words[i];
      int value = 0;
      if (absl::ConsumePrefix(&word, "slots=") && absl::SimpleAtoi(word, &value) && value > 0) {
        entry.slots = value;
      } else if (absl::ConsumePrefix(&word, "max_slots=") && absl::SimpleAtoi(word, &value) &&
                 value >= 0) {
        // A cap on oversubscription; the mapping uses slots.
      } else {
        return errors::InvalidArgument(name, ":", line_number, ": '", words[i],
                                       "' is not slots=N or max_slots=N with a positive N");
      }
    }
    bool merged = false;
    for (HostSlots& have : out) {
      if (have.host == entry.host) {
        have.slots += entry.slots;
        merged = true;
      }
    }
    if (!merged) out.push_back(std::move(entry));
  }
  if (out.empty()) return errors::InvalidArgument(name, " names no host");
  return out;
}

}  // namespace mpi

namespace {

// "ps=a:1;worker=b:1,c:1" -> the addresses in the order written, and
// "ps:1,worker:2", the jobs in that order.
absl::Status SplitClusterInOrder(absl::string_view cluster, const ClusterSpecOptions& spec_options,
                                 std::vector<std::string>* addresses, std::string* jobs) {
  absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromFlag(cluster, spec_options);
  if (!spec.ok()) return WithContext(spec.status(), "--cluster");  // every rule checked here
  for (absl::string_view job : absl::StrSplit(cluster, ';', absl::SkipWhitespace())) {
    std::vector<absl::string_view> parts = absl::StrSplit(job, absl::MaxSplits('=', 1));
    const std::string name(absl::StripAsciiWhitespace(parts[0]));
    const int count = spec->num_tasks(name);
    for (int i = 0; i < count; ++i) addresses->push_back(*spec->TaskAddress(name, i));
    absl::StrAppend(jobs, jobs->empty() ? "" : ",", name, ":", count);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ResolvedTask> MpiClusterResolver::Resolve() const {
  using cluster_resolver_internal::GetIndexVariable;
  const std::string rank_variable =
      env_.Has("OMPI_COMM_WORLD_RANK") ? "OMPI_COMM_WORLD_RANK" : "PMIX_RANK";
  TG_ASSIGN_OR_RETURN(int rank, GetIndexVariable(env_, rank_variable));
  ResolvedTask out;
  out.resolver = name();
  out.source = absl::StrCat(rank_variable, "=", rank);
  std::vector<std::string> addresses;
  std::string jobs = options_.mpi_jobs;
  std::string where;  // where the addresses came from, for errors
  const bool has_cluster = !options_.cluster.empty();
  if (has_cluster == !options_.hostfile.empty()) {
    return errors::InvalidArgument(
        "MPI does not tell a rank its peers' addresses: give --cluster or --hostfile (one of "
        "them)");
  }
  if (has_cluster && options_.cluster.find('=') != std::string::npos) {
    if (!jobs.empty()) {
      return errors::InvalidArgument(
          "--mpi_jobs goes with a --cluster of bare addresses; --cluster='", options_.cluster,
          "' names its jobs already");
    }
    TG_RETURN_IF_ERROR(
        SplitClusterInOrder(options_.cluster, options_.spec_options, &addresses, &jobs));
    where = absl::StrCat("--cluster='", options_.cluster, "'");
  } else if (has_cluster) {
    for (absl::string_view a : absl::StrSplit(options_.cluster, ',')) {
      addresses.emplace_back(absl::StripAsciiWhitespace(a));
    }
    where = absl::StrCat("--cluster='", options_.cluster, "'");
  } else {
    absl::StatusOr<std::string> text = ReadFileToString(options_.hostfile);
    if (!text.ok())
      return WithContext(text.status(), absl::StrCat("--hostfile=", options_.hostfile));
    TG_ASSIGN_OR_RETURN(std::vector<mpi::HostSlots> hosts,
                        mpi::ParseHostfile(options_.hostfile, *text));
    // OpenMPI's default mapping (by slot): each host's slots in turn.
    std::vector<int> local_of_rank;
    for (const mpi::HostSlots& h : hosts) {
      for (int k = 0; k < h.slots; ++k) {
        const int port = options_.port_base + k;
        if (port < 1 || port > 65535) {
          return errors::InvalidArgument("--port_base=", options_.port_base, " plus slot ", k,
                                         " of ", h.host, " is not a port in 1..65535");
        }
        addresses.push_back(absl::StrCat(h.host, ":", port));
        local_of_rank.push_back(k);
      }
    }
    where = absl::StrCat("--hostfile=", options_.hostfile);
    // Only as many slots as the world has ranks are used.
    if (env_.Has("OMPI_COMM_WORLD_SIZE")) {
      TG_ASSIGN_OR_RETURN(int size, GetIndexVariable(env_, "OMPI_COMM_WORLD_SIZE"));
      if (size > static_cast<int>(addresses.size())) {
        return errors::InvalidArgument("OMPI_COMM_WORLD_SIZE=", size, " but ", where, " has ",
                                       addresses.size(), " slot(s)");
      }
      addresses.resize(size);
    }
    if (env_.Has("OMPI_COMM_WORLD_LOCAL_RANK") && rank < static_cast<int>(addresses.size())) {
      TG_ASSIGN_OR_RETURN(int local, GetIndexVariable(env_, "OMPI_COMM_WORLD_LOCAL_RANK"));
      if (local != local_of_rank[rank]) {
        return errors::FailedPrecondition(
            rank_variable, "=", rank, " has OMPI_COMM_WORLD_LOCAL_RANK=", local, ", but filling ",
            where, " slot by slot puts it at ", addresses[rank], " (local rank ",
            local_of_rank[rank],
            "), where the other ranks will look for it; run mpirun with --map-by slot");
      }
    }
  }
  if (env_.Has("OMPI_COMM_WORLD_SIZE")) {
    TG_ASSIGN_OR_RETURN(int size, GetIndexVariable(env_, "OMPI_COMM_WORLD_SIZE"));
    if (size != static_cast<int>(addresses.size())) {
      return errors::InvalidArgument("OMPI_COMM_WORLD_SIZE=", size, " but ", where, " has ",
                                     addresses.size(), " task(s)");
    }
  }
  absl::StrAppend(&out.source, " ", where);
  TG_ASSIGN_OR_RETURN(out.config, cluster_resolver_internal::AssignRanks(
                                      "mpi_jobs", jobs, addresses, rank, options_.spec_options));
  return out;
}

}  // namespace tensorgrid
