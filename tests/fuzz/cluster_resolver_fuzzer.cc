// What launchers hand a task (distributed/slurm_cluster_resolver.h,
// mpi_cluster_resolver.h): Slurm's hostlists and task counts, OpenMPI's
// hostfiles, and a whole Slurm environment for the resolver. Each is
// refused with InvalidArgument (the resolver: FailedPrecondition for a
// layout it does not match) or accepted, and what is accepted is sane:
// hostlist names are non-empty and bracket-free, counts positive, a
// resolved task is in its cluster at SLURMD_NODENAME:port_base+SLURM_LOCALID.
//
// Input: byte 0 picks 0 hostlist, 1 tasks per node, 2 hostfile, 3 the Slurm
// resolver, whose rest is "NAME=VALUE" lines for its environment.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "distributed/mpi_cluster_resolver.h"
#include "distributed/slurm_cluster_resolver.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorgrid;
  fuzz::Input in(data, size);
  const uint8_t pick = in.Byte();
  const std::string text = in.Rest();
  const auto refused = [](const absl::Status& s, absl::string_view what) {
    fuzz::ExpectError(s, {absl::StatusCode::kInvalidArgument}, what);
  };
  switch (pick % 4) {
    case 0: {
      auto hosts = slurm::ExpandHostlist(text);
      if (!hosts.ok()) return refused(hosts.status(), "ExpandHostlist"), 0;
      if (hosts->empty() || hosts->size() > 1000000) fuzz::Fail("hostlist of a bad size");
      for (const std::string& h : *hosts) {
        if (h.empty() || h.find_first_of("[],") != std::string::npos) {
          fuzz::Fail(absl::StrCat("hostlist name '", h, "'"));
        }
      }
      break;
    }
    case 1: {
      auto counts = slurm::ExpandTasksPerNode(text);
      if (!counts.ok()) return refused(counts.status(), "ExpandTasksPerNode"), 0;
      for (int c : *counts) {
        if (c <= 0) fuzz::Fail("a task count that is not positive");
      }
      break;
    }
    case 2: {
      auto hosts = mpi::ParseHostfile("hosts", text);
      if (!hosts.ok()) return refused(hosts.status(), "ParseHostfile"), 0;
      for (const mpi::HostSlots& h : *hosts) {
        if (h.host.empty() || h.slots <= 0) fuzz::Fail("a hostfile entry without host or slots");
      }
      break;
    }
    case 3: {
      std::map<std::string, std::string> env;
      for (absl::string_view line : absl::StrSplit(text, '\n')) {
        std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
        env[kv.first] = kv.second;
      }
      ClusterResolverOptions options;
      options.slurm_jobs = (pick & 4) != 0 ? "ps:1,worker:2" : "";
      auto task = SlurmClusterResolver(options, Environment::FromMap(env)).Resolve();
      if (!task.ok()) {
        fuzz::ExpectError(
            task.status(),
            {absl::StatusCode::kInvalidArgument, absl::StatusCode::kFailedPrecondition},
            "SlurmClusterResolver");
        return 0;
      }
      auto address =
          task->config.cluster.TaskAddress(task->config.task.job, task->config.task.index);
      const std::string want = absl::StrCat(env["SLURMD_NODENAME"], ":",
                                            options.port_base + std::stoi(env["SLURM_LOCALID"]));
      if (!address.ok() || *address != want) {
        fuzz::Fail(
            absl::StrCat("resolved task at ", address.ok() ? *address : "nowhere", ", not ", want));
      }
      break;
    }
  }
  return 0;
}
