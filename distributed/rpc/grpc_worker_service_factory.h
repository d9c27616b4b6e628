// NewGrpcWorkerService: the gRPC WorkerService of a task as a plain
// grpc::Service, so that callers need not include the generated headers.
//
//   Worker worker("/job:worker/replica:0/task:0", config);
//   std::unique_ptr<grpc::Service> service = NewGrpcWorkerService(&worker);
//   builder.RegisterService(service.get());
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_FACTORY_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_FACTORY_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace tensorgrid {

class BulkServer;
class WorkerInterface;

// A GrpcWorkerService over `worker` (not owned; must outlive the service).
// `auth_token` and `bulk`: see GrpcWorkerService.
std::unique_ptr<grpc::Service> NewGrpcWorkerService(WorkerInterface* worker,
                                                    std::string auth_token = "",
                                                    BulkServer* bulk = nullptr);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_SERVICE_FACTORY_H_
