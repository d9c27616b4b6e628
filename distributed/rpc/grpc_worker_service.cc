#include "distributed/rpc/grpc_worker_service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "core/runtime/worker_interface.h"
#include "distributed/rpc/collective_requests.h"
#include "distributed/rpc/feed_decoding.h"
#include "distributed/rpc/grpc_front_door.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/transport/bulk_server.h"
#include "grpcpp/alarm.h"
#include "proto/worker.pb.h"

namespace tensorgrid {
namespace {

// The longest a RecvTensor waits for its tensor, whatever the client's
// deadline: a request for a step that never runs here must not stay open
// forever (it would also hold up the server's shutdown).
constexpr absl::Duration kMaxRecvWait = absl::Hours(1);  // = GrpcRemoteWorker's step_rpc_timeout

// How long a RecvTensor may wait: until a little before the client's
// deadline (so the client learns which key timed out rather than just that
// its deadline passed), and at most kMaxRecvWait.
absl::Duration RecvWait(const GrpcCall& call) {
  const absl::Duration left = absl::FromChrono(call.deadline() - std::chrono::system_clock::now());
  const absl::Duration margin = std::min(absl::Milliseconds(100), left / 10);
  return std::min(kMaxRecvWait, left - margin);
}


// One RecvTensor or RecvBuf call, answered by whichever comes first: the
// worker's callback with the tensor (or the step's failure), the deadline
// alarm, or the client's cancellation (GrpcCall sends only the first
// answer). No thread waits meanwhile. Held by the worker's callback and the
// call's cancellation; the alarm holds it weakly, since it owns the alarm.
class TensorWait final : public std::enable_shared_from_this<TensorWait> {
 public:
  // Asks the worker for the tensor: fills `out`, then calls `done`. The
  // wait cancels `cancellation` once the call is answered otherwise (the
  // client cancelled it or went away, the deadline passed): the worker then
  // withdraws the request.
  using Fetch =
      std::function<void(Tensor* out, CancellationManager* cancellation, StatusCallback done)>;

  // `key` names the tensor in the response; `what` the call in errors
  // ("RecvTensor of 'k' for step 3"). With `bulk`, a large tensor is
  // answered with a ticket for its bytes (distributed/transport/bulk_server.h).
  TensorWait(std::shared_ptr<GrpcCall> call, std::string key, std::string what, BulkServer* bulk)
      : call_(std::move(call)), key_(std::move(key)), what_(std::move(what)), bulk_(bulk) {}

  // Fetches the tensor and arms the deadline `wait` from now.
  void Start(const Fetch& fetch, absl::Duration wait) {
    wait = std::max(wait, absl::ZeroDuration());
    std::weak_ptr<TensorWait> weak = weak_from_this();
    deadline_.Set(absl::ToChronoTime(absl::Now() + wait), [weak, wait](bool fired) {
      if (!fired) return;  // cancelled: the call was answered otherwise
      if (std::shared_ptr<TensorWait> self = weak.lock()) self->AnswerDeadlineExceeded(wait);
    });
    std::shared_ptr<TensorWait> self = shared_from_this();
    call_->OnCancel([self] {
      if (!self->Claim()) return;
      self->Answer(grpc::Status(grpc::StatusCode::CANCELLED,
                                absl::StrCat(self->what_, " was cancelled by the client")));
    });
    fetch(&tensor_, &cancellation_, [self](absl::Status status) {
      Tensor tensor = std::move(self->tensor_);  // even if nobody waits
      if (self->Claim()) self->AnswerWithTensor(status, tensor);
    });
  }

 private:
  // True for the first event only: exactly one answers.
  bool Claim() { return !answered_.exchange(true); }

  void AnswerWithTensor(const absl::Status& status, const Tensor& tensor) {
    if (!status.ok()) return Answer(ToGrpcStatus(status));
    grpc::ByteBuffer response;
    absl::Status encoded;
    const std::string id = bulk_ != nullptr && WantsBulk(tensor) ? bulk_->Offer(tensor) : "";
    if (!id.empty()) {
      encoded = EncodeBulkResponse(tensor, id, bulk_->port(), &response);
    } else {
      encoded = EncodeRecvTensorResponse(tensor, key_, &response);
    }
    if (!encoded.ok()) return Answer(ToGrpcStatus(encoded));
    Answer(std::move(response));
  }

  void AnswerDeadlineExceeded(absl::Duration waited) {
    if (!Claim()) return;
    Answer(
        grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                     absl::StrCat(what_, ": no tensor sent within ", absl::FormatDuration(waited),
                                  " (the client's deadline, at most ",
                                  absl::FormatDuration(kMaxRecvWait), ")")));
  }

  // Whoever answers also ends the others: the alarm, and the worker's wait
  // (withdrawn, unless the worker is what answered).
  void Answer(grpc::Status status) {
    call_->Finish(std::move(status));
    Settle();
  }
  void Answer(grpc::ByteBuffer response) {
    call_->Reply(std::move(response));
    Settle();
  }
  void Settle() {
    deadline_.Cancel();
    cancellation_.StartCancel();  // no effect once the worker has answered
  }

