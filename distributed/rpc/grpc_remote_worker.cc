#include "distributed/rpc/grpc_remote_worker.h"

#include <memory>
#include <utility>
#include <vector>

namespace tensorgrid {

GrpcRemoteWorker::GrpcRemoteWorker(std::string address, const Options& options)
    : stub_(std::move(address), options.rpc_timeout) {}

void GrpcRemoteWorker::GetStatusAsync(GetStatusResult* response, StatusCallback done) {
  auto devices = std::make_shared<std::vector<rpc::DeviceStatus>>();
  stub_.GetStatusAsync(devices.get(), [devices, response, done = std::move(done)](absl::Status s) {
    if (s.ok()) {
      response->devices.clear();
      for (rpc::DeviceStatus& d : *devices) {
        response->devices.push_back({std::move(d.name), std::move(d.type), d.incarnation});
      }
    }
    done(s);
  });
}

void GrpcRemoteWorker::RegisterGraphAsync(const RegisterGraphArgs& request,
                                          RegisterGraphResult* response, StatusCallback done) {
  stub_.RegisterGraphAsync(request.graph, &response->graph_handle, std::move(done));
}

void GrpcRemoteWorker::DeregisterGraphAsync(const std::string& graph_handle, StatusCallback done) {
  stub_.DeregisterGraphAsync(graph_handle, std::move(done));
}

void GrpcRemoteWorker::RunGraphAsync(const RunGraphArgs& request, RunGraphResult* response,
                                     StatusCallback done) {
  stub_.RunGraphAsync(request.graph_handle, request.step_id, request.feeds, request.timeout_in_ms,
                      request.collect_step_stats, &response->fetches, &response->step_stats,
                      std::move(done));
}

void GrpcRemoteWorker::CleanupGraphAsync(int64_t step_id, StatusCallback done) {
  stub_.CleanupGraphAsync(step_id, std::move(done));
}

void GrpcRemoteWorker::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key,
                                       Tensor* tensor, StatusCallback done) {
  stub_.RecvTensorAsync(step_id, rendezvous_key, tensor, std::move(done));
}

}  // namespace tensorgrid
