#include "distributed/rpc/grpc_worker_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "core/runtime/worker_interface.h"
#include "distributed/rpc/collective_requests.h"
#include "distributed/rpc/feed_decoding.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/grpc_worker_service_factory.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/transport/bulk_server.h"
#include "grpcpp/alarm.h"

namespace tensorgrid {
namespace {

// The longest a RecvTensor waits for its tensor, whatever the client's
// deadline: a request for a step that never runs here must not stay open
// forever (it would also hold up the server's shutdown).
constexpr absl::Duration kMaxRecvWait = absl::Hours(1);  // = GrpcRemoteWorker's step_rpc_timeout

// How long a RecvTensor may wait: until a little before the client's
// deadline (so the client learns which key timed out rather than just that
// its deadline passed), and at most kMaxRecvWait.
absl::Duration RecvWait(const grpc::CallbackServerContext& context) {
  const absl::Duration left =
      absl::FromChrono(context.deadline() - std::chrono::system_clock::now());
  const absl::Duration margin = std::min(absl::Milliseconds(100), left / 10);
  return std::min(kMaxRecvWait, left - margin);
}

// The answer to a raw request that does not parse as `method`'s message.
grpc::ServerUnaryReactor* NotAWorkerMessage(grpc::CallbackServerContext* context,
                                            const char* method) {
  return NotAValidMessage(context, absl::StrCat("/tensorgrid.WorkerService/", method));
}

// One RecvTensor or RecvBuf call, answered by whichever comes first: the
// worker's callback with the tensor (or the step's failure), the deadline
// alarm, or the client's cancellation. No thread waits meanwhile.
//
// gRPC owns the call until OnDone, which comes after Finish; the reactor
// deletes itself there, as gRPC's callback API expects. The worker's
// callback and the alarm may run after that, so they hold the shared Latch
// rather than the reactor, and only the event that takes the reactor from
// the latch may touch it.
class TensorReactor final : public grpc::ServerUnaryReactor {
 public:
  // Asks the worker for the tensor: fills `out`, then calls `done`. The
  // reactor cancels `cancellation` once the call is answered otherwise (the
  // client cancelled it or went away, the deadline passed): the worker then
  // withdraws the request.
  using Fetch =
      std::function<void(Tensor* out, CancellationManager* cancellation, StatusCallback done)>;

  // `key` names the tensor in the response; `what` the call in errors
  // ("RecvTensor of 'k' for step 3"). With `bulk`, a large tensor is
  // answered with a ticket for its bytes (distributed/transport/bulk_server.h).
  TensorReactor(std::string key, std::string what, BulkServer* bulk, grpc::ByteBuffer* response)
      : key_(std::move(key)),
        what_(std::move(what)),
        bulk_(bulk),
        response_(response),
        latch_(std::make_shared<Latch>(this)) {}

  // Fetches the tensor and arms the deadline `wait` from now.
  void Start(const Fetch& fetch, absl::Duration wait) {
    wait = std::max(wait, absl::ZeroDuration());
    std::shared_ptr<Latch> latch = latch_;
    deadline_.Set(std::chrono::system_clock::now() +
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          absl::ToChronoNanoseconds(wait)),
                  [latch, wait](bool fired) {
                    if (!fired) return;  // cancelled: the call was answered otherwise
                    if (TensorReactor* self = latch->Take()) self->AnswerDeadlineExceeded(wait);
                    latch->cancellation.StartCancel();
                  });
    fetch(&latch->tensor, &latch->cancellation, [latch](absl::Status status) {
      Tensor tensor = std::move(latch->tensor);  // even if nobody waits
      if (TensorReactor* self = latch->Take()) self->AnswerWithTensor(status, tensor);
    });
  }

  void OnCancel() override {
    std::shared_ptr<Latch> latch = latch_;  // the reactor may be gone after Answer
    if (latch->Take() == nullptr) return;
    Answer(grpc::Status(grpc::StatusCode::CANCELLED,
                        absl::StrCat(what_, " was cancelled by the client")));
    latch->cancellation.StartCancel();
  }

