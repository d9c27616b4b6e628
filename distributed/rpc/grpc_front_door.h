// GrpcFrontDoor: the one gRPC service of a task's port. Every call to the
// task's WorkerService and MasterService comes in through it, and before a
// byte of its request is read it
//   1. checks the call's auth token, from the call's metadata
//      (Unauthenticated, naming what is wrong);
//   2. finds the method (Unimplemented for one it does not serve);
// then it reads the request, which must arrive whole within
// Options::request_timeout of the call's start (DeadlineExceeded, and the
// stream is reset), and which gRPC refuses past Options::max_request_bytes
// (ResourceExhausted; gRPC 1.51 checks the size once the message has
// arrived, so only a caller that holds the token gets that far); and then
//   3. hands the request to the method's handler, which answers through the
//      GrpcCall (a handler that blocks gets a thread of its own, at most
//      Options::max_own_threads at once: ResourceExhausted past them).
//
//   GrpcFrontDoor::Options options;
//   options.auth_token = "s3cret";
//   GrpcFrontDoor door(options);
//   GrpcWorkerService worker_service(&worker, &door);   // adds its methods
//   grpc::ServerBuilder builder;
//   builder.AddListeningPort(...);
//   door.RegisterOn(&builder);
//   std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
//
// Why not gRPC's generated services: gRPC hands a registered method its
// request only once it has received all of it, and checks the size limit
// only then too, so a peer without the token could make a task take in a
// gigabyte before it was told no. A method gRPC does not know (which is
// every method, to gRPC, once they all come in here) reaches this service
// with its metadata alone; a call refused here has had no byte of its
// message read, and HTTP/2's flow control bounds what its peer can push
// meanwhile (one stream window).
//
// Handlers run on one of gRPC's callback threads (Runs::kInline), where they
// must not block: they answer later from whichever thread finishes their
// work. A handler whose work blocks (a master's session calls wait for other
// tasks) runs on a thread of its own (Runs::kOnOwnThread), as it would on
// gRPC's synchronous server. Thread-safe once the server has started; add
// every method before that. Destroy it after the server has shut down.
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_FRONT_DOOR_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_FRONT_DOOR_H_

#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "distributed/rpc/grpc_util.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/proto_utils.h"  // SerializationTraits of protobuf messages

namespace tensorgrid {

// One call, as its handler sees it: the request, the client's deadline, and
// the means to answer. Answer exactly once, from any thread; the first
// answer goes out and later ones are ignored, so that a deadline and the
// work it bounds may race to answer. The handle stays valid as long as it is
// held, also after the call is over.
class GrpcCall {
 public:
  // "/tensorgrid.WorkerService/RunGraph"
  const std::string& method() const { return method_; }
  // The whole request, as it came off the wire.
  const grpc::ByteBuffer& request() const { return request_; }
  // The client's deadline (far in the future when it set none).
  std::chrono::system_clock::time_point deadline() const { return deadline_; }

  // Answers with `status` (an error, or OK with an empty response). False if
  // the call was answered already.
  bool Finish(grpc::Status status);
  // Answers OK with `response`.
  bool Reply(grpc::ByteBuffer response);
  template <typename Message>
  bool Reply(const Message& message);

  // Runs `cancel` once, on a gRPC thread, when the client cancels the call,
  // goes away or lets its deadline pass, and at once if that happened
  // already. The call must still be answered. Set it at most once.
  void OnCancel(std::function<void()> cancel);

 private:
  friend class GrpcFrontDoor;
  class Reactor;
  GrpcCall(std::string method, std::chrono::system_clock::time_point deadline)
      : method_(std::move(method)), deadline_(deadline) {}
  // Answers DeadlineExceeded if the request has not arrived yet.
  void TimeOut(absl::Duration timeout);

  // While the request is on its way: when it must have arrived, and the
  // call's place among the door's calls waiting for theirs (guarded by the
  // door's arrivals_mu_).
  absl::Time arrive_by_;
  std::list<std::shared_ptr<GrpcCall>>::iterator waiting_at_;
  bool waiting_ = false;

  const std::string method_;
  const std::chrono::system_clock::time_point deadline_;
  grpc::ByteBuffer request_;   // read into by the reactor, before any handler runs
  grpc::ByteBuffer response_;  // written out by the reactor; kept until the call is over
  absl::Mutex mu_;
  // Null once answered. Answers go to it outside mu_: gRPC may end the
  // call, and delete the reactor, before they return.
  Reactor* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool arrived_ ABSL_GUARDED_BY(mu_) = false;  // the request was read
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> on_cancel_ ABSL_GUARDED_BY(mu_);
};

// Parses the call's request as `message`; when it does not parse, answers
// InvalidArgument naming the method and returns false.
bool ParseRequest(GrpcCall& call, google::protobuf::MessageLite* message);

class GrpcFrontDoor final : public grpc::CallbackGenericService {
 public:
  struct Options {
    // Every call must carry it (see AttachAuth in grpc_util.h); empty: none
    // needs to.
    std::string auth_token;
    // The largest request gRPC accepts; larger ones are ResourceExhausted
    // once they have arrived (gRPC 1.51 checks no sooner).
    int max_request_bytes = 1 << 30;
    // How long a request may take to arrive whole, from its call's start.
    // Zero: as long as the client's deadline.
    absl::Duration request_timeout = absl::Seconds(60);
    // The most handlers running on threads of their own (Runs::kOnOwnThread)
    // at once. A call past them, or one for which no thread can be started,
    // is ResourceExhausted at once, naming the method: a flood of blocking
    // calls never leaves the task out of threads.
    int max_own_threads = 256;
  };
  // Where a handler runs (see above).
  enum class Runs { kInline, kOnOwnThread };
  using Handler = std::function<void(std::shared_ptr<GrpcCall> call)>;

