// WorkerStub: the client end of tensorgrid.WorkerService for one address,
// with plain arguments instead of proto messages (see worker_calls.h for why
// the proto types stay out of this header). GrpcRemoteWorker is its user.
//
// Calls are asynchronous (gRPC's callback API, no thread of our own): each
// returns at once and `done` later runs on a gRPC thread, so it must not
// block for long. Output pointers must stay valid until `done` runs. Every
// call carries the deadline given at construction. Errors keep the peer's
// code and message, prefixed with the method and address; a peer that cannot
// be reached is Unavailable. Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_RPC_WORKER_STUB_H_
#define TENSORGRID_DISTRIBUTED_RPC_WORKER_STUB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/framework/tensor.h"
#include "distributed/rpc/worker_calls.h"
#include "proto/graph.pb.h"
#include "proto/step_stats.pb.h"

namespace tensorgrid {
namespace rpc {

class WorkerStub {
 public:
  using Done = std::function<void(absl::Status)>;

  // `address` is "host:port". The channel connects lazily, on the first call.
  WorkerStub(std::string address, absl::Duration rpc_timeout);
  ~WorkerStub();
  WorkerStub(const WorkerStub&) = delete;
  WorkerStub& operator=(const WorkerStub&) = delete;

  const std::string& address() const;

  void GetStatusAsync(std::vector<DeviceStatus>* devices, Done done);
  void RegisterGraphAsync(const GraphDef& graph, std::string* graph_handle, Done done);
  void DeregisterGraphAsync(const std::string& graph_handle, Done done);
  // Feeds go by _Arg index, fetches come back by _Retval index.
  void RunGraphAsync(const std::string& graph_handle, int64_t step_id,
                     const std::vector<Tensor>& feeds, int64_t timeout_in_ms,
                     bool collect_step_stats, std::vector<Tensor>* fetches, StepStats* step_stats,
                     Done done);
  void CleanupGraphAsync(int64_t step_id, Done done);
  // The tensor this worker's partition of `step_id` sends as `rendezvous_key`.
  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       Done done);

 private:
  struct Connection;  // the channel and the generated stub
  std::unique_ptr<const Connection> connection_;
};

}  // namespace rpc
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_WORKER_STUB_H_