  void OnDone() override { delete this; }

 private:
  struct Latch {
    explicit Latch(TensorReactor* r) : reactor(r) {}
    // The reactor the first time, null afterwards: exactly one event answers.
    TensorReactor* Take() {
      absl::MutexLock lock(&mu);
      return std::exchange(reactor, nullptr);
    }
    absl::Mutex mu;
    TensorReactor* reactor ABSL_GUARDED_BY(mu);
    Tensor tensor;  // written by the worker just before its callback runs
    CancellationManager cancellation;  // withdraws the worker's wait
  };

  void AnswerWithTensor(const absl::Status& status, const Tensor& tensor) {
    if (!status.ok()) return Answer(ToGrpcStatus(status));
    if (bulk_ != nullptr && WantsBulk(tensor)) {
      if (const std::string id = bulk_->Offer(tensor); !id.empty()) {
        absl::Status encoded = EncodeBulkResponse(tensor, id, bulk_->port(), response_);
        return Answer(encoded.ok() ? grpc::Status::OK : ToGrpcStatus(encoded));
      }
    }
    absl::Status encoded = EncodeRecvTensorResponse(tensor, key_, response_);
    Answer(encoded.ok() ? grpc::Status::OK : ToGrpcStatus(encoded));
  }

  void AnswerDeadlineExceeded(absl::Duration waited) {
    Answer(
        grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                     absl::StrCat(what_, ": no tensor sent within ", absl::FormatDuration(waited),
                                  " (the client's deadline, at most ",
                                  absl::FormatDuration(kMaxRecvWait), ")")));
  }

  // The last thing any event does with the reactor: after Finish, gRPC may
  // call OnDone (and so delete it) at any moment.
  void Answer(grpc::Status status) {
    deadline_.Cancel();  // no effect when it is the alarm answering
    Finish(std::move(status));
  }

  const std::string key_;
  const std::string what_;
  BulkServer* const bulk_;
  grpc::ByteBuffer* const response_;
  const std::shared_ptr<Latch> latch_;
  grpc::Alarm deadline_;
};

// The answer to a request for the bytes of ticket `id` over gRPC, from a
// client that could not reach the bulk port.
grpc::ServerUnaryReactor* AnswerTicket(grpc::CallbackServerContext* context, BulkServer* bulk,
                                       const std::string& id, const std::string& what,
                                       grpc::ByteBuffer* response) {
  std::optional<Tensor> tensor;
  if (bulk != nullptr) tensor = bulk->Take(id);
  if (!tensor.has_value()) {
    return FinishNow(context, grpc::Status(grpc::StatusCode::NOT_FOUND,
                                           absl::StrCat(what,
                                                        ": this task holds no such bulk ticket "
                                                        "(fetched already, expired, or the task "
                                                        "restarted)")));
  }
  absl::Status encoded = EncodeRecvTensorResponse(*tensor, what, response);
  return FinishNow(context, encoded.ok() ? grpc::Status::OK : ToGrpcStatus(encoded));
}

}  // namespace

grpc::Status GrpcWorkerService::GetStatus(grpc::ServerContext* context, const GetStatusRequest*,
                                          GetStatusResponse* response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  GetStatusResult result;
  absl::Status s = worker_->GetStatus(&result);
  if (!s.ok()) return ToGrpcStatus(s);
  for (const DeviceInfo& d : result.devices) {
    DeviceAttributesProto* attributes = response->add_device_attributes();
    attributes->set_name(d.name);
    attributes->set_device_type(d.type);
    attributes->set_incarnation(d.incarnation);
  }
  if (bulk_ != nullptr) response->set_bulk_port(bulk_->port());
  return grpc::Status::OK;
}