  const std::shared_ptr<GrpcCall> call_;
  const std::string key_;
  const std::string what_;
  BulkServer* const bulk_;
  std::atomic<bool> answered_{false};
  Tensor tensor_;                     // written by the worker just before its callback runs
  CancellationManager cancellation_;  // withdraws the worker's wait
  grpc::Alarm deadline_;
};

// The answer to a request for the bytes of ticket `id` over gRPC, from a
// client that could not reach the bulk port.
void AnswerTicket(GrpcCall& call, BulkServer* bulk, const std::string& id,
                  const std::string& what) {
  std::optional<Tensor> tensor;
  if (bulk != nullptr) tensor = bulk->Take(id);
  if (!tensor.has_value()) {
    call.Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                             absl::StrCat(what,
                                          ": this task holds no such bulk ticket "
                                          "(fetched already, expired, or the task "
                                          "restarted)")));
    return;
  }
  grpc::ByteBuffer response;
  if (absl::Status encoded = EncodeRecvTensorResponse(*tensor, what, &response); !encoded.ok()) {
    call.Finish(ToGrpcStatus(encoded));
    return;
  }
  call.Reply(std::move(response));
}

}  // namespace

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

GrpcWorkerService::GrpcWorkerService(WorkerInterface* worker, GrpcFrontDoor* door, BulkServer* bulk)
    : worker_(worker), bulk_(bulk) {
  AddMethods(door);
  if (bulk_ != nullptr) ServeOnBulkPort();
}

void GrpcWorkerService::AddMethods(GrpcFrontDoor* door) {
  using Runs = GrpcFrontDoor::Runs;
  using Done = std::function<void(absl::Status)>;
  const std::string service = "/tensorgrid.WorkerService/";
  WorkerInterface* const worker = worker_;
  door->Add<GetStatusRequest, GetStatusResponse>(
      service + "GetStatus", Runs::kInline,
      [this](const GetStatusRequest&, GetStatusResponse* response, Done done) {
        auto result = std::make_shared<GetStatusResult>();
        worker_->GetStatusAsync(absl::InfiniteFuture(), result.get(),
                                [this, result, response, done](absl::Status s) {
                                  for (const DeviceInfo& d : result->devices) {
                                    DeviceInfoToProto(d, response->add_device_attributes());
                                  }
                                  if (bulk_ != nullptr) response->set_bulk_port(bulk_->port());
                                  done(s);
                                });
      });
  // Worker sessions keep no state yet: every graph is registered task-wide.
  door->Add<CreateWorkerSessionRequest, CreateWorkerSessionResponse>(
      service + "CreateWorkerSession", Runs::kInline,
      [](const CreateWorkerSessionRequest&, CreateWorkerSessionResponse*, Done done) {
        done(absl::OkStatus());
      });
  door->Add<DeleteWorkerSessionRequest, DeleteWorkerSessionResponse>(
      service + "DeleteWorkerSession", Runs::kInline,
      [](const DeleteWorkerSessionRequest&, DeleteWorkerSessionResponse*, Done done) {
        done(absl::OkStatus());
      });
  // Building the partition's executor takes a while for a large graph.
  door->Add<RegisterGraphRequest, RegisterGraphResponse>(
      service + "RegisterGraph", Runs::kOnOwnThread,
      [worker](const RegisterGraphRequest& request, RegisterGraphResponse* response, Done done) {
        auto args = std::make_shared<RegisterGraphArgs>();
        args->graph = request.graph_def();
        auto result = std::make_shared<RegisterGraphResult>();
        worker->RegisterGraphAsync(*args, result.get(),
                                   [args, result, response, done](absl::Status s) {
                                     if (s.ok())
                                       response->set_graph_handle(std::move(result->graph_handle));
                                     done(s);
                                   });
      });
  door->Add<DeregisterGraphRequest, DeregisterGraphResponse>(
      service + "DeregisterGraph", Runs::kInline,
      [worker](const DeregisterGraphRequest& request, DeregisterGraphResponse*, Done done) {
        worker->DeregisterGraphAsync(request.graph_handle(), absl::InfiniteFuture(),
                                     std::move(done));
      });
  door->Add<CleanupGraphRequest, CleanupGraphResponse>(
      service + "CleanupGraph", Runs::kInline,
      [worker](const CleanupGraphRequest& request, CleanupGraphResponse*, Done done) {
        worker->CleanupGraphAsync(request.step_id(), std::move(done));
      });
  door->Add<CleanupAllRequest, CleanupAllResponse>(
      service + "CleanupAll", Runs::kInline,
      [worker](const CleanupAllRequest& request, CleanupAllResponse*, Done done) {
        const std::vector<std::string> containers(request.container().begin(),
                                                  request.container().end());
        worker->CleanupAllAsync(containers, std::move(done));
      });
  door->Add(service + "RunGraph", Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { RunGraph(std::move(call)); });
  door->Add(service + "RecvTensor", Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { RecvTensor(std::move(call)); });
  door->Add(service + "CompleteGroup", Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { CompleteGroup(std::move(call)); });
  door->Add(service + "CompleteInstance", Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { CompleteInstance(std::move(call)); });
  door->Add(service + "RecvBuf", Runs::kInline,
            [this](std::shared_ptr<GrpcCall> call) { RecvBuf(std::move(call)); });
}

