// BulkRoute: the one place that decides whether a request to a peer goes to
// its bulk port (bulk_server.h) or over gRPC, and what a request the port did
// not serve teaches about the port. GrpcRemoteWorker (a master's RunGraph, a
// step's RecvTensor, a collective's RecvBuf, ticket fetches) and GrpcSession
// (a session's RunStep and RunCallable) each keep one per peer and speak
// gRPC only; the route speaks the bulk port.
//
//   BulkRoute route({.host = "10.0.0.2", .addressee = task, .token = token,
//                    .peer = "task /job:ps/replica:0/task:0 (10.0.0.2:2222)",
//                    .discover = ask_get_status});
//   route.CallAsync("RunGraph", [&] { return request.SerializeAsString(); }, deadline,
//                   [](absl::Status s, std::string answer) { /* it ran there */ },
//                   [](absl::Time deadline) { /* send it over gRPC instead */ });
//
// Exactly one of the two callbacks runs, once. `over_grpc` runs, with the
// request's own deadline (what is left of it is the caller's to compute),
// when the request never ran on the port: no port is known yet (with
// Options::discover, one is then asked for in the background), the port
// proved unreachable, the request does not suit it (a wait past
// kBulkMaxWait, a tensor of strings for RecvBuf), or the port did not serve
// it. What a request that was not served teaches:
//   - the port cannot be reached: it is not used again (one line on stderr);
//   - nothing listens there, or another task does: the port is forgotten
//     until the peer names a new one (Learn, a ticket): it may have
//     restarted on another port;
//   - a RecvTensor refused as unknown, or hung up on unread (an older
//     server): RecvTensors keep to gRPC while the peer keeps that port;
//   - otherwise (the server was busy or stopping): nothing, this request's
//     detour only.
// A request that ran there is never sent twice. A request is serialized
// only once the route chose the port. Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_ROUTE_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_ROUTE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/framework/tensor.h"
#include "core/platform/blocking.h"
#include "distributed/transport/bulk_client.h"

namespace tensorgrid {

class BulkRoute {
 public:
  // Asks the peer for its bulk port, in the background; `learned(port)`
  // with its answer (0: it has none), or `learned(nullopt)` when the
  // question failed (asked again later). `learned` may run after the route
  // is gone.
  using Discover = std::function<void(std::function<void(std::optional<int> port)> learned)>;
  struct Options {
    std::string host;       // the peer's host: the host part of its gRPC address
    std::string addressee;  // the peer's task (a port of another task refuses); empty: any
    std::string token;      // the cluster's auth token
    std::string peer;       // names the peer on stderr: "master 10.0.0.2:2222"
    // How to learn the port when no one told it (Learn); none: wait to be told.
    Discover discover;
  };
  explicit BulkRoute(Options options);
  // Requests still waiting end Cancelled (their `done` runs, not
  // `over_grpc`).
  ~BulkRoute();
  BulkRoute(const BulkRoute&) = delete;
  BulkRoute& operator=(const BulkRoute&) = delete;

  // The port the peer named (GetStatus, CreateSession); 0: none. A port
  // whose connection was refused is not taken again from this source (a
  // ticket naming it is believed: FetchTicketAsync).
  void Learn(int port);
  // Whether to accept tickets for large tensors: the port has not proved
  // unreachable.
  bool AcceptsTickets() const { return !unreachable_.load(); }

  using OverGrpc = std::function<void(absl::Time deadline)>;
  using CallDone = std::function<void(absl::Status status, std::string answer)>;
  // The request's bytes, made only when the port takes it.
  using Request = absl::FunctionRef<std::string()>;
  // `method` with `request()`'s bytes (BulkClient::CallAsync).
  void CallAsync(const std::string& method, Request request, absl::Time deadline, CallDone done,
                 OverGrpc over_grpc);
  // CallAsync for a caller that blocks: true with `*status` and `*answer`
  // when it ran on the port, false when it is for gRPC.
  bool Call(const std::string& method, Request request, absl::Time deadline, absl::Status* status,
            std::string* answer);
  // A step's tensor (BulkClient::RecvTensorAsync) into `*out`.
  void RecvTensorAsync(int64_t step_id, const std::string& key, absl::Time deadline, Tensor* out,
                       StatusCallback done, OverGrpc over_grpc);
  // Several tensors of a step in one request (BulkClient::RecvTensorsAsync):
  // `received(i, status)` as each comes. When the port does not take the
  // request (`over_grpc` runs, and no `received` has), the keys are for
  // gRPC, one RecvTensor each. Otherwise `received` runs for every key,
  // with why the request ended for the keys it did not bring.
  using ItemDone = std::function<void(int index, absl::Status status)>;
  void RecvTensorsAsync(int64_t step_id, const std::vector<std::string>& keys, absl::Time deadline,
                        std::vector<Tensor>* outs, ItemDone received, OverGrpc over_grpc);
  // A collective's chunk (BulkClient::RecvBufAsync) into `*tensor`'s buffer
  // when it fits. Chunks of strings keep to gRPC.
  void RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                    StatusCallback done, OverGrpc over_grpc);
  // The bytes of ticket `id`, on `port`, into `tensor` (the tensor the gRPC
  // answer described), then `*out = tensor`; from now on the other requests
  // may go to `port` too. `over_grpc`: the ticket is still there, ask for
  // its bytes over gRPC.
  void FetchTicketAsync(int port, std::string id, Tensor tensor, Tensor* out,
                        absl::Duration timeout, StatusCallback done, OverGrpc over_grpc);

  // The port last learned, 0 when none (for tests: requests do not go there
  // once it proved unreachable).
  int port() const { return known_->port.load(); }

 private:
  // What is known of the port; shared with a discovery in flight, whose
  // answer may come after the route is gone.
  struct Known {
    std::atomic<int> port{0};        // 0: unknown
    std::atomic<int> refused{0};     // the port whose connection was last refused
    std::atomic<bool> asked{false};  // discovery asked, since the port was last forgotten
    // A port that did not serve a direct RecvTensor (an older server hangs
    // up on it; one without the handler says Unimplemented): RecvTensor
    // goes over gRPC while the peer keeps that port.
    std::atomic<int> no_recv_tensor{0};
    // The same for RecvTensors (a server that serves RecvTensor one at a
    // time only): its keys go over gRPC.
    std::atomic<int> no_recv_tensors{0};
    void Learn(int learned);
  };
  // The port for a request that may wait until `deadline`; 0 when it is
  // for gRPC (none known yet: then discovery starts).
  int PortFor(absl::Time deadline);
  // A request on `port` was not served (`fallback` says how; `why` is its
  // status): stops using the port, or forgets it.
  void NotServed(int port, BulkClient::Fallback fallback, const absl::Status& why);
  // Stops using the port, saying `why` once on stderr.
  void MarkUnreachable(const absl::Status& why);

  const Options options_;
  const std::shared_ptr<Known> known_ = std::make_shared<Known>();
  std::atomic<bool> unreachable_{false};
  // Declared last, so destroyed first: callbacks it ends while it closes may
  // still reach the route (they end Cancelled, sending nothing elsewhere).
  BulkClient client_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_ROUTE_H_
