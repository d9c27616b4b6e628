// GrpcSession: a Session whose master runs in another process, reached over
// tensorgrid.MasterService at target "grpc://host:port". Linking
// //distributed/rpc:grpc_session registers it for the "grpc://" prefix, so
// the ordinary entry point works:
//
//   SessionOptions options;
//   options.target = "grpc://localhost:2222";
//   TG_ASSIGN_OR_RETURN(auto session, NewSession(options));
//   TG_RETURN_IF_ERROR(session->Create(graph_def));
//
// Every RPC has a deadline: ConfigProto.operation_timeout_in_ms if set, else
// 60 s. A step gets its RunOptions.timeout_in_ms (or its callable's, or
// operation_timeout_in_ms) plus a second of grace, so that the master's own
// DeadlineExceeded, which names what was slow, arrives first; a step with no
// timeout at all gets an hour, since steps may legitimately block (queues,
// synchronous training). A master that dies is noticed sooner: the channel
// pings during calls (keepalive). The master's statuses come back with their code and message (the
// internal "derived error" mark removed); transport failures (Unavailable,
// DeadlineExceeded, Cancelled) name the master's address. Nothing connects
// until the first call. Credentials (an auth token, TLS) come from the
// environment: TG_AUTH_TOKEN_FILE, TG_TLS_CA_FILE, TG_TLS_CERT_FILE,
// TG_TLS_KEY_FILE (see RpcSecurity). Destroying an open session closes it on the master
// (best effort). Thread-safe, as Session promises.
//
// When the master names a bulk port in its CreateSession answer (a tg_server
// without TLS does), RunStep and RunCallable go there: a plain TCP round trip
// instead of a gRPC call, with the same deadline, token, statuses and
// cancellation (closing the connection cancels the step). A request the port
// did not serve (unreachable, refused, at its limit, or a port serving no
// steps) goes over gRPC instead, with what is left of its time; after an
// unreachable or refused port, so do all later ones of the session. A step
// that ran there is never sent twice. A master that freezes mid-step is
// reported Unavailable within about 40 s (the bulk port's beats). The
// choice between the port and gRPC is the session's BulkRoute
// (distributed/transport/bulk_route.h).
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_SESSION_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/public/session.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/transport/bulk_route.h"
#include "proto/master.grpc.pb.h"

namespace tensorgrid {

class GrpcSession final : public Session {
 public:
  // InvalidArgument unless options.target is "grpc://host:port".
  static absl::StatusOr<std::unique_ptr<GrpcSession>> New(const SessionOptions& options);
  ~GrpcSession() override;

  absl::Status Create(const GraphDef& graph) override;
  absl::Status Extend(const GraphDef& graph) override;
  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_names, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override;
  using Session::Run;
  absl::StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) override;
  absl::Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                           std::vector<Tensor>* fetches, RunMetadata* run_metadata) override;
  absl::Status ReleaseCallable(CallableHandle handle) override;
  absl::Status Close() override;
  absl::StatusOr<std::vector<DeviceInfo>> ListDevices() override;
  absl::Status Reset(const std::vector<std::string>& containers) override;

 private:
  GrpcSession(std::string address, const ConfigProto& config, RpcSecurity security);
  // Sets the call's deadline and credentials.
  void Prepare(grpc::ClientContext* context, absl::Duration timeout) const;

  // The session handle, or FailedPrecondition before Create / after Close.
  absl::StatusOr<std::string> Handle() const;
  // The RPC deadline for a step with `options`.
  absl::Duration StepTimeout(const RunOptions& options) const;
  // `status` as the caller sees it: see the header comment.
  absl::Status Finish(const char* method, const grpc::Status& status) const;
  absl::Status Finish(const char* method, absl::Status status) const;
  // Sends a step's `request` (RunStep, RunCallable) to the master, on its
  // bulk port when it has one and over gRPC otherwise, or when the port did
  // not serve it; the answer in `*response`. `timeout` bounds both.
  absl::Status CallStep(const char* method, const google::protobuf::Message& request,
                        google::protobuf::Message* response, absl::Duration timeout,
                        const std::function<grpc::Status(grpc::ClientContext*)>& over_grpc);
  // The bulk port's part: true with `*status` (as Finish makes it) and
  // `*response` when the step ran there; false when it must go over gRPC.
  bool CallOnBulk(const char* method, const google::protobuf::Message& request,
                  google::protobuf::Message* response, absl::Time deadline, absl::Status* status);

  const std::string address_;  // host:port
  const ConfigProto config_;
  const absl::Duration rpc_timeout_;
  const RpcSecurity security_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<MasterService::Stub> stub_;
  // The way to the master's bulk port, which CreateSession names; null
  // with TLS (the bytes would travel unencrypted).
  const std::unique_ptr<BulkRoute> bulk_;

  mutable absl::Mutex mu_;
  std::string handle_ ABSL_GUARDED_BY(mu_);  // empty before Create
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // Deadlines of callables that asked for one, by callable handle.
  absl::flat_hash_map<CallableHandle, absl::Duration> callable_timeouts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_SESSION_H_
