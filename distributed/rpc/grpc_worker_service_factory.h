// NewGrpcWorkerService: the gRPC WorkerService of a task, for code that holds
// the task's Worker and so includes core/runtime/worker_interface.h, whose
// structs clash with proto/worker.proto's messages (see worker_calls.h).
//
//   Worker worker("/job:worker/replica:0/task:0", config);
//   std::unique_ptr<grpc::Service> service = NewGrpcWorkerService(&worker);
//   builder.RegisterService(service.get());
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_FACTORY_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_FACTORY_H_

#include <memory>

#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace tensorgrid {

class WorkerInterface;

// A GrpcWorkerService over `worker` (not owned; must outlive the service).
std::unique_ptr<grpc::Service> NewGrpcWorkerService(WorkerInterface* worker);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_FACTORY_H_