// Worker sessions keep no state yet: every graph is registered task-wide.
grpc::Status GrpcWorkerService::CreateWorkerSession(grpc::ServerContext* context,
                                                    const CreateWorkerSessionRequest*,
                                                    CreateWorkerSessionResponse*) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::DeleteWorkerSession(grpc::ServerContext* context,
                                                    const DeleteWorkerSessionRequest*,
                                                    DeleteWorkerSessionResponse*) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  return grpc::Status::OK;
}

grpc::Status GrpcWorkerService::RegisterGraph(grpc::ServerContext* context,
                                              const RegisterGraphRequest* request,
                                              RegisterGraphResponse* response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  RegisterGraphArgs args;
  args.graph = request->graph_def();
  RegisterGraphResult result;
  absl::Status s = worker_->RegisterGraph(args, &result);
  if (s.ok()) response->set_graph_handle(std::move(result.graph_handle));
  return ToGrpcStatus(s);
}

grpc::Status GrpcWorkerService::DeregisterGraph(grpc::ServerContext* context,
                                                const DeregisterGraphRequest* request,
                                                DeregisterGraphResponse*) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  return ToGrpcStatus(worker_->DeregisterGraph(request->graph_handle()));
}

namespace {

// Runs `request` on `worker`; `done` gets the response, or the failure
// with its code (InvalidArgument for bad feeds, ResourceExhausted for
// fetches too large for one message). Shared by gRPC's RunGraph and the
// bulk port's.
void RunGraphFromWire(WorkerInterface* worker, std::shared_ptr<const RunGraphRequest> request,
                      std::function<void(absl::Status, RunGraphResponse*)> done) {
  struct Call {
    std::shared_ptr<const RunGraphRequest> request;
    RunGraphArgs args;
    RunGraphResult result;
  };
  auto call = std::make_shared<Call>();
  call->request = std::move(request);
  const RunGraphRequest& r = *call->request;
  absl::Status s = DecodeRunGraphFeeds(r.send(), &call->args.feeds);
  if (!s.ok()) {
    done(WithContext(s, absl::StrCat("RunGraph '", r.graph_handle(), "'")), nullptr);
    return;
  }
  call->args.graph_handle = r.graph_handle();
  call->args.step_id = r.step_id();
  call->args.timeout_in_ms = r.timeout_in_ms();
  call->args.collect_step_stats = r.collect_step_stats();
  worker->RunGraphAsync(call->args, &call->result, [call, done = std::move(done)](absl::Status s) {
    if (!s.ok()) {
      done(s, nullptr);
      return;
    }
    RunGraphResponse response;
    const std::vector<Tensor>& fetches = call->result.fetches;
    for (size_t i = 0; i < fetches.size(); ++i) {
      NamedTensorProto* named = response.add_recv();
      named->set_name(std::to_string(i));
      TensorToProto(fetches[i], named->mutable_tensor());
    }
    *response.mutable_step_stats() = std::move(call->result.step_stats);
    // The fetches travel in this one message: past what gRPC can carry, say
    // so rather than fail inside gRPC's serialization with a bare Internal.
    if (const size_t bytes = response.ByteSizeLong(); bytes > kMaxGrpcMessageBytes) {
      done(errors::ResourceExhausted(
               "RunGraph '", call->request->graph_handle(), "' step ", call->request->step_id(),
               ": ", fetches.size(), " fetches make a response of ", bytes,
               " bytes, over the limit of ", kMaxGrpcMessageBytes, " bytes for one gRPC message"),
           nullptr);
      return;
    }
    done(absl::OkStatus(), &response);
  });
}

}  // namespace

