#include "distributed/rpc/grpc_front_door.h"

#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/platform/malloc_tuning.h"
#include "core/platform/status.h"
#include "distributed/rpc/grpc_util.h"
#include "distributed/rpc/tensor_coding.h"

namespace tensorgrid {

// The gRPC side of one call: reads the request, once, and sends the answer
// GrpcCall gives it. gRPC owns it until OnDone, which comes after the answer
// and after every other reaction; it deletes itself there. Anything that
// outlives it (the request's deadline, the handler) holds the GrpcCall.
class GrpcCall::Reactor final : public grpc::ServerGenericBidiReactor {
 public:
  using Arrival = std::function<void(std::shared_ptr<GrpcCall>)>;

  Reactor(std::shared_ptr<GrpcCall> call, GrpcFrontDoor* door)
      : call_(std::move(call)), door_(door) {}

  // Reads the request and passes it to `arrive`, unless the call was
  // answered first (its request did not arrive in time).
  void Read(Arrival arrive) {
    arrive_ = std::move(arrive);
    StartRead(&call_->request_);
  }

  // Sends the answer; the last thing anyone does with the reactor.
  void Send(const grpc::Status& status, const grpc::ByteBuffer* response) {
    if (response == nullptr) return Finish(status);
    StartWriteAndFinish(response, grpc::WriteOptions(), status);
  }

  void OnReadDone(bool ok) override {
    door_->Arrived(*call_);
    // Once the handler has answered, gRPC may delete this reactor.
    std::shared_ptr<GrpcCall> call = call_;
    Arrival arrive = std::move(arrive_);
    {
      absl::MutexLock lock(&call->mu_);
      if (call->reactor_ == nullptr) return;  // answered already: the deadline passed
      call->arrived_ = true;
    }
    // No message: the client half-closed without one, or went away.
    if (!ok) {
      call->Finish(InvalidMessageStatus(call->method()));
      return;
    }
    arrive(std::move(call));
  }

  void OnCancel() override {
    std::function<void()> cancel;
    {
      absl::MutexLock lock(&call_->mu_);
      call_->cancelled_ = true;
      cancel = std::move(call_->on_cancel_);
    }
    if (cancel) cancel();
  }

  void OnDone() override { delete this; }

 private:
  const std::shared_ptr<GrpcCall> call_;
  GrpcFrontDoor* const door_;
  Arrival arrive_;
};

bool GrpcCall::Finish(grpc::Status status) {
  Reactor* reactor;
  std::function<void()> cancel;  // released outside mu_, and breaks any cycle through it
  {
    absl::MutexLock lock(&mu_);
    reactor = std::exchange(reactor_, nullptr);
    cancel = std::move(on_cancel_);
  }
  if (reactor == nullptr) return false;
  reactor->Send(status, nullptr);
  return true;
}

bool GrpcCall::Reply(grpc::ByteBuffer response) {
  Reactor* reactor;
  std::function<void()> cancel;
  {
    absl::MutexLock lock(&mu_);
    reactor = std::exchange(reactor_, nullptr);
    if (reactor == nullptr) return false;
    cancel = std::move(on_cancel_);
    response_ = std::move(response);  // only the answering thread writes it
  }
  reactor->Send(grpc::Status::OK, &response_);
  return true;
}

void GrpcCall::TimeOut(absl::Duration timeout) {
  Reactor* reactor;
  std::function<void()> cancel;
  {
    absl::MutexLock lock(&mu_);
    if (arrived_) return;  // a handler has it, and answers
    reactor = std::exchange(reactor_, nullptr);
    cancel = std::move(on_cancel_);
  }
  if (reactor == nullptr) return;
  // Finishing also resets the stream, which stops the client sending more.
  reactor->Send(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                             absl::StrCat("the request to ", method_, " did not arrive within ",
                                          absl::FormatDuration(timeout),
                                          " of the call's start (request_timeout)")),
                nullptr);
}

void GrpcCall::OnCancel(std::function<void()> cancel) {
  {
    absl::MutexLock lock(&mu_);
    if (!cancelled_) {
      if (reactor_ != nullptr) on_cancel_ = std::move(cancel);  // else: answered, moot
      return;
    }
  }
  cancel();
}

bool ParseRequest(GrpcCall& call, google::protobuf::MessageLite* message) {
  if (ParseFromByteBuffer(call.request(), message)) return true;
  call.Finish(InvalidMessageStatus(call.method()));
  return false;
}

// The handlers still running on threads of their own. Shared with those
// threads, so that the last one may count itself out after the door is gone.
struct GrpcFrontDoor::OwnThreads {
  absl::Mutex mu;
  int running ABSL_GUARDED_BY(mu) = 0;
};

GrpcFrontDoor::GrpcFrontDoor(Options options)
    : options_(std::move(options)), own_threads_(std::make_shared<OwnThreads>()) {
  if (options_.request_timeout > absl::ZeroDuration()) {
    arrivals_thread_ = std::thread([this] { CutLateArrivals(); });
  }
}

