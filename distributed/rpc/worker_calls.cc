#include "distributed/rpc/worker_calls.h"

#include <utility>

#include "core/runtime/worker_interface.h"

namespace tensorgrid {
namespace rpc {

absl::Status GetStatus(WorkerInterface& worker, std::vector<DeviceStatus>* devices) {
  GetStatusResult response;
  absl::Status s = worker.GetStatus(&response);
  if (!s.ok()) return s;
  devices->clear();
  for (DeviceInfo& d : response.devices) {
    devices->push_back({std::move(d.name), std::move(d.type), d.incarnation});
  }
  return absl::OkStatus();
}

absl::Status RegisterGraph(WorkerInterface& worker, GraphDef graph, std::string* graph_handle) {
  RegisterGraphArgs request;
  request.graph = std::move(graph);
  RegisterGraphResult response;
  absl::Status s = worker.RegisterGraph(request, &response);
  if (s.ok()) *graph_handle = std::move(response.graph_handle);
  return s;
}

absl::Status DeregisterGraph(WorkerInterface& worker, const std::string& graph_handle) {
  return worker.DeregisterGraph(graph_handle);
}

absl::Status RunGraph(WorkerInterface& worker, const std::string& graph_handle, int64_t step_id,
                      std::vector<Tensor> feeds, int64_t timeout_in_ms, bool collect_step_stats,
                      std::vector<Tensor>* fetches, StepStats* step_stats) {
  RunGraphArgs request;
  request.graph_handle = graph_handle;
  request.step_id = step_id;
  request.feeds = std::move(feeds);
  request.timeout_in_ms = timeout_in_ms;
  request.collect_step_stats = collect_step_stats;
  RunGraphResult response;
  absl::Status s = worker.RunGraph(request, &response);
  if (!s.ok()) return s;
  *fetches = std::move(response.fetches);
  *step_stats = std::move(response.step_stats);
  return absl::OkStatus();
}

absl::Status CleanupGraph(WorkerInterface& worker, int64_t step_id) {
  return worker.CleanupGraph(step_id);
}

}  // namespace rpc
}  // namespace tensorgrid
