#include "distributed/rpc/grpc_worker_test_raw.h"

#include <chrono>
#include <memory>

#include "distributed/rpc/grpc_util.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {
namespace {

std::unique_ptr<WorkerService::Stub> NewStub(const std::string& address) {
  return WorkerService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

void SetTenSecondDeadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
}

}  // namespace

grpc::Status RawRunGraph(const std::string& address, const std::string& graph_handle,
                         const std::string& feed_name, bool malformed) {
  RunGraphRequest request;
  request.set_graph_handle(graph_handle);
  NamedTensorProto* feed = request.add_send();
  feed->set_name(feed_name);
  TensorProto* tensor = feed->mutable_tensor();
  tensor->set_dtype(DT_FLOAT);
  tensor->mutable_tensor_shape()->add_dim()->set_size(malformed ? 4 : 1);
  tensor->set_tensor_content(malformed ? std::string(3, '\0') : std::string(4, '\0'));
  RunGraphResponse response;
  grpc::ClientContext context;
  SetTenSecondDeadline(&context);
  return NewStub(address)->RunGraph(&context, request, &response);
}

grpc::Status RawRecvTensor(const std::string& address, const std::string& key,
                           absl::Duration timeout) {
  RecvTensorRequest request;
  request.set_rendezvous_key(key);
  RecvTensorResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, timeout);
  return NewStub(address)->RecvTensor(&context, request, &response);
}

}  // namespace tensorgrid