GrpcFrontDoor::~GrpcFrontDoor() {
  if (arrivals_thread_.joinable()) {
    {
      absl::MutexLock lock(&arrivals_mu_);
      stopping_ = true;
    }
    arrivals_thread_.join();
  }
  absl::MutexLock lock(&own_threads_->mu);
  own_threads_->mu.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &own_threads_->running));
}

void GrpcFrontDoor::AwaitArrival(std::shared_ptr<GrpcCall> call) {
  GrpcCall* c = call.get();
  absl::MutexLock lock(&arrivals_mu_);
  c->arrive_by_ = absl::Now() + options_.request_timeout;
  c->waiting_at_ = arriving_.insert(arriving_.end(), std::move(call));
  c->waiting_ = true;
}

void GrpcFrontDoor::Arrived(GrpcCall& call) {
  std::shared_ptr<GrpcCall> released;  // outside the lock
  absl::MutexLock lock(&arrivals_mu_);
  if (!call.waiting_) return;  // not watched, or cut already
  released = std::move(*call.waiting_at_);
  arriving_.erase(call.waiting_at_);
  call.waiting_ = false;
}

void GrpcFrontDoor::CutLateArrivals() {
  absl::MutexLock lock(&arrivals_mu_);
  while (!stopping_) {
    // A call added later has a later deadline: waking for the earliest one
    // (or one timeout from now) is never late.
    const absl::Time wake =
        arriving_.empty() ? absl::Now() + options_.request_timeout : arriving_.front()->arrive_by_;
    arrivals_mu_.AwaitWithDeadline(absl::Condition(&stopping_), wake);
    std::vector<std::shared_ptr<GrpcCall>> late;
    const absl::Time now = absl::Now();
    while (!arriving_.empty() && arriving_.front()->arrive_by_ <= now) {
      late.push_back(std::move(arriving_.front()));
      late.back()->waiting_ = false;
      arriving_.pop_front();
    }
    if (late.empty()) continue;
    arrivals_mu_.Unlock();
    for (const std::shared_ptr<GrpcCall>& call : late) call->TimeOut(options_.request_timeout);
    late.clear();
    arrivals_mu_.Lock();
  }
}

void GrpcFrontDoor::Add(std::string method, Runs runs, Handler handler) {
  methods_[std::move(method)] = Method{runs, std::move(handler)};
}

void GrpcFrontDoor::RegisterOn(grpc::ServerBuilder* builder) {
  KeepLargeFreedMemory();  // gRPC's receive buffers: see malloc_tuning.h
  builder->RegisterCallbackGenericService(this);
  builder->SetMaxReceiveMessageSize(options_.max_request_bytes);
  // Clients ping every 10 s during long calls; without these gRPC would take
  // that for abuse and close the connection ("too_many_pings").
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
}

grpc::ServerGenericBidiReactor* GrpcFrontDoor::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  std::shared_ptr<GrpcCall> call(new GrpcCall(context->method(), context->deadline()));
  auto* reactor = new GrpcCall::Reactor(call, this);
  {
    absl::MutexLock lock(&call->mu_);
    call->reactor_ = reactor;
  }
  // Nothing of the request has been read: a call refused here can have
  // pushed at most one HTTP/2 stream window of it.
  if (grpc::Status denied = CheckAuth(*context, options_.auth_token); !denied.ok()) {
    call->Finish(std::move(denied));
    return reactor;
  }
  auto it = methods_.find(context->method());
  if (it == methods_.end()) {
    call->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                              absl::StrCat("this server has no method ", context->method())));
    return reactor;
  }
  const Method* method = &it->second;
  if (arrivals_thread_.joinable()) AwaitArrival(call);
  reactor->Read([this, method](std::shared_ptr<GrpcCall> call) {
    if (method->runs == Runs::kInline) return method->handler(std::move(call));
    absl::Status started =
        RunOnOwnThread([method, call]() mutable { method->handler(std::move(call)); });
    if (!started.ok()) call->Finish(ToGrpcStatus(WithContext(started, call->method())));
  });
  return reactor;
}

absl::Status GrpcFrontDoor::RunOnOwnThread(std::function<void()> work) {
  {
    absl::MutexLock lock(&own_threads_->mu);
    if (own_threads_->running >= options_.max_own_threads) {
      return errors::ResourceExhausted("this task is already serving ", own_threads_->running,
                                       " calls that each take a thread (max_own_threads); "
                                       "try again later");
    }
    ++own_threads_->running;
  }
  try {
    std::thread([threads = own_threads_, work = std::move(work)]() mutable {
      work();
      work = nullptr;  // what it holds goes before the door may
      absl::MutexLock lock(&threads->mu);
      --threads->running;
    }).detach();
  } catch (const std::system_error& e) {
    absl::MutexLock lock(&own_threads_->mu);
    --own_threads_->running;
    return errors::ResourceExhausted("this task cannot start a thread for the call: ", e.what());
  }
  return absl::OkStatus();
}

}  // namespace tensorgrid
