#include "distributed/rpc/worker_stub.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "distributed/rpc/grpc_util.h"
#include "grpcpp/grpcpp.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {
namespace rpc {

struct WorkerStub::Connection {
  std::string address;
  absl::Duration rpc_timeout;
  std::unique_ptr<WorkerService::Stub> stub;

  // The status of a finished call of `method`, with the address named.
  absl::Status Finish(const char* method, const grpc::Status& status) const {
    return WithContext(FromGrpcStatus(status), absl::StrCat(method, " on worker ", address));
  }
};

namespace {

// One call in flight: owns what gRPC reads and writes until it completes.
// The completion callback frees it before running `done`: once `done`
// returns, the caller may tear everything down (the process, even), so
// nothing of ours may be left for gRPC's thread to destroy afterwards.
template <typename Request, typename Response>
struct Call {
  explicit Call(absl::Duration timeout) { SetDeadline(&context, timeout); }
  grpc::ClientContext context;
  Request request;
  Response response;
};

template <typename Request, typename Response>
std::shared_ptr<Call<Request, Response>> NewCall(const absl::Duration timeout) {
  return std::make_shared<Call<Request, Response>>(timeout);
}

// Fetches arrive named by their _Retval index; each index in [0, n) once.
absl::Status DecodeFetches(const google::protobuf::RepeatedPtrField<NamedTensorProto>& recv,
                           std::vector<Tensor>* fetches) {
  const int n = recv.size();
  fetches->assign(n, Tensor());
  std::vector<bool> seen(n, false);
  for (const NamedTensorProto& named : recv) {
    int index = -1;
    if (!absl::SimpleAtoi(named.name(), &index) || index < 0 || index >= n || seen[index]) {
      return errors::Internal("fetch '", named.name(), "' is not a distinct index in [0, ", n, ")");
    }
    seen[index] = true;
    absl::StatusOr<Tensor> tensor = TensorFromProto(named.tensor());
    if (!tensor.ok()) return WithContext(tensor.status(), absl::StrCat("fetch ", index));
    (*fetches)[index] = *std::move(tensor);
  }
  return absl::OkStatus();
}

}  // namespace

WorkerStub::WorkerStub(std::string address, absl::Duration rpc_timeout) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // fetches may be large; the server caps requests
  auto connection = std::make_unique<Connection>();
  connection->stub = WorkerService::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  connection->address = std::move(address);
  connection->rpc_timeout = rpc_timeout;
  connection_ = std::move(connection);
}

WorkerStub::~WorkerStub() = default;

const std::string& WorkerStub::address() const { return connection_->address; }

void WorkerStub::GetStatusAsync(std::vector<DeviceStatus>* devices, Done done) {
  auto call = NewCall<GetStatusRequest, GetStatusResponse>(connection_->rpc_timeout);
  connection_->stub->async()->GetStatus(
      &call->context, &call->request, &call->response,
      [c = connection_.get(), call, devices, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = c->Finish("GetStatus", status);
        if (s.ok()) {
          devices->clear();
          for (const DeviceAttributesProto& d : call->response.device_attributes()) {
            devices->push_back({d.name(), d.device_type(), d.incarnation()});
          }
        }
        call.reset();  // before done: see Call
        done(s);
      });
}

void WorkerStub::RegisterGraphAsync(const GraphDef& graph, std::string* graph_handle, Done done) {
  auto call = NewCall<RegisterGraphRequest, RegisterGraphResponse>(connection_->rpc_timeout);
  *call->request.mutable_graph_def() = graph;
  connection_->stub->async()->RegisterGraph(&call->context, &call->request, &call->response,
                                            [c = connection_.get(), call, graph_handle,
                                             done = std::move(done)](grpc::Status status) mutable {
                                              absl::Status s = c->Finish("RegisterGraph", status);
                                              if (s.ok())
                                                *graph_handle = call->response.graph_handle();
                                              call.reset();  // before done: see Call
                                              done(s);
                                            });
}

void WorkerStub::DeregisterGraphAsync(const std::string& graph_handle, Done done) {
  auto call = NewCall<DeregisterGraphRequest, DeregisterGraphResponse>(connection_->rpc_timeout);
  call->request.set_graph_handle(graph_handle);
  connection_->stub->async()->DeregisterGraph(
      &call->context, &call->request, &call->response,
      [c = connection_.get(), call, done = std::move(done)](grpc::Status status) mutable {
        call.reset();  // before done: see Call
        done(c->Finish("DeregisterGraph", status));
      });
}

void WorkerStub::RunGraphAsync(const std::string& graph_handle, int64_t step_id,
                               const std::vector<Tensor>& feeds, int64_t timeout_in_ms,
                               bool collect_step_stats, std::vector<Tensor>* fetches,
                               StepStats* step_stats, Done done) {
  // The worker enforces timeout_in_ms itself and says so more precisely than
  // an expired deadline would, so the RPC keeps the stub's own deadline.
  auto call = NewCall<RunGraphRequest, RunGraphResponse>(connection_->rpc_timeout);
  RunGraphRequest& request = call->request;
  request.set_graph_handle(graph_handle);
  request.set_step_id(step_id);
  request.set_timeout_in_ms(timeout_in_ms);
  request.set_collect_step_stats(collect_step_stats);
  for (size_t i = 0; i < feeds.size(); ++i) {
    NamedTensorProto* named = request.add_send();
    named->set_name(std::to_string(i));
    TensorToProto(feeds[i], named->mutable_tensor());
  }
  connection_->stub->async()->RunGraph(
      &call->context, &call->request, &call->response,
      [c = connection_.get(), call, fetches, step_stats,
       done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = c->Finish("RunGraph", status);
        if (s.ok()) {
          s = WithContext(DecodeFetches(call->response.recv(), fetches),
                          absl::StrCat("RunGraph on worker ", c->address));
        }
        if (s.ok()) *step_stats = std::move(*call->response.mutable_step_stats());
        call.reset();  // before done: see Call
        done(s);
      });
}

void WorkerStub::CleanupGraphAsync(int64_t step_id, Done done) {
  auto call = NewCall<CleanupGraphRequest, CleanupGraphResponse>(connection_->rpc_timeout);
  call->request.set_step_id(step_id);
  connection_->stub->async()->CleanupGraph(
      &call->context, &call->request, &call->response,
      [c = connection_.get(), call, done = std::move(done)](grpc::Status status) mutable {
        call.reset();  // before done: see Call
        done(c->Finish("CleanupGraph", status));
      });
}

void WorkerStub::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key,
                                 Tensor* tensor, Done done) {
  auto call = NewCall<RecvTensorRequest, RecvTensorResponse>(connection_->rpc_timeout);
  call->request.set_step_id(step_id);
  call->request.set_rendezvous_key(rendezvous_key);
  connection_->stub->async()->RecvTensor(
      &call->context, &call->request, &call->response,
      [c = connection_.get(), call, tensor, done = std::move(done)](grpc::Status status) mutable {
        const std::string method = absl::StrCat("RecvTensor of '", call->request.rendezvous_key(),
                                                "' on worker ", c->address);
        absl::Status s = WithContext(FromGrpcStatus(status), method);
        if (s.ok()) {
          absl::StatusOr<Tensor> value = TensorFromProto(call->response.tensor());
          if (value.ok()) {
            *tensor = *std::move(value);
          } else {
            s = errors::InvalidArgument(method, ": bad tensor in the response: ",
                                        value.status().message());
          }
        }
        call.reset();  // before done: see Call
        done(s);
      });
}

}  // namespace rpc
}  // namespace tensorgrid
