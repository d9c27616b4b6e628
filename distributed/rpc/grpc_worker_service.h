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
// RecvTensor serves the remote rendezvous: it answers with the tensor once
// this task's partition of the step has sent the key, and may arrive before
// that step starts here. It waits at most until just before the client's
// deadline (then DeadlineExceeded naming the key) and never more than five
// minutes; a step that fails or is cleaned up answers with its status.
//
// Thread-safe (the worker is); methods are synchronous and run on gRPC's
// server threads (a waiting RecvTensor holds one).
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_

#include "grpcpp/grpcpp.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {

class WorkerInterface;

class GrpcWorkerService final : public WorkerService::Service {
 public:
  // `worker` is not owned and must outlive the service.
  explicit GrpcWorkerService(WorkerInterface* worker) : worker_(worker) {}

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
  grpc::Status RunGraph(grpc::ServerContext* context, const RunGraphRequest* request,
                        RunGraphResponse* response) override;
  grpc::Status CleanupGraph(grpc::ServerContext* context, const CleanupGraphRequest* request,
                            CleanupGraphResponse* response) override;
  grpc::Status RecvTensor(grpc::ServerContext* context, const RecvTensorRequest* request,
                          RecvTensorResponse* response) override;

 private:
  WorkerInterface* const worker_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_
