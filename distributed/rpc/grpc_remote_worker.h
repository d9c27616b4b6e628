// GrpcRemoteWorker: a WorkerInterface whose worker lives in another process,
// reached over tensorgrid.WorkerService. A Master drives it exactly as it
// drives the in-process Worker.
//
//   GrpcRemoteWorker worker("localhost:2223");
//   Master master(config, &worker, "/job:worker/replica:0/task:0");
//
// The *Async methods return at once: the RPC goes out on gRPC's callback API
// and `done` runs on a gRPC thread when it completes,
// so `done` must not block for long. RunGraph, RecvTensor and RecvBuf go to
// the peer's bulk port instead when its BulkRoute says so
// (distributed/transport/bulk_route.h); their `done` then runs on the bulk
// client's watcher or pool thread, under the same rule. Response pointers must stay valid until
// `done` runs, and must not destroy the worker from inside. Destroying the
// worker cancels the calls still in flight (their `done` runs, Cancelled)
// and waits until none uses the worker: none outlives it (the master's
// fire-and-forget CleanupGraph to a frozen task, say). Every RPC has a
// deadline (Options::rpc_timeout); statuses come back with the peer's code
// and message, prefixed with the method and address; an unreachable peer is
// Unavailable naming the address. Messages up to kMaxGrpcMessageBytes (2 GiB
// - 1, or Options::max_message_bytes) go both ways. Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_REMOTE_WORKER_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_REMOTE_WORKER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/runtime/worker_interface.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/transport/bulk_route.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {

class GrpcRemoteWorker final : public WorkerInterface {
 public:
  struct Options {
    // Per RPC, for calls that do a bounded amount of work.
    absl::Duration rpc_timeout = absl::Seconds(60);
    // RunGraph and RecvTensor wait for a step, which may legitimately block
    // (a queue, a synchronous-training token) for long: RunGraph's deadline
    // is the step's timeout_in_ms plus a grace when it has one, else this;
    // RecvTensor's is this. A peer that dies is noticed sooner: the channel
    // pings during calls (keepalive) and a closed connection fails at once.
    absl::Duration step_rpc_timeout = absl::Hours(1);
    RpcSecurity security;  // the token and TLS settings of the peer's server
    // The peer's task name ("/job:ps/replica:0/task:0"), for errors; empty:
    // errors name the address only.
    std::string task;
    // The largest message either way: feeds going out, fetches and received
    // tensors coming in. Beyond it a call fails with ResourceExhausted naming
    // both sizes; gRPC cannot carry more than the default. Tensors fetched by
    // bulk ticket or straight from the bulk port (below) are not messages
    // and have no such limit (beyond 2 GiB for a tensor of strings).
    size_t max_message_bytes = kMaxGrpcMessageBytes;
    // Use the peer's bulk port (distributed/transport/): RecvTensor and
    // RecvBuf accept a ticket for a large tensor's bytes and fetch them
    // there, and RunGraph, RecvTensor and RecvBuf go there directly once
    // GetStatus (or a ticket) has named it.
    // Never with TLS. A port that cannot be reached is reported once on
    // stderr; everything then goes over gRPC.
    bool bulk_transfer = true;
  };

  // `address` is "host:port"; nothing connects until the first call.
  explicit GrpcRemoteWorker(std::string address)
      : GrpcRemoteWorker(std::move(address), Options()) {}
  GrpcRemoteWorker(std::string address, const Options& options);
  // Cancels the calls still in flight (over gRPC and on the bulk port) and
  // waits for them to finish.
  ~GrpcRemoteWorker() override;

  const std::string& address() const { return address_; }

