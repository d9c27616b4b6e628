// tg_inspect: where every node of a GraphDef goes on a cluster, and why.
//
//   tg_inspect --graph=model.pbtxt --cluster="ps=h:2222;worker=h:2223,h:2224"
//   tg_inspect --graph=model.pbtxt --explain=x/Assign
//   tg_inspect --trace=run_metadata.pb --out=trace.json
//   tg_inspect --checkpoint=/ckpt/model-300 [--tensor=layer1/w]
//
// See docs/placement.md and `tg_inspect --help`. The placing, partitioning and
// printing live in inspect_lib and inspect_format; this file does the I/O.
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/platform/status.h"
#include "core/runtime/trace.h"
#include "tools/flags.h"
#include "tools/inspect_checkpoint.h"
#include "tools/inspect_format.h"
#include "tools/inspect_lib.h"
#include "tools/tg_run_lib.h"

extern char** environ;

namespace tensorgrid {
namespace tg_inspect {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& content) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return errors::NotFound("cannot write '", path, "': ", std::strerror(errno));
  const bool written = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  const int error = written ? 0 : errno;
  if (std::fclose(file) != 0 || !written) {
    return errors::NotFound("cannot write '", path,
                            "': ", std::strerror(error != 0 ? error : errno));
  }
  return absl::OkStatus();
}

// Renders `dot_path`.svg with Graphviz when `dot` is on PATH; nothing when
// it is not. A `dot` that fails is worth a warning, not an error.
void RenderSvg(const std::string& dot_path) {
  const std::string svg = dot_path + ".svg";
  std::vector<std::string> args = {"dot", "-Tsvg", dot_path, "-o", svg};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ) != 0) return;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return;  // not found after all
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "tg_inspect: warning: `dot -Tsvg " << dot_path << "` failed; no " << svg << "\n";
  }
}

absl::Status ConvertTrace(const Options& options) {
  TG_ASSIGN_OR_RETURN(RunMetadata metadata, LoadRunMetadata(options.trace_path));
  const std::string json = ToChromeTrace(metadata);
  if (options.out_path.empty()) {
    std::cout << json;
    return absl::OkStatus();
  }
  return WriteFile(options.out_path, json);
}

absl::Status InspectGraph(const Options& options, const std::vector<DeviceAttributes>& devices) {
  TG_ASSIGN_OR_RETURN(GraphDef graph, tg_run::LoadGraphDef(options.graph_path));
  std::map<std::string, std::string> addresses;
  // DevicesFromOptions has parsed the cluster already, so this cannot fail.
  if (!options.cluster.empty()) addresses = TaskAddresses(ParseCluster(options.cluster).value());
  PlacerOptions placer;
  placer.allow_soft_placement = options.allow_soft_placement;
  placer.default_device =
      options.default_device.empty() ? DefaultDevice(devices) : options.default_device;

  if (!options.explain.empty()) {
    TG_ASSIGN_OR_RETURN(Explanation explanation,
                        ExplainPlacement(graph, devices, placer, options.explain));
    std::cout << explanation.text;
    std::cout.flush();
    return explanation.placement;
  }
  TG_ASSIGN_OR_RETURN(Inspection inspection,
                      Inspect(graph, devices, placer, addresses, options.feed_shapes));
  if (options.json) {
    std::cout << InspectionToJson(inspection);
  } else {
    std::cout << FormatPlacementTable(inspection) << "\n"
              << FormatPartitionSummary(inspection) << "\n"
              << FormatTransfers(inspection);
  }
  std::cout.flush();
  if (!options.dot_path.empty()) {
    TG_RETURN_IF_ERROR(WriteFile(options.dot_path, InspectionToDot(inspection)));
    RenderSvg(options.dot_path);
  }
  return absl::OkStatus();
}

int Main(const std::vector<std::string>& args) {
  absl::StatusOr<Options> options = ParseFlags(args);
  if (!options.ok()) {
    return tools::ReportUsageError("tg_inspect", options.status().message(), Usage());
  }
  if (options->help) {
    std::cout << Usage();
    return 0;
  }
  absl::Status status;
  if (!options->checkpoint.empty()) {
    absl::StatusOr<std::string> text =
        options->tensor.empty() ? ListCheckpoint(options->checkpoint)
                                : PrintCheckpointTensor(options->checkpoint, options->tensor);
    if (text.ok()) std::cout << *text << std::flush;
    status = text.status();
  } else if (options->trace_path.empty()) {
    // A device set that does not parse is a flag error, like the flags.
    absl::StatusOr<std::vector<DeviceAttributes>> devices = DevicesFromOptions(*options);
    if (!devices.ok()) return tools::ReportUsageError("tg_inspect", devices.status().message());
    status = InspectGraph(*options, *devices);
  } else {
    status = ConvertTrace(*options);
  }
  return tools::ReportError(status);
}

}  // namespace
}  // namespace tg_inspect
}  // namespace tensorgrid

int main(int argc, char** argv) {
  return tensorgrid::tg_inspect::Main(std::vector<std::string>(argv + 1, argv + argc));
}
