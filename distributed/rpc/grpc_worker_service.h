// GrpcWorkerService: tensorgrid.WorkerService over a WorkerInterface (the
// in-process Worker of this task), served through a task's GrpcFrontDoor
// (grpc_front_door.h), which checks the token, the request's size and its
// arrival before any method here runs. Decodes requests, calls the worker,
// and encodes the answer; the worker does all the work.
//
//   Worker worker("/job:worker/replica:0/task:0", config);
//   GrpcFrontDoor door{GrpcFrontDoor::Options()};
//   GrpcWorkerService service(&worker, &door);
//   door.RegisterOn(&builder);
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
// that step starts here. A waiting RecvTensor holds no thread: the call
// finishes when the worker delivers the
// tensor, when the client cancels, or a little before the client's deadline
// (DeadlineExceeded naming the key and step), and never waits more than an
// hour; a step that fails or is cleaned up answers with its status. The
// response is written as raw bytes that reference the tensor's memory (see
// tensor_coding.h); a tensor too large for one gRPC message is
// ResourceExhausted.
//
// No method holds a thread while it waits: RunGraph, CompleteGroup and
// CompleteInstance answer from the thread that finishes the partition or the
// group. All of them run on gRPC's callback threads except RegisterGraph,
// which builds the partition's executor on a thread of its own.
// Thread-safe (the worker is).
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_

#include <memory>

namespace tensorgrid {

class BulkServer;
class GrpcCall;
class GrpcFrontDoor;
class WorkerInterface;

class GrpcWorkerService {
 public:
  // Serves tensorgrid.WorkerService's methods through `door`, before its
  // server starts. `worker` and `door` are not owned; the worker must
  // outlive the service, the service the door's server.
  // With `bulk` (not owned, outlives the service), a RecvTensor or RecvBuf
  // that accepts it gets a large tensor as a ticket for its bytes on the
  // bulk port (distributed/transport/bulk_server.h), and a request naming a
  // ticket gets that ticket's bytes inline. The service also serves RecvBuf
  // and RunGraph (kBulkRunGraph) on `bulk`'s port, and GetStatus names that
  // port to clients. The port checks its own BulkServer::Options::token,
  // which must be the door's (Server makes it so).
  GrpcWorkerService(WorkerInterface* worker, GrpcFrontDoor* door, BulkServer* bulk = nullptr);

  GrpcWorkerService(const GrpcWorkerService&) = delete;
  GrpcWorkerService& operator=(const GrpcWorkerService&) = delete;

 private:
  void AddMethods(GrpcFrontDoor* door);
  void ServeOnBulkPort();
  // The request is a serialized RecvTensorRequest, the response a
  // RecvTensorResponse written by EncodeRecvTensorResponse.
  void RecvTensor(std::shared_ptr<GrpcCall> call);
  // Collectives: the leader's group and instance resolution wait (without a
  // thread) until every member joined or the request's timeout, capped by the
  // client's deadline; RecvBuf serves a collective chunk exactly as
  // RecvTensor serves a tensor (a RecvBufRequest in, a RecvBufResponse out).
  void CompleteGroup(std::shared_ptr<GrpcCall> call);
  void CompleteInstance(std::shared_ptr<GrpcCall> call);
  void RecvBuf(std::shared_ptr<GrpcCall> call);
  void RunGraph(std::shared_ptr<GrpcCall> call);

  WorkerInterface* const worker_;
  BulkServer* const bulk_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_H_