  void GetStatusAsync(absl::Time deadline, GetStatusResult* response, StatusCallback done) override;
  void RegisterGraphAsync(const RegisterGraphArgs& request, RegisterGraphResult* response,
                          StatusCallback done) override;
  void DeregisterGraphAsync(const std::string& graph_handle, absl::Time deadline,
                            StatusCallback done) override;
  void RunGraphAsync(const RunGraphArgs& request, RunGraphResult* response,
                     StatusCallback done) override;
  void CleanupGraphAsync(int64_t step_id, StatusCallback done) override;
  void CleanupAllAsync(const std::vector<std::string>& containers, StatusCallback done) override;
  // The receiving end of the remote rendezvous: pulls a tensor the peer's
  // partition of `step_id` sends, waiting for it up to
  // Options::step_rpc_timeout (a bulk fetch after that takes at most
  // Options::rpc_timeout). A `cancellation` is not passed on to the call
  // yet: the peer's wait ends when the master cleans the step up there. The
  // response arrives as raw bytes and is decoded straight into `tensor`'s
  // buffer (see
  // tensor_coding.h); a response that does not decode is DataLoss or
  // InvalidArgument naming the key.
  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       StatusCallback done, CancellationManager* cancellation = nullptr) override;
  // On the peer's bulk port, one request for all the keys (the tensors
  // come as the peer sends them); else one RecvTensor each.
  void RecvTensorsAsync(int64_t step_id, const std::vector<std::string>& keys,
                        std::vector<Tensor>* tensors,
                        std::function<void(int index, absl::Status status)> received,
                        CancellationManager* cancellation = nullptr) override;
  // Collectives: joins at the peer (the group leader) with a deadline of the
  // request's timeout plus a grace, so the leader's answer (DeadlineExceeded
  // naming who never joined) arrives before the RPC's own deadline; RecvBuf
  // pulls a collective chunk like RecvTensor, until `deadline` (plus a grace).
  // Chunks (of plain dtypes, due within kBulkMaxWait) go straight to the
  // peer's bulk port once its GetStatus or a ticket has named it
  // (BulkRoute::RecvBufAsync), without gRPC; the port is asked for in the
  // background the first time.
  void CompleteGroupAsync(const CompleteGroupArgs& request, CompleteGroupResult* response,
                          StatusCallback done) override;
  void CompleteInstanceAsync(const CompleteInstanceArgs& request, CompleteInstanceResult* response,
                             StatusCallback done) override;
  void RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                    StatusCallback done, CancellationManager* cancellation = nullptr) override;

 private:
  // The timeout of a call that must end by `deadline` (InfiniteFuture: the
  // RPC timeout).
  absl::Duration TimeoutUntil(absl::Time deadline) const;
  // Cancelled: `method` was not sent, as the destructor runs.
  absl::Status Going(absl::string_view method) const;
  // `status` of a finished call, prefixed with `method` and the address.
  absl::Status Finish(absl::string_view method, const grpc::Status& status) const;
  // Asks for tickets unless disabled or the bulk port proved unreachable.
  bool AcceptBulk() const { return bulk_ != nullptr && bulk_->AcceptsTickets(); }
  // Asks the peer's GetStatus for its bulk port, for the route, in the
  // background: the destructor cancels it and waits for it.
  void DiscoverBulkPort(std::function<void(std::optional<int> port)> learned);
  // RunGraph over gRPC.
  void RunGraphCall(std::shared_ptr<RunGraphRequest> wire, absl::Duration deadline,
                    RunGraphResult* response, StatusCallback done);
  // RunGraph's status `s` and answer `wire` into `response`, with context.
  absl::Status FinishRunGraph(absl::Status s, RunGraphResponse* wire,
                              RunGraphResult* response) const;
  // Completes a RecvTensor/RecvBuf call (`call` owns `response`; it is
  // released before `done` runs): the tensor inline (decoded into `into`'s
  // buffer when it fits; see DecodeRecvTensorResponse), or the ticket's
  // bytes fetched from the bulk port into the tensor the answer describes.
  // When the port cannot be reached, `ask_inline(id, done)` asks for the
  // ticket's bytes over gRPC instead.
  void ReceiveTensor(const std::string& method, const grpc::Status& status,
                     std::shared_ptr<void> call, const grpc::ByteBuffer& response,
                     const Tensor* into, Tensor* out,
                     std::function<void(std::string id, StatusCallback done)> ask_inline,
                     StatusCallback done);
  // RecvTensor/RecvBuf requests; with a non-empty `ticket`, for that ticket's
  // bytes inline.
  // (RecvTensor's deadline: `timeout` from now.)
  void RecvTensorCall(int64_t step_id, const std::string& rendezvous_key, std::string ticket,
                      absl::Duration timeout, Tensor* tensor, StatusCallback done);
  void RecvBufCall(const std::string& key, absl::Time deadline, std::string ticket, Tensor* tensor,
                   StatusCallback done);

  const std::string address_;
  const std::string peer_;  // "worker 127.0.0.1:2222" or "task /job:ps/... (127.0.0.1:2222)"
  const absl::Duration rpc_timeout_;
  const absl::Duration step_rpc_timeout_;
  const RpcSecurity security_;
  const size_t max_message_bytes_;
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<WorkerService::Stub> stub_;
  // RecvTensor with the response left as bytes for DecodeRecvTensorResponse.
  grpc::TemplatedGenericStub<RecvTensorRequest, grpc::ByteBuffer> raw_stub_;
  grpc::TemplatedGenericStub<RecvBufRequest, grpc::ByteBuffer> raw_buf_stub_;
  // The way to the peer's bulk port; null: never used.
  const std::unique_ptr<BulkRoute> bulk_;

 public:
  // The gRPC calls in flight and the callbacks still using this worker
  // (internal; grpc_remote_worker.cc).
  struct InFlight;

 private:
  // The destructor cancels the calls and waits until nothing holds it. So
  // each call's channel reference goes before the channel's last one, which
  // must go in the destructor, never on gRPC's callback thread (whose pool
  // it would join from inside and free while it still runs: grpc/grpc#32584).
  const std::shared_ptr<InFlight> in_flight_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_REMOTE_WORKER_H_
