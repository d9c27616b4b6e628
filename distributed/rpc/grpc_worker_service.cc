#include "distributed/rpc/grpc_worker_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "core/runtime/worker_interface.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/grpc_worker_service_factory.h"
#include "distributed/rpc/worker_calls.h"

namespace tensorgrid {
namespace {

// The longest a RecvTensor waits for its tensor, whatever the client's
// deadline: a request for a step that never runs here must not hold a server
// thread forever.
constexpr absl::Duration kMaxRecvWait = absl::Minutes(5);
// How often a waiting RecvTensor checks whether its client went away.
constexpr absl::Duration kCancelPoll = absl::Milliseconds(100);

// Feeds arrive named by their _Arg index as text, in any order; each index
// in [0, n) must appear exactly once.
absl::Status DecodeFeeds(const google::protobuf::RepeatedPtrField<NamedTensorProto>& send,
                         std::vector<Tensor>* feeds) {
  const int n = send.size();
  feeds->assign(n, Tensor());
  std::vector<bool> seen(n, false);
  for (const NamedTensorProto& named : send) {
    int index = -1;
    if (!absl::SimpleAtoi(named.name(), &index) || index < 0 || index >= n) {
      return errors::InvalidArgument("feed '", named.name(), "' is not an _Arg index in [0, ", n,
                                     ")");
    }
    if (seen[index]) return errors::InvalidArgument("feed ", index, " is given twice");
    seen[index] = true;
    absl::StatusOr<Tensor> tensor = TensorFromProto(named.tensor());
    if (!tensor.ok()) return WithContext(tensor.status(), absl::StrCat("feed ", index));
    (*feeds)[index] = *std::move(tensor);
  }
  return absl::OkStatus();
}

// The wait for the tensor is bounded by the client's deadline (answered a
// little before it, so the client learns which key timed out rather than
// just that its deadline passed) and by kMaxRecvWait.
absl::Time RecvAnswerBy(const grpc::ServerContext& context) {
  const absl::Duration left =
      absl::FromChrono(context.deadline() - std::chrono::system_clock::now());
  const absl::Duration margin = std::min(absl::Milliseconds(100), left / 10);
  return absl::Now() + std::min(kMaxRecvWait, left - margin);
}

}  // namespace

grpc::Status GrpcWorkerService::GetStatus(grpc::ServerContext*, const GetStatusRequest*,
                                          GetStatusResponse* response) {
  std::vector<rpc::DeviceStatus> devices;
  absl::Status s = rpc::GetStatus(*worker_, &devices);
  if (!s.ok()) return ToGrpcStatus(s);
  for (const rpc::DeviceStatus& d : devices) {
    DeviceAttributesProto* attributes = response->add_device_attributes();
    attributes->set_name(d.name);
    attributes->set_device_type(d.type);
    attributes->set_incarnation(d.incarnation);
  }
  return grpc::Status::OK;
}

// Worker sessions keep no state yet: every graph is registered task-wide.
grpc::Status GrpcWorkerService::CreateWorkerSession(grpc::ServerContext*,
                                                    const CreateWorkerSessionRequest*,
                                                    CreateWorkerSessionResponse*) {
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::DeleteWorkerSession(grpc::ServerContext*,
                                                    const DeleteWorkerSessionRequest*,
                                                    DeleteWorkerSessionResponse*) {
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::RegisterGraph(grpc::ServerContext*,
                                              const RegisterGraphRequest* request,
                                              RegisterGraphResponse* response) {
  std::string handle;
  absl::Status s = rpc::RegisterGraph(*worker_, request->graph_def(), &handle);
  if (s.ok()) response->set_graph_handle(std::move(handle));
  return ToGrpcStatus(s);
}

grpc::Status GrpcWorkerService::DeregisterGraph(grpc::ServerContext*,
                                                const DeregisterGraphRequest* request,
                                                DeregisterGraphResponse*) {
  return ToGrpcStatus(rpc::DeregisterGraph(*worker_, request->graph_handle()));
}

grpc::Status GrpcWorkerService::RunGraph(grpc::ServerContext*, const RunGraphRequest* request,
                                         RunGraphResponse* response) {
  std::vector<Tensor> feeds;
  absl::Status s = DecodeFeeds(request->send(), &feeds);
  if (!s.ok()) {
    return ToGrpcStatus(WithContext(s, absl::StrCat("RunGraph '", request->graph_handle(), "'")));
  }
  std::vector<Tensor> fetches;
  s = rpc::RunGraph(*worker_, request->graph_handle(), request->step_id(), std::move(feeds),
                    request->timeout_in_ms(), request->collect_step_stats(), &fetches,
                    response->mutable_step_stats());
  if (!s.ok()) return ToGrpcStatus(s);
  for (size_t i = 0; i < fetches.size(); ++i) {
    NamedTensorProto* named = response->add_recv();
    named->set_name(std::to_string(i));
    TensorToProto(fetches[i], named->mutable_tensor());
  }
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::CleanupGraph(grpc::ServerContext*,
                                             const CleanupGraphRequest* request,
                                             CleanupGraphResponse*) {
  return ToGrpcStatus(rpc::CleanupGraph(*worker_, request->step_id()));
}

grpc::Status GrpcWorkerService::RecvTensor(grpc::ServerContext* context,
                                           const RecvTensorRequest* request,
                                           RecvTensorResponse* response) {
  // Shared with the worker's callback, which may run after this handler has
  // given up and returned.
  struct PendingRecv {
    absl::Notification done;
    absl::Status status;  // written before `done` is notified
    Tensor tensor;
  };
  auto pending = std::make_shared<PendingRecv>();
  const std::string& key = request->rendezvous_key();
  worker_->RecvTensorAsync(request->step_id(), key, &pending->tensor,
                           [pending](absl::Status s) {
                             pending->status = std::move(s);
                             pending->done.Notify();
                           });
  const absl::Time answer_by = RecvAnswerBy(*context);
  for (;;) {
    const absl::Duration left = answer_by - absl::Now();
    if (pending->done.WaitForNotificationWithTimeout(std::min(left, kCancelPoll))) break;
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          absl::StrCat("RecvTensor of '", key, "' was cancelled by the client"));
    }
    if (absl::Now() >= answer_by) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          absl::StrCat("RecvTensor of '", key, "' for step ", request->step_id(),
                                       ": no tensor sent before the deadline"));
    }
  }
  if (!pending->status.ok()) return ToGrpcStatus(pending->status);
  TensorToProto(pending->tensor, response->mutable_tensor());
  return grpc::Status::OK;
}

std::unique_ptr<grpc::Service> NewGrpcWorkerService(WorkerInterface* worker) {
  return std::make_unique<GrpcWorkerService>(worker);
}

}  // namespace tensorgrid