GrpcWorkerService::GrpcWorkerService(WorkerInterface* worker, std::string auth_token,
                                     BulkServer* bulk)
    : worker_(worker), auth_token_(std::move(auth_token)), bulk_(bulk) {
  if (bulk_ == nullptr) return;
  bulk_->ServeRecvBuf([worker](const std::string& key, absl::Time deadline, Tensor* out,
                               CancellationManager* cancellation, StatusCallback done) {
    worker->RecvBufAsync(key, deadline, out, std::move(done), cancellation);
  });
  // The rendezvous bounds nothing by time: the port answers DeadlineExceeded
  // at the client's deadline, as gRPC's RecvTensor does.
  bulk_->ServeRecvTensor([worker](int64_t step_id, const std::string& key, absl::Time, Tensor* out,
                                  CancellationManager* cancellation, StatusCallback done) {
    worker->RecvTensorAsync(step_id, key, out, std::move(done), cancellation);
  });
  // The worker bounds the step by its timeout_in_ms, and ends it when the
  // master's step fails, as over gRPC (where RunGraph is not cancelled
  // either).
  bulk_->ServeCall(kBulkRunGraph, [worker](std::string wire, absl::Time, CancellationManager*,
                                           BulkServer::CallDone done) {
    auto request = std::make_shared<RunGraphRequest>();
    if (!request->ParseFromString(wire)) {
      done(errors::InvalidArgument("RunGraph on the bulk port: the request is not a "
                                   "tensorgrid.RunGraphRequest"),
           nullptr);
      return;
    }
    RunGraphFromWire(worker, std::move(request),
                     [done = std::move(done)](absl::Status s, RunGraphResponse* response) {
                       std::string answer = s.ok() ? response->SerializeAsString() : "";
                       done(std::move(s), BulkServer::Bytes(std::move(answer)));
                     });
  });
}

// On the callback API: the partition runs without a server thread waiting
// for it, and the response goes out from whichever thread finishes it. Raw
// bytes in and out, so that a request that does not parse is answered with
// InvalidArgument by this handler (the generated callback handler would say
// a bare Unimplemented).
grpc::ServerUnaryReactor* GrpcWorkerService::RunGraph(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* wire,
                                                      grpc::ByteBuffer* wire_response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) {
    return FinishNow(context, std::move(denied));
  }
  auto request = std::make_shared<RunGraphRequest>();
  if (!ParseFromByteBuffer(*wire, request.get())) return NotAWorkerMessage(context, "RunGraph");
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  RunGraphFromWire(worker_, std::move(request),
                   [reactor, wire_response](absl::Status s, RunGraphResponse* response) {
                     if (s.ok()) {
                       FinishWith(reactor, *response, wire_response);
                     } else {
                       reactor->Finish(ToGrpcStatus(s));
                     }
                   });
  return reactor;
}

grpc::Status GrpcWorkerService::CleanupGraph(grpc::ServerContext* context,
                                             const CleanupGraphRequest* request,
                                             CleanupGraphResponse*) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  return ToGrpcStatus(worker_->CleanupGraph(request->step_id()));
}

grpc::ServerUnaryReactor* GrpcWorkerService::RecvTensor(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request,
                                                        grpc::ByteBuffer* response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) {
    return FinishNow(context, std::move(denied));
  }
  RecvTensorRequest parsed;
  if (!ParseFromByteBuffer(*request, &parsed)) return NotAWorkerMessage(context, "RecvTensor");
  std::string what =
      absl::StrCat("RecvTensor of '", parsed.rendezvous_key(), "' for step ", parsed.step_id());
  if (!parsed.bulk_ticket().empty()) {
    return AnswerTicket(context, bulk_, parsed.bulk_ticket(), what, response);
  }
  // Deleted by itself in OnDone, once gRPC is through with the call.
  auto* reactor = new TensorReactor(parsed.rendezvous_key(), std::move(what),
                                    parsed.accept_bulk() ? bulk_ : nullptr, response);
  WorkerInterface* worker = worker_;
  reactor->Start(
      [worker, parsed](Tensor* out, CancellationManager* cancellation, StatusCallback done) {
        worker->RecvTensorAsync(parsed.step_id(), parsed.rendezvous_key(), out, std::move(done),
                                cancellation);
      },
      RecvWait(*context));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcWorkerService::CompleteGroup(grpc::CallbackServerContext* context,
                                                           const grpc::ByteBuffer* wire,
                                                           grpc::ByteBuffer* wire_response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) {
    return FinishNow(context, std::move(denied));
  }
  CompleteGroupRequest request;
  if (!ParseFromByteBuffer(*wire, &request)) return NotAWorkerMessage(context, "CompleteGroup");
  const CompleteGroupArgs args = GroupJoinFromRequest(request, RecvWait(*context));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto result = std::make_shared<CompleteGroupResult>();
  // The leader always answers, at the latest after args.timeout.
  worker_->CompleteGroupAsync(args, result.get(), [reactor, wire_response, result](absl::Status s) {
    if (!s.ok()) {
      reactor->Finish(ToGrpcStatus(s));
      return;
    }
    CompleteGroupResponse response;
    response.set_group_key(result->group_key);
    response.set_group_size(result->group_size);
    response.set_device_type(result->device_type);
    for (const std::string& d : result->devices) response.add_device_name(d);
    for (uint64_t i : result->incarnations) response.add_incarnation(i);
    FinishWith(reactor, response, wire_response);
  });
  return reactor;
}

