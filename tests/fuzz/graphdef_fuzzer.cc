// GraphDef import and validation (core/graph/graph.h): bytes that parse as a
// GraphDef are imported against every registered op (//ops:all_ops), as a
// worker's RegisterGraph and a master's CreateSession/ExtendSession do with a
// client's graph. A graph is either refused with InvalidArgument or imports
// into a Graph that survives what callers do with one: export, re-import,
// copy, extension, sorting, DOT.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/graph/graph.h"
#include "proto/graph.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

void Check(bool ok, absl::string_view what) {
  if (!ok) fuzz::Fail(what);
}

void FuzzGraphDef(const GraphDef& def) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(def);
  if (!graph.ok()) {
    fuzz::ExpectError(graph.status(), {absl::StatusCode::kInvalidArgument}, "ImportGraphDef");
    return;
  }
  Check((*graph)->num_nodes() == def.node_size(), "a node went missing on import");
  Check(TopologicalSort(**graph).ok(), "an imported graph does not sort");
  // What the graph exports imports again, to the same nodes.
  GraphDef exported;
  (*graph)->ToGraphDef(&exported);
  absl::StatusOr<std::unique_ptr<Graph>> again = ImportGraphDef(exported);
  if (!again.ok()) fuzz::Fail(absl::StrCat("re-import failed: ", again.status().ToString()));
  Check((*again)->num_nodes() == (*graph)->num_nodes(), "re-import changed the node count");
  std::unique_ptr<Graph> copy = CopyGraph(**graph);
  Check(copy->num_nodes() == (*graph)->num_nodes(), "CopyGraph changed the node count");
  (void)ToDot(**graph);
  // Extending a graph by its own nodes repeats every name, and leaves the
  // graph unchanged.
  if (def.node_size() > 0) {
    fuzz::ExpectError(ExtendGraph(def, copy.get()), {absl::StatusCode::kInvalidArgument},
                      "ExtendGraph with the graph's own nodes");
    Check(copy->num_nodes() == (*graph)->num_nodes(), "a failed ExtendGraph changed the graph");
  }
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorgrid::GraphDef def;
  if (def.ParseFromArray(data, static_cast<int>(size))) tensorgrid::FuzzGraphDef(def);
  return 0;
}
