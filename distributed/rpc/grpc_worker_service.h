// GrpcWorkerService: tensorgrid.WorkerService over a WorkerInterface (the
// in-process Worker of this task). Decodes requests, calls the worker, and
// encodes the answer; the worker does all the work.
//
//   Worker worker("/job:worker/replica:0/task:0", config);
//   GrpcWorkerService service(&worker);
//   grpc::ServerBuilder builder;
//   builder.RegisterService(&service);
//
// Bad input (a malformed tensor, a feed index out of range, an unknown graph
// handle) is answered with InvalidArgument / NotFound and a message; worker
// statuses cross the wire with their code and message unchanged.
// CreateWorkerSession and DeleteWorkerSession keep no state yet and answer
// OK.
//
// RecvTensor serves the remote rendezvous (and RecvBuf, the same way,
// collective chunks): it answers with the tensor once
// this task's partition of the step has sent the key, and may arrive before
// that step starts here. It runs on gRPC's callback API, so a waiting
// RecvTensor holds no thread: the call finishes when the worker delivers the
// tensor, when the client cancels, or a little before the client's deadline
// (DeadlineExceeded naming the key and step), and never waits more than five
// minutes; a step that fails or is cleaned up answers with its status. The
// response is written as raw bytes that reference the tensor's memory (see
// tensor_coding.h); a tensor too large for one gRPC message is
// ResourceExhausted.
//
// RunGraph, CompleteGroup and CompleteInstance run on the callback API too:
// no server thread waits for a partition or a group, and the answer goes
// out from the thread that finishes it. These callback methods take raw
// bytes and parse them here, so garbage is InvalidArgument like everywhere
// else (gRPC's generated callback handler would answer a bare Unimplemented).
//
// Every handler starts from the request's context, so a per-call check (such
// as an auth token in the metadata) goes at the top of each. Thread-safe
// (the worker is); the other methods are synchronous on gRPC's server threads.
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_

#include <string>

#include "grpcpp/grpcpp.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {

class BulkServer;
class WorkerInterface;

class GrpcWorkerService final
    : public WorkerService::WithRawCallbackMethod_RunGraph<
          WorkerService::WithRawCallbackMethod_RecvBuf<
              WorkerService::WithRawCallbackMethod_CompleteGroup<
                  WorkerService::WithRawCallbackMethod_CompleteInstance<
                      WorkerService::WithRawCallbackMethod_RecvTensor<WorkerService::Service>>>>> {
 public:
  // `worker` is not owned and must outlive the service. With a non-empty
  // `auth_token`, every call must carry it (RpcSecurity in grpc_util.h) or
  // is Unauthenticated before any work. With `bulk` (not owned, outlives the
  // service), a RecvTensor or RecvBuf that accepts it gets a large tensor as
  // a ticket for its bytes on the bulk port (distributed/transport/bulk_server.h), and a request
  // naming a ticket gets that ticket's bytes inline.
  // The service also serves RecvBuf and RunGraph (kBulkRunGraph) on
  // `bulk`'s port, and GetStatus names that port to clients. The port
  // checks its own BulkServer::Options::token, which must be `auth_token`
  // (Server makes it so).
  explicit GrpcWorkerService(WorkerInterface* worker, std::string auth_token = "",
                             BulkServer* bulk = nullptr);

  grpc::Status GetStatus(grpc::ServerContext* context, const GetStatusRequest* request,
                         GetStatusResponse* response) override;
  grpc::Status CreateWorkerSession(grpc::ServerContext* context,
                                   const CreateWorkerSessionRequest* request,
                                   CreateWorkerSessionResponse* response) override;
  grpc::Status DeleteWorkerSession(grpc::ServerContext* context,
                                   const DeleteWorkerSessionRequest* request,
                                   DeleteWorkerSessionResponse* response) override;
  grpc::Status RegisterGraph(grpc::ServerContext* context, const RegisterGraphRequest* request,
                             RegisterGraphResponse* response) override;
  grpc::Status DeregisterGraph(grpc::ServerContext* context, const DeregisterGraphRequest* request,
                               DeregisterGraphResponse* response) override;
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::Status CleanupGraph(grpc::ServerContext* context, const CleanupGraphRequest* request,
                            CleanupGraphResponse* response) override;
  grpc::Status CleanupAll(grpc::ServerContext* context, const CleanupAllRequest* request,
                          CleanupAllResponse* response) override;
  // The request is a serialized RecvTensorRequest, the response a
  // RecvTensorResponse written by EncodeRecvTensorResponse.
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  // Collectives: the leader's group and instance resolution wait (without a
  // thread) until every member joined or the request's timeout, capped by the
  // client's deadline; RecvBuf serves a collective chunk exactly as
  // RecvTensor serves a tensor (a RecvBufRequest in, a RecvBufResponse out).
  grpc::ServerUnaryReactor* CompleteGroup(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* CompleteInstance(grpc::CallbackServerContext* context,
                                             const grpc::ByteBuffer* request,
                                             grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* RecvBuf(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;

 private:
  WorkerInterface* const worker_;
  const std::string auth_token_;
  BulkServer* const bulk_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_