grpc::ServerUnaryReactor* GrpcWorkerService::CompleteInstance(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* wire,
                                                              grpc::ByteBuffer* wire_response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) {
    return FinishNow(context, std::move(denied));
  }
  CompleteInstanceRequest request;
  if (!ParseFromByteBuffer(*wire, &request)) return NotAWorkerMessage(context, "CompleteInstance");
  const CompleteInstanceArgs args = InstanceJoinFromRequest(request, RecvWait(*context));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto result = std::make_shared<CompleteInstanceResult>();
  worker_->CompleteInstanceAsync(args, result.get(),
                                 [reactor, wire_response, result](absl::Status s) {
                                   if (!s.ok()) {
                                     reactor->Finish(ToGrpcStatus(s));
                                     return;
                                   }
                                   CompleteInstanceResponse response;
                                   response.set_source_rank(result->source_rank);
                                   response.set_exec_seq(result->exec_seq);
                                   FinishWith(reactor, response, wire_response);
                                 });
  return reactor;
}

grpc::ServerUnaryReactor* GrpcWorkerService::RecvBuf(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* request,
                                                     grpc::ByteBuffer* response) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) {
    return FinishNow(context, std::move(denied));
  }
  RecvBufRequest parsed;
  if (!ParseFromByteBuffer(*request, &parsed) || parsed.buf_key().empty()) {
    return NotAWorkerMessage(context, "RecvBuf");
  }
  std::string what = absl::StrCat("RecvBuf of '", parsed.buf_key(), "'");
  if (!parsed.bulk_ticket().empty()) {
    return AnswerTicket(context, bulk_, parsed.bulk_ticket(), what, response);
  }
  auto* reactor = new TensorReactor(parsed.buf_key(), std::move(what),
                                    parsed.accept_bulk() ? bulk_ : nullptr, response);
  WorkerInterface* worker = worker_;
  const absl::Duration wait = RecvWait(*context);
  const std::string key = parsed.buf_key();
  reactor->Start(
      [worker, key, wait](Tensor* out, CancellationManager* cancellation, StatusCallback done) {
        worker->RecvBufAsync(key, absl::Now() + wait, out, std::move(done), cancellation);
      },
      wait);
  return reactor;
}

grpc::Status GrpcWorkerService::CleanupAll(grpc::ServerContext* context,
                                           const CleanupAllRequest* request, CleanupAllResponse*) {
  if (grpc::Status denied = CheckAuth(*context, auth_token_); !denied.ok()) return denied;
  const std::vector<std::string> containers(request->container().begin(),
                                            request->container().end());
  return ToGrpcStatus(worker_->CleanupAll(containers));
}

std::unique_ptr<grpc::Service> NewGrpcWorkerService(WorkerInterface* worker, std::string auth_token,
                                                    BulkServer* bulk) {
  return std::make_unique<GrpcWorkerService>(worker, std::move(auth_token), bulk);
}

}  // namespace tensorgrid
