// The WorkerInterface calls with their request structs unpacked into plain
// arguments, for code that speaks proto/worker.proto.
//
// (This split was needed while the core structs and the proto messages
// shared names; they no longer do, and the adapter could be folded into
// grpc_worker_service.cc.)
#ifndef TENSORGRID_DISTRIBUTED_RPC_WORKER_CALLS_H_
#define TENSORGRID_DISTRIBUTED_RPC_WORKER_CALLS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/framework/tensor.h"
#include "proto/graph.pb.h"
#include "proto/step_stats.pb.h"

namespace tensorgrid {

class WorkerInterface;

namespace rpc {

struct DeviceStatus {
  std::string name;  // full name
  std::string type;  // "CPU", "GPU"
  uint64_t incarnation = 0;
};

// Blocking calls on `worker`; each returns what the worker's callback got.
absl::Status GetStatus(WorkerInterface& worker, std::vector<DeviceStatus>* devices);
absl::Status RegisterGraph(WorkerInterface& worker, GraphDef graph, std::string* graph_handle);
absl::Status DeregisterGraph(WorkerInterface& worker, const std::string& graph_handle);
absl::Status RunGraph(WorkerInterface& worker, const std::string& graph_handle, int64_t step_id,
                      std::vector<Tensor> feeds, int64_t timeout_in_ms, bool collect_step_stats,
                      std::vector<Tensor>* fetches, StepStats* step_stats);
absl::Status CleanupGraph(WorkerInterface& worker, int64_t step_id);

}  // namespace rpc
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_WORKER_CALLS_H_
