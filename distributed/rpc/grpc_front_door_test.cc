// GrpcFrontDoor on a loopback port, called with gRPC's generic stub:
//
//   GenericStub ──"/test.Door/Echo" + metadata + bytes──► GrpcFrontDoor ──► handler
//
// What the door answers before any handler runs (the token, the method, the
// request's size and arrival), and what it hands the handlers.
#include "distributed/rpc/grpc_front_door.h"

#include <chrono>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/platform/status_testutil.h"
#include "distributed/rpc/grpc_util.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"

namespace tensorgrid {
namespace {

constexpr char kToken[] = "s3cret";
constexpr char kEcho[] = "/test.Door/Echo";
constexpr char kTyped[] = "/test.Door/Typed";
constexpr char kWaitForCancel[] = "/test.Door/WaitForCancel";
constexpr char kSlow[] = "/test.Door/Slow";
constexpr char kBlock[] = "/test.Door/Block";

class GrpcFrontDoorTest : public ::testing::Test {
 protected:
  GrpcFrontDoorTest() : door_(DoorOptions()) {
    // Answers with the request's own bytes.
    door_.Add(kEcho, GrpcFrontDoor::Runs::kInline,
              [](std::shared_ptr<GrpcCall> call) { call->Reply(call->request()); });
    // Answers with the graph handle it was asked to deregister.
    door_.Add<DeregisterGraphRequest, RegisterGraphResponse>(
        kTyped, GrpcFrontDoor::Runs::kOnOwnThread,
        [](const DeregisterGraphRequest& request, RegisterGraphResponse* response,
           std::function<void(absl::Status)> done) {
          response->set_graph_handle(request.graph_handle());
          done(absl::OkStatus());
        });
    // Answers after twice the request_timeout.
    door_.Add(kSlow, GrpcFrontDoor::Runs::kOnOwnThread, [](std::shared_ptr<GrpcCall> call) {
      absl::SleepFor(2 * DoorOptions().request_timeout);
      call->Reply(call->request());
    });
    // Holds its thread until released_.
    door_.Add(kBlock, GrpcFrontDoor::Runs::kOnOwnThread, [this](std::shared_ptr<GrpcCall> call) {
      {
        absl::MutexLock lock(&mu_);
        ++blocked_;
      }
      released_.WaitForNotification();
      call->Reply(call->request());
    });
    // Answers only once the client cancels.
    door_.Add(kWaitForCancel, GrpcFrontDoor::Runs::kInline, [this](std::shared_ptr<GrpcCall> call) {
      call->OnCancel([this, call] {
        call->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled"));
        cancelled_.Notify();
      });
      waiting_.Notify();
    });
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    door_.RegisterOn(&builder);
    server_ = builder.BuildAndStart();
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
  }
  ~GrpcFrontDoorTest() override { server_->Shutdown(); }

  static GrpcFrontDoor::Options DoorOptions() {
    GrpcFrontDoor::Options options;
    options.auth_token = kToken;
    options.max_request_bytes = 1 << 20;
    options.request_timeout = absl::Seconds(1);
    options.max_own_threads = 2;
    return options;
  }