  explicit GrpcFrontDoor(Options options);
  // Waits for the handlers still running on threads of their own.
  ~GrpcFrontDoor() override;

  // Serves `method` ("/tensorgrid.WorkerService/RunGraph") with `handler`.
  void Add(std::string method, Runs runs, Handler handler);
  // A method whose request is a `Request` (InvalidArgument naming the method
  // when it does not parse) and whose answer a `Response`: `body` calls
  // `done` once, from any thread, and the call is answered with that status,
  // and with the response when it is OK. Both messages live until then.
  template <typename Request, typename Response>
  void Add(
      std::string method, Runs runs,
      std::function<void(const Request&, Response*, std::function<void(absl::Status)> done)> body);
  // The same, `body` also told when the client stops waiting for the answer
  // (its deadline; absl::InfiniteFuture() when it set none), and given a
  // CancellationManager, valid until `done`, that is cancelled when the
  // client cancels the call or goes away.
  template <typename Request, typename Response>
  void AddWithDeadline(std::string method, Runs runs,
                       std::function<void(const Request&, Response*, absl::Time deadline,
                                          const CancellationManager* cancellation,
                                          std::function<void(absl::Status)> done)>
                           body);

  // Serves this door's methods on `builder`'s ports, with its receive limit
  // and the keepalive policy our clients (NewChannel) expect.
  void RegisterOn(grpc::ServerBuilder* builder);

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;

 private:
  struct Method {
    Runs runs;
    Handler handler;
  };
  // Runs `work` on a thread of its own (the destructor waits for it), or
  // says why it cannot: Options::max_own_threads run already, or no thread
  // can be started.
  absl::Status RunOnOwnThread(std::function<void()> work);

  // Request deadlines. One thread waits for the earliest (a grpc::Alarm per
  // call would cost every call a hop to gRPC's executor, when it is
  // cancelled on arrival): it answers DeadlineExceeded to calls whose
  // request has not arrived by then.
  friend class GrpcCall::Reactor;
  void AwaitArrival(std::shared_ptr<GrpcCall> call);  // Options::request_timeout
  void Arrived(GrpcCall& call);                       // or answered without it
  void CutLateArrivals();                             // the thread

  const Options options_;
  absl::flat_hash_map<std::string, Method> methods_;  // fixed once serving
  struct OwnThreads;
  const std::shared_ptr<OwnThreads> own_threads_;

  absl::Mutex arrivals_mu_;
  // Calls whose request is on its way, the earliest deadline first (they
  // all have the same timeout).
  std::list<std::shared_ptr<GrpcCall>> arriving_ ABSL_GUARDED_BY(arrivals_mu_);
  bool stopping_ ABSL_GUARDED_BY(arrivals_mu_) = false;
  std::thread arrivals_thread_;  // with a request_timeout
};

// Implementation details follow.

template <typename Message>
bool GrpcCall::Reply(const Message& message) {
  grpc::ByteBuffer wire;
  bool own_buffer = false;
  grpc::Status status = grpc::SerializationTraits<Message>::Serialize(message, &wire, &own_buffer);
  if (!status.ok()) return Finish(std::move(status));
  return Reply(std::move(wire));
}

template <typename Request, typename Response>
void GrpcFrontDoor::Add(
    std::string method, Runs runs,
    std::function<void(const Request&, Response*, std::function<void(absl::Status)> done)> body) {
  AddWithDeadline<Request, Response>(
      std::move(method), runs,
      [body = std::move(body)](const Request& request, Response* response, absl::Time,
                               const CancellationManager*, std::function<void(absl::Status)> done) {
        body(request, response, std::move(done));
      });
}

template <typename Request, typename Response>
void GrpcFrontDoor::AddWithDeadline(
    std::string method, Runs runs,
    std::function<void(const Request&, Response*, absl::Time deadline,
                       const CancellationManager* cancellation,
                       std::function<void(absl::Status)> done)>
        body) {
  Add(std::move(method), runs, [body = std::move(body)](std::shared_ptr<GrpcCall> call) {
    struct Messages {
      Request request;
      Response response;
    };
    auto messages = std::make_shared<Messages>();
    if (!ParseRequest(*call, &messages->request)) return;
    // gRPC says "no deadline" with a time point near the end of its clock.
    const absl::Time deadline = absl::FromChrono(call->deadline());
    const bool none = deadline > absl::Now() + absl::Hours(24 * 365);
    auto cancellation = std::make_shared<CancellationManager>();
    call->OnCancel([cancellation] { cancellation->StartCancel(); });
    body(messages->request, &messages->response, none ? absl::InfiniteFuture() : deadline,
         cancellation.get(), [call, messages, cancellation](absl::Status s) {
           if (s.ok()) {
             call->Reply(messages->response);
           } else {
             call->Finish(ToGrpcStatus(s));
           }
         });
  });
}

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_FRONT_DOOR_H_