void GrpcWorkerService::ServeOnBulkPort() {
  WorkerInterface* const worker = worker_;
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

// The partition runs without a thread waiting for it, and the response goes
// out from whichever thread finishes it.
void GrpcWorkerService::RunGraph(std::shared_ptr<GrpcCall> call) {
  auto request = std::make_shared<RunGraphRequest>();
  if (!ParseRequest(*call, request.get())) return;
  RunGraphFromWire(worker_, std::move(request),
                   [call = std::move(call)](absl::Status s, RunGraphResponse* response) {
                     if (s.ok()) {
                       call->Reply(*response);
                     } else {
                       call->Finish(ToGrpcStatus(s));
                     }
                   });
}

void GrpcWorkerService::RecvTensor(std::shared_ptr<GrpcCall> call) {
  RecvTensorRequest parsed;
  if (!ParseRequest(*call, &parsed)) return;
  std::string what =
      absl::StrCat("RecvTensor of '", parsed.rendezvous_key(), "' for step ", parsed.step_id());
  if (!parsed.bulk_ticket().empty()) return AnswerTicket(*call, bulk_, parsed.bulk_ticket(), what);
  const absl::Duration wait = RecvWait(*call);
  auto tensor_wait =
      std::make_shared<TensorWait>(std::move(call), parsed.rendezvous_key(), std::move(what),
                                   parsed.accept_bulk() ? bulk_ : nullptr);
  WorkerInterface* worker = worker_;
  tensor_wait->Start(
      [worker, parsed](Tensor* out, CancellationManager* cancellation, StatusCallback done) {
        worker->RecvTensorAsync(parsed.step_id(), parsed.rendezvous_key(), out, std::move(done),
                                cancellation);
      },
      wait);
}

void GrpcWorkerService::CompleteGroup(std::shared_ptr<GrpcCall> call) {
  CompleteGroupRequest request;
  if (!ParseRequest(*call, &request)) return;
  const CompleteGroupArgs args = GroupJoinFromRequest(request, RecvWait(*call));
  auto result = std::make_shared<CompleteGroupResult>();
  // The leader always answers, at the latest after args.timeout.
  worker_->CompleteGroupAsync(args, result.get(), [call, result](absl::Status s) {
    if (!s.ok()) {
      call->Finish(ToGrpcStatus(s));
      return;
    }
    CompleteGroupResponse response;
    response.set_group_key(result->group_key);
    response.set_group_size(result->group_size);
    response.set_device_type(result->device_type);
    for (const std::string& d : result->devices) response.add_device_name(d);
    for (uint64_t i : result->incarnations) response.add_incarnation(i);
    call->Reply(response);
  });
}

void GrpcWorkerService::CompleteInstance(std::shared_ptr<GrpcCall> call) {
  CompleteInstanceRequest request;
  if (!ParseRequest(*call, &request)) return;
  const CompleteInstanceArgs args = InstanceJoinFromRequest(request, RecvWait(*call));
  auto result = std::make_shared<CompleteInstanceResult>();
  worker_->CompleteInstanceAsync(args, result.get(), [call, result](absl::Status s) {
    if (!s.ok()) {
      call->Finish(ToGrpcStatus(s));
      return;
    }
    CompleteInstanceResponse response;
    response.set_source_rank(result->source_rank);
    response.set_exec_seq(result->exec_seq);
    call->Reply(response);
  });
}

void GrpcWorkerService::RecvBuf(std::shared_ptr<GrpcCall> call) {
  RecvBufRequest parsed;
  if (!ParseRequest(*call, &parsed)) return;
  if (parsed.buf_key().empty()) {
    call->Finish(InvalidMessageStatus(call->method()));
    return;
  }
  std::string what = absl::StrCat("RecvBuf of '", parsed.buf_key(), "'");
  if (!parsed.bulk_ticket().empty()) return AnswerTicket(*call, bulk_, parsed.bulk_ticket(), what);
  const absl::Duration wait = RecvWait(*call);
  auto tensor_wait = std::make_shared<TensorWait>(
      std::move(call), parsed.buf_key(), std::move(what), parsed.accept_bulk() ? bulk_ : nullptr);
  WorkerInterface* worker = worker_;
  const std::string key = parsed.buf_key();
  tensor_wait->Start(
      [worker, key, wait](Tensor* out, CancellationManager* cancellation, StatusCallback done) {
        worker->RecvBufAsync(key, absl::Now() + wait, out, std::move(done), cancellation);
      },
      wait);
}

}  // namespace tensorgrid