  // One unary call of `method` with `request` as its bytes; `token` (if
  // any) in its metadata. Fills `response` when it is OK.
  absl::Status Call(const std::string& method, const std::string& request,
                    const std::string& token = kToken, std::string* response = nullptr) {
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Slice slice(request);
    grpc::ByteBuffer wire(&slice, 1);
    grpc::ByteBuffer answer;
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &wire, &answer, [&](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
    done.WaitForNotification();
    if (status.ok() && response != nullptr) {
      std::vector<grpc::Slice> slices;
      EXPECT_TRUE(answer.Dump(&slices).ok());
      response->clear();
      for (const grpc::Slice& s : slices) {
        response->append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    return FromGrpcStatus(status);
  }

  // A call that sends its metadata and then nothing: no message, and, with
  // `half_close`, the end of its requests.
  absl::Status CallWithoutMessage(const std::string& method, bool half_close) {
    class Reactor final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
     public:
      void OnDone(const grpc::Status& s) override {
        status = s;
        done.Notify();
      }
      grpc::Status status;
      absl::Notification done;
    } reactor;
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    context.AddMetadata("authorization", std::string("Bearer ") + kToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    stub.PrepareBidiStreamingCall(&context, method, grpc::StubOptions(), &reactor);
    if (half_close) reactor.StartWritesDone();
    reactor.StartCall();
    reactor.done.WaitForNotification();
    return FromGrpcStatus(reactor.status);
  }

  GrpcFrontDoor door_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  absl::Notification waiting_, cancelled_, released_;
  absl::Mutex mu_;
  int blocked_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(GrpcFrontDoorTest, CallWithTheTokenReachesItsHandler) {
  std::string response;
  ASSERT_OK(Call(kEcho, "hello", kToken, &response));
  EXPECT_EQ(response, "hello");
}

TEST_F(GrpcFrontDoorTest, CallWithoutTheTokenIsUnauthenticatedWhateverItsMethodOrBytes) {
  for (const char* method : {kEcho, kTyped, "/test.Door/NoSuchMethod"}) {
    EXPECT_STATUS(Call(method, "\xff\xff garbage", ""), kUnauthenticated, "requires an auth token");
    EXPECT_STATUS(Call(method, "\xff\xff garbage", "guess"), kUnauthenticated, "does not match");
  }
}

// Refused from its metadata: the transport never takes in the 64 MiB body
// (past the 1 MiB limit, which would otherwise answer ResourceExhausted).
TEST_F(GrpcFrontDoorTest, LargeCallWithoutTheTokenIsUnauthenticatedUnread) {
  EXPECT_STATUS(Call(kEcho, std::string(64 << 20, 'x'), "guess"), kUnauthenticated,
                "does not match");
}

TEST_F(GrpcFrontDoorTest, UnknownMethodIsUnimplementedNamingIt) {
  EXPECT_STATUS(Call("/test.Door/NoSuchMethod", ""), kUnimplemented,
                "no method /test.Door/NoSuchMethod");
}

TEST_F(GrpcFrontDoorTest, RequestOverTheLimitIsResourceExhausted) {
  ASSERT_OK(Call(kEcho, std::string(1 << 20, 'x')));
  EXPECT_STATUS(Call(kEcho, std::string((1 << 20) + 1, 'x')), kResourceExhausted,
                "larger than max");
}

TEST_F(GrpcFrontDoorTest, RequestThatNeverArrivesIsDeadlineExceeded) {
  EXPECT_STATUS(CallWithoutMessage(kEcho, /*half_close=*/false), kDeadlineExceeded,
                "the request to /test.Door/Echo did not arrive within 1s of the call's start "
                "(request_timeout)");
}

// The timeout bounds the request's arrival, not the work on it.
TEST_F(GrpcFrontDoorTest, HandlerMayTakeLongerThanTheRequestTimeout) {
  std::string response;
  ASSERT_OK(Call(kSlow, "slow", kToken, &response));
  EXPECT_EQ(response, "slow");
}

TEST_F(GrpcFrontDoorTest, CallThatEndsWithoutARequestIsInvalidArgument) {
  EXPECT_STATUS(CallWithoutMessage(kEcho, /*half_close=*/true), kInvalidArgument,
                "request to /test.Door/Echo is not a valid message");
}

TEST_F(GrpcFrontDoorTest, TypedMethodParsesItsRequestAndSerializesItsResponse) {
  DeregisterGraphRequest request;
  request.set_graph_handle("g7");
  std::string wire;
  ASSERT_OK(Call(kTyped, request.SerializeAsString(), kToken, &wire));
  RegisterGraphResponse response;
  ASSERT_TRUE(response.ParseFromString(wire));
  EXPECT_EQ(response.graph_handle(), "g7");
  EXPECT_STATUS(Call(kTyped, "\xff\xff\xff\xff garbage"), kInvalidArgument,
                "request to /test.Door/Typed is not a valid message for that method");
}

TEST_F(GrpcFrontDoorTest, CallsPastMaxOwnThreadsAreResourceExhaustedAtOnce) {
  // Two calls hold the door's two threads.
  grpc::GenericStub stub(channel_);
  grpc::ClientContext contexts[2];
  grpc::ByteBuffer responses[2];
  grpc::Status statuses[2];
  absl::Notification answered[2];
  grpc::Slice slice(std::string("block"));
  grpc::ByteBuffer request(&slice, 1);
  for (int i = 0; i < 2; ++i) {
    contexts[i].AddMetadata("authorization", std::string("Bearer ") + kToken);
    stub.UnaryCall(&contexts[i], kBlock, grpc::StubOptions(), &request, &responses[i],
                   [&, i](grpc::Status s) {
                     statuses[i] = std::move(s);
                     answered[i].Notify();
                   });
  }
  {
    absl::MutexLock lock(&mu_);
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(
                                         +[](int* blocked) { return *blocked == 2; }, &blocked_),
                                     absl::Seconds(30)));
  }
  // A third is refused, not queued, and not given a thread past the limit.
  EXPECT_STATUS(Call(kTyped, ""), kResourceExhausted,
                "/test.Door/Typed: this task is already serving 2 calls that each take a thread "
                "(max_own_threads)");
  // Inline methods are not limited.
  EXPECT_OK(Call(kEcho, "still here"));
  released_.Notify();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(answered[i].WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_TRUE(statuses[i].ok()) << statuses[i].error_message();
  }
  // Once they are done, calls get threads again (a thread counts until its
  // handler has returned, a moment after its answer).
  absl::Status again;
  for (int attempt = 0; attempt < 100; ++attempt) {
    again = Call(kTyped, "");
    if (again.ok()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_OK(again);
}

TEST_F(GrpcFrontDoorTest, ClientCancellingReachesTheHandler) {
  grpc::GenericStub stub(channel_);
  grpc::ClientContext context;
  context.AddMetadata("authorization", std::string("Bearer ") + kToken);
  grpc::Slice slice(std::string("wait"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  absl::Notification done;
  stub.UnaryCall(&context, kWaitForCancel, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status) { done.Notify(); });
  waiting_.WaitForNotification();
  context.TryCancel();
  cancelled_.WaitForNotification();
  done.WaitForNotification();
}

}  // namespace
}  // namespace tensorgrid
