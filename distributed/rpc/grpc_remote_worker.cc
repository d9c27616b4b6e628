#include "distributed/rpc/grpc_remote_worker.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/transport/frames.h"

namespace tensorgrid {

struct GrpcRemoteWorker::InFlight {
  absl::Mutex mu;
  std::set<grpc::ClientContext*> calls ABSL_GUARDED_BY(mu);  // to cancel
  int holds ABSL_GUARDED_BY(mu) = 0;                         // Holds alive
  bool closing ABSL_GUARDED_BY(mu) = false;                  // the destructor runs
};

namespace {

using InFlight = GrpcRemoteWorker::InFlight;

// While alive, the worker's destructor waits: for a call in flight, or for a
// callback that still uses the worker after its call is gone.
class Hold {
 public:
  explicit Hold(std::shared_ptr<InFlight> in_flight) : in_flight_(std::move(in_flight)) {
    absl::MutexLock lock(&in_flight_->mu);
    ++in_flight_->holds;
  }
  ~Hold() { Release(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

  void Release() {
    if (in_flight_ == nullptr) return;
    std::shared_ptr<InFlight> in_flight = std::move(in_flight_);
    absl::MutexLock lock(&in_flight->mu);
    --in_flight->holds;
  }
  // The destructor cancels `context`'s call until Untrack. False, tracking
  // nothing, once the destructor runs: the call must not start (its
  // callback would come after the worker is gone).
  bool Track(grpc::ClientContext* context) {
    absl::MutexLock lock(&in_flight_->mu);
    if (in_flight_->closing) return false;
    in_flight_->calls.insert(context);
    return true;
  }
  void Untrack(grpc::ClientContext* context) {
    absl::MutexLock lock(&in_flight_->mu);
    in_flight_->calls.erase(context);
  }

 private:
  std::shared_ptr<InFlight> in_flight_;
};

// The generated stub's name for RecvTensor, for the raw call. Must outlive
// every call (gRPC keeps the pointer).
const char kRecvTensorMethod[] = "/tensorgrid.WorkerService/RecvTensor";
const char kRecvBufMethod[] = "/tensorgrid.WorkerService/RecvBuf";

// Past a collective's own timeout, for the peer's answer to arrive.
constexpr absl::Duration kCollectiveGrace = absl::Seconds(10);

// One call in flight: owns what gRPC reads and writes until it completes.
// The completion callback frees it before running `done`: once `done`
// returns, the caller may tear everything down (the process, even), so
// nothing of ours may be left for gRPC's thread to destroy afterwards. The
// callback uses the worker only while the call lives (or under a Hold of
// its own).
template <typename Request, typename Response>
struct Call {
  Call(absl::Duration timeout, const RpcSecurity& security, std::shared_ptr<InFlight> in_flight)
      : hold(std::move(in_flight)) {
    SetDeadline(&context, timeout);
    AttachAuth(&context, security);
  }
  ~Call() { hold.Untrack(&context); }
  Hold hold;  // first: released once the context (and its channel reference) is gone
  grpc::ClientContext context;
  Request request;
  Response response;
};

// The deadline `timeout` from now; none (infinite) for a non-positive
// timeout, as SetDeadline reads one.
// Null once the worker's destructor runs (a request a bulk-port fallback
// hands to gRPC while the route is torn down): the caller answers Going.
template <typename Request, typename Response>
std::shared_ptr<Call<Request, Response>> NewCall(const absl::Duration timeout,
                                                 const RpcSecurity& security,
                                                 std::shared_ptr<InFlight> in_flight) {
  auto call = std::make_shared<Call<Request, Response>>(timeout, security, std::move(in_flight));
  if (!call->hold.Track(&call->context)) return nullptr;
  return call;
}

absl::Time DeadlineIn(absl::Duration timeout) {
  return timeout > absl::ZeroDuration() ? absl::Now() + timeout : absl::InfiniteFuture();
}

// What is left until `deadline`, at least a millisecond (a non-positive
// timeout would mean none at all): for a request sent over gRPC.
absl::Duration Left(absl::Time deadline) {
  return std::max(absl::Milliseconds(1), deadline - absl::Now());
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

GrpcRemoteWorker::GrpcRemoteWorker(std::string address, const Options& options)
    : address_(std::move(address)),
      peer_(options.task.empty() ? absl::StrCat("worker ", address_)
                                 : absl::StrCat("task ", options.task, " (", address_, ")")),
      rpc_timeout_(options.rpc_timeout),
      step_rpc_timeout_(options.step_rpc_timeout),
      security_(options.security),
      max_message_bytes_(std::min(options.max_message_bytes, kMaxGrpcMessageBytes)),
      // Fetches and received tensors may be large: allow what one gRPC
      // message can carry (larger tensors fail on the sender, naming the key).
      channel_(NewChannel(address_, security_, static_cast<int>(max_message_bytes_))),
      stub_(WorkerService::NewStub(channel_)),
      raw_stub_(channel_),
      raw_buf_stub_(channel_),
      bulk_(options.bulk_transfer && !security_.tls()
                ? std::make_unique<BulkRoute>(BulkRoute::Options{
                      bulk::HostOf(address_), options.task, security_.auth_token, peer_,
                      [this](std::function<void(std::optional<int>)> learned) {
                        DiscoverBulkPort(std::move(learned));
                      }})
                : nullptr),
      in_flight_(std::make_shared<InFlight>()) {}

absl::Duration GrpcRemoteWorker::TimeoutUntil(absl::Time deadline) const {
  return deadline == absl::InfiniteFuture() ? rpc_timeout_ : std::min(rpc_timeout_, Left(deadline));
}

absl::Status GrpcRemoteWorker::Going(absl::string_view method) const {
  return errors::Cancelled(method, " on ", peer_, ": not sent, the worker is being destroyed");
}

absl::Status GrpcRemoteWorker::Finish(absl::string_view method, const grpc::Status& status) const {
  return WithContext(FromGrpcStatus(status), absl::StrCat(method, " on ", peer_));
}

void GrpcRemoteWorker::ReceiveTensor(
    const std::string& method, const grpc::Status& status, std::shared_ptr<void> call,
    const grpc::ByteBuffer& response, const Tensor* into, Tensor* out,
    std::function<void(std::string id, StatusCallback done)> ask_inline, StatusCallback done) {
  // One decode: the tensor itself, or the ticket for its bytes.
  BulkResponse ticket;
  absl::Status s = Finish(method, status);
  if (s.ok()) {
    absl::StatusOr<Tensor> value =
        DecodeRecvTensorResponse(response, into, bulk_ != nullptr ? &ticket : nullptr);
    if (value.ok()) {
      if (ticket.id.empty()) *out = *std::move(value);
    } else {
      s = WithContext(value.status(), absl::StrCat(method, " on ", peer_, ": bad response"));
    }
  }
  // The worker is used below, after the call is gone.
  Hold busy(in_flight_);
  call.reset();  // before done: see Call; frees the received bytes too
  if (!s.ok() || ticket.id.empty()) {
    busy.Release();
    return done(s);
  }
  const int port = ticket.port;
  bulk_->FetchTicketAsync(
      port, ticket.id, ticket.tensor, out, rpc_timeout_,
      [this, method, port, done](absl::Status s) {
        if (!s.ok()) s = WithContext(s, absl::StrCat(method, " on ", peer_, ", port ", port));
        done(s);
      },
      [id = ticket.id, ask_inline = std::move(ask_inline), done](absl::Time) {
        ask_inline(id, done);  // the ticket is still there: its bytes over gRPC
      });
}

void GrpcRemoteWorker::GetStatusAsync(absl::Time deadline, GetStatusResult* response,
                                      StatusCallback done) {
  auto call =
      NewCall<GetStatusRequest, GetStatusResponse>(TimeoutUntil(deadline), security_, in_flight_);
  if (call == nullptr) return done(Going("GetStatus"));
  stub_->async()->GetStatus(
      &call->context, &call->request, &call->response,
      [this, call, response, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = Finish("GetStatus", status);
        // RunGraph, RecvTensor and RecvBuf may go straight to it from now on.
        if (s.ok() && bulk_ != nullptr) bulk_->Learn(call->response.bulk_port());
        if (s.ok()) {
          response->devices.clear();
          for (const DeviceAttributesProto& d : call->response.device_attributes()) {
            response->devices.push_back(DeviceInfoFromProto(d));
          }
        }
        call.reset();  // before done: see Call
        done(s);
      });
}

void GrpcRemoteWorker::RegisterGraphAsync(const RegisterGraphArgs& request,
                                          RegisterGraphResult* response, StatusCallback done) {
  auto call =
      NewCall<RegisterGraphRequest, RegisterGraphResponse>(rpc_timeout_, security_, in_flight_);
  if (call == nullptr) return done(Going("RegisterGraph"));
  *call->request.mutable_graph_def() = request.graph;
  stub_->async()->RegisterGraph(
      &call->context, &call->request, &call->response,
      [this, call, response, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = Finish("RegisterGraph", status);
        if (s.ok()) response->graph_handle = std::move(*call->response.mutable_graph_handle());
        call.reset();  // before done: see Call
        done(s);
      });
}

void GrpcRemoteWorker::DeregisterGraphAsync(const std::string& graph_handle, absl::Time deadline,
                                            StatusCallback done) {
  auto call = NewCall<DeregisterGraphRequest, DeregisterGraphResponse>(TimeoutUntil(deadline),
                                                                       security_, in_flight_);
  if (call == nullptr) return done(Going("DeregisterGraph"));
  call->request.set_graph_handle(graph_handle);
  stub_->async()->DeregisterGraph(
      &call->context, &call->request, &call->response,
      [this, call, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = Finish("DeregisterGraph", status);
        call.reset();  // before done: see Call
        done(s);
      });
}

void GrpcRemoteWorker::RunGraphAsync(const RunGraphArgs& request, RunGraphResult* response,
                                     StatusCallback done) {
  // The worker enforces timeout_in_ms itself and says so more precisely than
  // an expired deadline would, so the RPC keeps the stub's own deadline.
  // A little beyond the step's own limit, so the worker's DeadlineExceeded
  // (which says which step and how long) arrives first.
  const absl::Duration deadline = request.timeout_in_ms > 0
                                      ? absl::Milliseconds(request.timeout_in_ms) + absl::Seconds(2)
                                      : step_rpc_timeout_;
  auto wire = std::make_shared<RunGraphRequest>();
  wire->set_graph_handle(request.graph_handle);
  wire->set_step_id(request.step_id);
  wire->set_timeout_in_ms(request.timeout_in_ms);
  wire->set_collect_step_stats(request.collect_step_stats);
  for (size_t i = 0; i < request.feeds.size(); ++i) {
    NamedTensorProto* named = wire->add_send();
    named->set_name(std::to_string(i));
    TensorToProto(request.feeds[i], named->mutable_tensor());
  }
  // Past this, gRPC would fail inside its serialization with a bare Internal.
  if (const size_t bytes = wire->ByteSizeLong(); bytes > max_message_bytes_) {
    done(errors::ResourceExhausted("RunGraph on ", peer_, ": ", request.feeds.size(),
                                   " feeds make a request of ", bytes, " bytes, over the limit of ",
                                   max_message_bytes_, " bytes for one gRPC message"));
    return;
  }
  if (bulk_ == nullptr) return RunGraphCall(std::move(wire), deadline, response, std::move(done));
  // On the peer's bulk port when its route says so: a plain TCP round trip
  // instead of a gRPC call.
  bulk_->CallAsync(
      kBulkRunGraph, [&] { return wire->SerializeAsString(); }, DeadlineIn(deadline),
      [this, response, done](absl::Status s, std::string answer) {
        RunGraphResponse parsed;
        if (s.ok() && !parsed.ParseFromString(answer)) {
          s = errors::DataLoss("the answer is not a tensorgrid.RunGraphResponse");
        }
        done(FinishRunGraph(s, &parsed, response));
      },
      [this, wire, response, done](absl::Time until) {
        RunGraphCall(wire, Left(until), response, done);
      });
}

void GrpcRemoteWorker::RunGraphCall(std::shared_ptr<RunGraphRequest> wire, absl::Duration deadline,
                                    RunGraphResult* response, StatusCallback done) {
  auto call = NewCall<RunGraphRequest, RunGraphResponse>(deadline, security_, in_flight_);
  if (call == nullptr) return done(Going("RunGraph"));
  call->request = std::move(*wire);
  stub_->async()->RunGraph(
      &call->context, &call->request, &call->response,
      [this, call, response, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = FinishRunGraph(FromGrpcStatus(status), &call->response, response);
        call.reset();  // before done: see Call
        done(s);
      });
}

absl::Status GrpcRemoteWorker::FinishRunGraph(absl::Status s, RunGraphResponse* wire,
                                              RunGraphResult* response) const {
  const std::string what = absl::StrCat("RunGraph on ", peer_);
  if (!s.ok()) return WithContext(s, what);
  s = DecodeFetches(wire->recv(), &response->fetches);
  if (!s.ok()) return WithContext(s, what);
  response->step_stats = std::move(*wire->mutable_step_stats());
  return absl::OkStatus();
}

void GrpcRemoteWorker::DiscoverBulkPort(std::function<void(std::optional<int> port)> learned) {
  // Not known yet (no session here asked the peer's status): ask in the
  // background.
  auto call = NewCall<GetStatusRequest, GetStatusResponse>(rpc_timeout_, security_, in_flight_);
  if (call == nullptr) return learned(std::nullopt);  // the worker is going
  stub_->async()->GetStatus(
      &call->context, &call->request, &call->response,
      [call, learned = std::move(learned)](grpc::Status status) mutable {
        learned(status.ok() ? std::optional<int>(call->response.bulk_port()) : std::nullopt);
        call.reset();
      });
}

GrpcRemoteWorker::~GrpcRemoteWorker() {
  InFlight& f = *in_flight_;
  auto idle = [&f] {
    f.mu.AssertHeld();
    return f.holds == 0;
  };
  absl::MutexLock lock(&f.mu);
  f.closing = true;  // no call starts from now on
  // A cancelled call completes at once. (gRPC runs no callback inline in
  // TryCancel, so holding the lock is safe.)
  for (grpc::ClientContext* context : f.calls) context->TryCancel();
  f.mu.Await(absl::Condition(&idle));
  // Then bulk_ goes: requests still waiting on the port end Cancelled, and a
  // fallback to gRPC meanwhile is answered Going.
}

void GrpcRemoteWorker::CleanupGraphAsync(int64_t step_id, StatusCallback done) {
  auto call =
      NewCall<CleanupGraphRequest, CleanupGraphResponse>(rpc_timeout_, security_, in_flight_);
  if (call == nullptr) return done(Going("CleanupGraph"));
  call->request.set_step_id(step_id);
  stub_->async()->CleanupGraph(&call->context, &call->request, &call->response,
                               [this, call, done = std::move(done)](grpc::Status status) mutable {
                                 absl::Status s = Finish("CleanupGraph", status);
                                 call.reset();  // before done: see Call
                                 done(s);
                               });
}

void GrpcRemoteWorker::CleanupAllAsync(const std::vector<std::string>& containers,
                                       StatusCallback done) {
  auto call = NewCall<CleanupAllRequest, CleanupAllResponse>(rpc_timeout_, security_, in_flight_);
  if (call == nullptr) return done(Going("CleanupAll"));
  for (const std::string& c : containers) call->request.add_container(c);
  stub_->async()->CleanupAll(&call->context, &call->request, &call->response,
                             [this, call, done = std::move(done)](grpc::Status status) mutable {
                               absl::Status s = Finish("CleanupAll", status);
                               call.reset();  // before done: see Call
                               done(s);
                             });
}

void GrpcRemoteWorker::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key,
                                       Tensor* tensor, StatusCallback done,
                                       CancellationManager* /*cancellation*/) {
  if (bulk_ == nullptr) {
    return RecvTensorCall(step_id, rendezvous_key, "", step_rpc_timeout_, tensor, std::move(done));
  }
  // Straight to the peer's bulk port when its route says so: a TCP round
  // trip instead of a gRPC call, and the bytes of a large tensor with no
  // ticket.
  bulk_->RecvTensorAsync(
      step_id, rendezvous_key, DeadlineIn(step_rpc_timeout_), tensor,
      [this, rendezvous_key, done](absl::Status s) {
        if (!s.ok()) {
          s = WithContext(s, absl::StrCat("RecvTensor of '", rendezvous_key, "' on ", peer_));
        }
        done(s);
      },
      [this, step_id, rendezvous_key, tensor, done](absl::Time until) {
        RecvTensorCall(step_id, rendezvous_key, "", Left(until), tensor, done);
      });
}

void GrpcRemoteWorker::RecvTensorsAsync(int64_t step_id, const std::vector<std::string>& keys,
                                        std::vector<Tensor>* tensors,
                                        std::function<void(int, absl::Status)> received,
                                        CancellationManager* cancellation) {
  if (bulk_ == nullptr) {
    return WorkerInterface::RecvTensorsAsync(step_id, keys, tensors, std::move(received),
                                             cancellation);
  }
  // As many requests as the keys need (BatchesOf); a run of one is a plain
  // RecvTensor.
  const absl::Time deadline = DeadlineIn(step_rpc_timeout_);
  for (const auto& [first, end] : bulk::BatchesOf(keys)) {
    if (end - first == 1) {
      RecvTensorAsync(step_id, keys[first], &(*tensors)[first],
                      [received, i = static_cast<int>(first)](absl::Status s) { received(i, s); });
      continue;
    }
    struct Run {
      std::vector<std::string> keys;
      std::vector<Tensor> tensors;
    };
    auto run = std::make_shared<Run>();
    run->keys.assign(keys.begin() + first, keys.begin() + end);
    run->tensors.resize(run->keys.size());
    // Key j of the run is key first + j of the caller's.
    auto deliver = [tensors, received, run, first = first](int j, absl::Status s) {
      (*tensors)[first + j] = std::move(run->tensors[j]);
      received(static_cast<int>(first) + j, std::move(s));
    };
    bulk_->RecvTensorsAsync(
        step_id, run->keys, deadline, &run->tensors,
        [this, run, deliver](int j, absl::Status s) {
          if (!s.ok()) {
            s = WithContext(s, absl::StrCat("RecvTensor of '", run->keys[j], "' on ", peer_));
          }
          deliver(j, std::move(s));
        },
        [this, step_id, run, deliver](absl::Time until) {
          for (size_t j = 0; j < run->keys.size(); ++j) {
            RecvTensorCall(step_id, run->keys[j], "", Left(until), &run->tensors[j],
                           [deliver, j](absl::Status s) { deliver(static_cast<int>(j), s); });
          }
        });
  }
}

void GrpcRemoteWorker::RecvTensorCall(int64_t step_id, const std::string& rendezvous_key,
                                      std::string ticket, absl::Duration timeout, Tensor* tensor,
                                      StatusCallback done) {
  auto call = NewCall<RecvTensorRequest, grpc::ByteBuffer>(timeout, security_, in_flight_);
  if (call == nullptr) return done(Going("RecvTensor"));
  call->request.set_step_id(step_id);
  call->request.set_rendezvous_key(rendezvous_key);
  call->request.set_accept_bulk(ticket.empty() && AcceptBulk());
  call->request.set_bulk_ticket(std::move(ticket));
  raw_stub_.UnaryCall(
      &call->context, kRecvTensorMethod, grpc::StubOptions(), &call->request, &call->response,
      [this, call, tensor, done = std::move(done)](grpc::Status status) mutable {
        const RecvTensorRequest& r = call->request;
        const grpc::ByteBuffer& response = call->response;
        ReceiveTensor(
            absl::StrCat("RecvTensor of '", r.rendezvous_key(), "'"), status, std::move(call),
            response, nullptr, tensor,
            [this, step_id = r.step_id(), key = r.rendezvous_key(), tensor](std::string id,
                                                                            StatusCallback done) {
              // The tensor exists: its wait no longer matters.
              RecvTensorCall(step_id, key, std::move(id), std::max(rpc_timeout_, step_rpc_timeout_),
                             tensor, std::move(done));
            },
            std::move(done));
      });
}

void GrpcRemoteWorker::CompleteGroupAsync(const CompleteGroupArgs& request,
                                          CompleteGroupResult* response, StatusCallback done) {
  auto call = NewCall<CompleteGroupRequest, CompleteGroupResponse>(
      request.timeout + kCollectiveGrace, security_, in_flight_);
  if (call == nullptr) return done(Going("CompleteGroup"));
  call->request.set_group_key(request.group_key);
  call->request.set_group_size(request.group_size);
  call->request.set_device_type(request.device_type);
  call->request.set_device_name(request.device);
  call->request.set_incarnation(request.incarnation);
  call->request.set_timeout_ms(absl::ToInt64Milliseconds(request.timeout));
  stub_->async()->CompleteGroup(
      &call->context, &call->request, &call->response,
      [this, call, response, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = Finish("CompleteGroup", status);
        if (s.ok()) {
          const CompleteGroupResponse& r = call->response;
          response->group_key = r.group_key();
          response->group_size = r.group_size();
          response->device_type = r.device_type();
          response->devices.assign(r.device_name().begin(), r.device_name().end());
          response->incarnations.assign(r.incarnation().begin(), r.incarnation().end());
        }
        call.reset();  // before done: see Call
        done(s);
      });
}

void GrpcRemoteWorker::CompleteInstanceAsync(const CompleteInstanceArgs& request,
                                             CompleteInstanceResult* response,
                                             StatusCallback done) {
  auto call = NewCall<CompleteInstanceRequest, CompleteInstanceResponse>(
      request.timeout + kCollectiveGrace, security_, in_flight_);
  if (call == nullptr) return done(Going("CompleteInstance"));
  CompleteInstanceRequest& r = call->request;
  r.set_group_key(request.group_key);
  r.set_group_size(request.group_size);
  r.set_instance_key(request.instance_key);
  r.set_device_name(request.device);
  r.set_op(request.op);
  r.set_dtype(request.dtype);
  for (int64_t d : request.shape) r.add_shape(d);
  r.set_is_source(request.is_source);
  r.set_next_seq(request.next_seq);
  r.set_timeout_ms(absl::ToInt64Milliseconds(request.timeout));
  stub_->async()->CompleteInstance(
      &call->context, &call->request, &call->response,
      [this, call, response, done = std::move(done)](grpc::Status status) mutable {
        absl::Status s = Finish("CompleteInstance", status);
        if (s.ok()) {
          response->source_rank = call->response.source_rank();
          response->exec_seq = call->response.exec_seq();
        }
        call.reset();  // before done: see Call
        done(s);
      });
}

void GrpcRemoteWorker::RecvBufAsync(const std::string& key, absl::Time deadline, Tensor* tensor,
                                    StatusCallback done, CancellationManager* /*cancellation*/) {
  if (bulk_ == nullptr) return RecvBufCall(key, deadline, "", tensor, std::move(done));
  // Chunks go straight to the peer's bulk port when its route says so: a
  // plain TCP round trip, no gRPC call, no ticket.
  bulk_->RecvBufAsync(
      key, deadline, tensor,
      [this, key, done](absl::Status s) {
        if (!s.ok()) s = WithContext(s, absl::StrCat("RecvBuf of '", key, "' on ", peer_));
        done(s);
      },
      [this, key, tensor, done](absl::Time until) { RecvBufCall(key, until, "", tensor, done); });
}

void GrpcRemoteWorker::RecvBufCall(const std::string& key, absl::Time deadline, std::string ticket,
                                   Tensor* tensor, StatusCallback done) {
  const absl::Duration left = std::max(absl::ZeroDuration(), deadline - absl::Now());
  // The peer waits until a little before the RPC's deadline (RecvWait), so
  // a small grace past `deadline` lets its DeadlineExceeded (naming the key)
  // arrive rather than gRPC's own.
  auto call = NewCall<RecvBufRequest, grpc::ByteBuffer>(left + absl::Milliseconds(200), security_,
                                                        in_flight_);
  if (call == nullptr) return done(Going("RecvBuf"));
  call->request.set_buf_key(key);
  call->request.set_accept_bulk(ticket.empty() && AcceptBulk());
  call->request.set_bulk_ticket(std::move(ticket));
  raw_buf_stub_.UnaryCall(
      &call->context, kRecvBufMethod, grpc::StubOptions(), &call->request, &call->response,
      [this, call, tensor, deadline, done = std::move(done)](grpc::Status status) mutable {
        const std::string key = call->request.buf_key();
        const grpc::ByteBuffer& response = call->response;
        // Straight into the caller's buffer when it gave one that fits.
        ReceiveTensor(
            absl::StrCat("RecvBuf of '", key, "'"), status, std::move(call), response, tensor,
            tensor,
            [this, key, deadline, tensor](std::string id, StatusCallback done) {
              // The chunk exists: its deadline no longer matters.
              RecvBufCall(key, std::max(deadline, absl::Now() + rpc_timeout_), std::move(id),
                          tensor, std::move(done));
            },
            std::move(done));
      });
}

}  // namespace tensorgrid
