// Describing a cluster (distributed/cluster_spec.h): the --cluster flag
// ("ps=h:1;worker=h:2,h:3"), --ps_hosts/--worker_hosts, and TF_CONFIG's JSON,
// which a task reads from its environment at start-up. A description is
// refused with InvalidArgument or accepted, and what is accepted prints back
// to itself: FromFlag(spec.ToString()) == spec, ParseTfConfig(c.ToJson()) == c.
//
// Input: byte 0 picks the parser (bit 2: allow port 0); for the hosts flags,
// the rest is "ps_hosts\nworker_hosts".
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "distributed/cluster_spec.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

void CheckSpec(const ClusterSpec& spec, const ClusterSpecOptions& options) {
  absl::StatusOr<ClusterSpec> again = ClusterSpec::FromFlag(spec.ToString(), options);
  if (!again.ok() || *again != spec) {
    fuzz::Fail(absl::StrCat("'", spec.ToString(), "' does not parse back: ",
                            again.ok() ? again->ToString() : again.status().ToString()));
  }
  for (const ClusterSpec::Task& task : spec.AllTasks()) {
    if (task.address.empty() || task.name.empty()) fuzz::Fail("a task without a name or address");
  }
  for (const std::string& job : spec.jobs()) {
    for (int i = 0; i < spec.num_tasks(job); ++i) {
      if (!spec.TaskAddress(job, i).ok()) fuzz::Fail("a listed task has no address");
    }
    if (!absl::IsNotFound(spec.TaskAddress(job, spec.num_tasks(job)).status())) {
      fuzz::Fail("a task past the end is not NotFound");
    }
  }
  (void)spec.ToJson();
}

void Refused(const absl::Status& status, absl::string_view what) {
  fuzz::ExpectError(status, {absl::StatusCode::kInvalidArgument}, what);
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorgrid;
  fuzz::Input in(data, size);
  const uint8_t pick = in.Byte();
  ClusterSpecOptions options;
  options.allow_port_zero = (pick & 4) != 0;
  switch (pick % 3) {
    case 0: {
      absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromFlag(in.Rest(), options);
      if (spec.ok()) {
        CheckSpec(*spec, options);
      } else {
        Refused(spec.status(), "ClusterSpec::FromFlag");
      }
      break;
    }
    case 1: {
      const std::string ps = in.Until("\n");
      absl::StatusOr<ClusterSpec> spec = ClusterSpec::FromHostsFlags(ps, in.Rest(), options);
      if (spec.ok()) {
        CheckSpec(*spec, options);
      } else {
        Refused(spec.status(), "ClusterSpec::FromHostsFlags");
      }
      break;
    }
    case 2: {
      absl::StatusOr<TfConfig> config = TfConfig::ParseTfConfig(in.Rest(), options);
      if (!config.ok()) {
        Refused(config.status(), "TfConfig::ParseTfConfig");
        break;
      }
      // Evaluator-only configs aside, the cluster is a valid spec.
      if (!config->cluster.empty()) CheckSpec(config->cluster, options);
      (void)IsChief(*config);
      absl::StatusOr<TfConfig> again = TfConfig::ParseTfConfig(config->ToJson(), options);
      if (!again.ok() || *again != *config) {
        fuzz::Fail(absl::StrCat("TF_CONFIG ", config->ToJson(), " does not parse back: ",
                                again.ok() ? again->ToJson() : again.status().ToString()));
      }
      break;
    }
  }
  return 0;
}
