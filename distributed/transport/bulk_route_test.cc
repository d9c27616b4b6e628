#include "distributed/transport/bulk_route.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/platform/status_testutil.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

// Where one request went: `ran` with its status and answer when it ran on
// the bulk port, `grpc` when it was handed to gRPC.
struct Outcome {
  absl::Notification settled;
  bool ran = false;
  bool grpc = false;
  absl::Status status;
  std::string answer;
  BulkRoute::CallDone Done() {
    return [this](absl::Status s, std::string a) {
      ran = true;
      status = std::move(s);
      answer = std::move(a);
      settled.Notify();
    };
  }
  StatusCallback StatusDone() {
    return [this](absl::Status s) { Done()(std::move(s), ""); };
  }
  BulkRoute::OverGrpc Grpc() {
    return [this](absl::Time) {
      grpc = true;
      settled.Notify();
    };
  }
  bool Wait() { return settled.WaitForNotificationWithTimeout(absl::Seconds(30)); }
};

BulkRoute::Options LoopbackRoute(std::string addressee = "") {
  BulkRoute::Options options;
  options.host = "127.0.0.1";
  options.addressee = std::move(addressee);
  options.peer = "task under test";
  return options;
}

std::unique_ptr<Outcome> CallReverse(BulkRoute& route, absl::Time deadline = Soon()) {
  auto outcome = std::make_unique<Outcome>();
  route.CallAsync(
      "Reverse", [] { return std::string("abc"); }, deadline, outcome->Done(), outcome->Grpc());
  EXPECT_TRUE(outcome->Wait());
  return outcome;
}

TEST(BulkRouteTest, NoPortKnownGoesOverGrpcAndAsksForOneOnce) {
  auto server = StartServer();
  ServeReverse(*server);
  std::atomic<int> asked{0};
  std::function<void(std::optional<int>)> answer;
  BulkRoute::Options options = LoopbackRoute();
  options.discover = [&](std::function<void(std::optional<int>)> learned) {
    ++asked;
    answer = std::move(learned);
  };
  BulkRoute route(options);
  EXPECT_TRUE(CallReverse(route)->grpc);
  EXPECT_TRUE(CallReverse(route)->grpc);  // still asking: not asked twice
  EXPECT_EQ(asked.load(), 1);
  answer(std::nullopt);  // the question failed: asked again next time
  EXPECT_TRUE(CallReverse(route)->grpc);
  EXPECT_EQ(asked.load(), 2);
  answer(server->port());
  const auto outcome = CallReverse(route);
  ASSERT_TRUE(outcome->ran);
  ASSERT_OK(outcome->status);
  EXPECT_EQ(outcome->answer, "cba");
  EXPECT_EQ(server->calls(), 1);
}

TEST(BulkRouteTest, WithoutDiscoveryAPortIsUsedOnlyOnceTold) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkRoute route(LoopbackRoute());
  EXPECT_TRUE(CallReverse(route)->grpc);
  route.Learn(server->port());
  EXPECT_EQ(route.port(), server->port());
  EXPECT_TRUE(CallReverse(route)->ran);
  absl::Status status;
  std::string answer;
  ASSERT_TRUE(route.Call(
      "Reverse", [] { return std::string("xy"); }, Soon(), &status, &answer));
  ASSERT_OK(status);
  EXPECT_EQ(answer, "yx");
}

TEST(BulkRouteTest, WaitsLongerThanThePortGivesKeepToGrpc) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkRoute route(LoopbackRoute());
  route.Learn(server->port());
  EXPECT_TRUE(CallReverse(route, absl::Now() + kBulkMaxWait + absl::Minutes(1))->grpc);
  EXPECT_TRUE(CallReverse(route, absl::InfiniteFuture())->grpc);
  EXPECT_EQ(server->calls(), 0);
}

TEST(BulkRouteTest, ARefusedPortIsForgottenUntilANewOneIsNamed) {
  auto server = StartServer();
  ServeReverse(*server);
  auto restarted = StartServer();  // started first: on another port
  ServeReverse(*restarted);
  const int old_port = server->port();
  BulkRoute route(LoopbackRoute());
  route.Learn(old_port);
  server->Stop();
  server.reset();  // nothing listens there now
  EXPECT_TRUE(CallReverse(route)->grpc);
  EXPECT_EQ(route.port(), 0);
  EXPECT_TRUE(route.AcceptsTickets());  // refused is not unreachable
  route.Learn(old_port);                // a stale answer naming the refused port again
  EXPECT_EQ(route.port(), 0);
  route.Learn(restarted->port());
  EXPECT_TRUE(CallReverse(route)->ran);
}

TEST(BulkRouteTest, AnotherTasksPortIsForgotten) {
  BulkServer::Options options;
  options.task = "/job:ps/replica:0/task:1";
  auto server = StartServer(options);
  ServeReverse(*server);
  BulkRoute route(LoopbackRoute("/job:ps/replica:0/task:0"));
  route.Learn(server->port());
  const auto outcome = CallReverse(route);
  EXPECT_TRUE(outcome->grpc);
  EXPECT_EQ(route.port(), 0);
  EXPECT_EQ(server->calls(), 0);
}

TEST(BulkRouteTest, AnUnreachablePortIsNeverUsedAgainNorAreTickets) {
  BulkRoute::Options options = LoopbackRoute();
  options.host = "no-such-host.invalid";
  BulkRoute route(options);
  route.Learn(4242);
  EXPECT_TRUE(CallReverse(route)->grpc);
  EXPECT_FALSE(route.AcceptsTickets());
  route.Learn(4343);
  EXPECT_TRUE(CallReverse(route)->grpc);  // decided without trying
}

TEST(BulkRouteTest, ARequestTheServerRanIsNeverSentTwice) {
  auto server = StartServer();
  server->ServeCall("Fail",
                    [](std::string, absl::Time, CancellationManager*, BulkServer::CallDone done) {
                      done(errors::Unimplemented("the handler's own Unimplemented"), nullptr);
                    });
  BulkRoute route(LoopbackRoute());
  route.Learn(server->port());
  Outcome outcome;
  route.CallAsync(
      "Fail", [] { return std::string("x"); }, Soon(), outcome.Done(), outcome.Grpc());
  ASSERT_TRUE(outcome.Wait());
  ASSERT_TRUE(outcome.ran);
  EXPECT_STATUS(outcome.status, kUnimplemented, "the handler's own Unimplemented");
  // A method the port does not serve was refused unread: gRPC's.
  Outcome unknown;
  route.CallAsync(
      "NoSuchMethod", [] { return std::string("x"); }, Soon(), unknown.Done(), unknown.Grpc());
  ASSERT_TRUE(unknown.Wait());
  EXPECT_TRUE(unknown.grpc);
  EXPECT_EQ(route.port(), server->port());  // the port itself is fine
}

TEST(BulkRouteTest, RecvTensorStopsTryingAPortThatDoesNotServeIt) {
  auto server = StartServer();
  ServeReverse(*server);  // calls, but no RecvTensor
  BulkRoute route(LoopbackRoute());
  route.Learn(server->port());
  Tensor out;
  Outcome first;
  route.RecvTensorAsync(1, "key", Soon(), &out, first.StatusDone(), first.Grpc());
  ASSERT_TRUE(first.Wait());
  EXPECT_TRUE(first.grpc);
  EXPECT_EQ(route.port(), server->port());
  Outcome second;
  route.RecvTensorAsync(1, "key", Soon(), &out, second.StatusDone(), second.Grpc());
  ASSERT_TRUE(second.Wait());
  EXPECT_TRUE(second.grpc);
  EXPECT_TRUE(CallReverse(route)->ran);  // calls still go there
}

TEST(BulkRouteTest, RecvTensorsGoToThePortAndEveryKeyIsAnswered) {
  auto server = StartServer();
  server->ServeRecvTensor([](int64_t, const std::string& key, absl::Time deadline, Tensor* out,
                             CancellationManager*, StatusCallback done) {
    if (key == "late") return;  // never sent: the deadline answers it
    *out = Ramp(key.size());
    done(absl::OkStatus());
  });
  BulkRoute route(LoopbackRoute());
  route.Learn(server->port());
  std::vector<Tensor> outs(3);
  absl::Mutex mu;
  std::map<int, absl::Status> got;
  absl::Notification all;
  bool grpc = false;
  route.RecvTensorsAsync(
      4, {"a", "bb", "late"}, absl::Now() + absl::Milliseconds(300), &outs,
      [&](int i, absl::Status s) {
        absl::MutexLock lock(&mu);
        EXPECT_TRUE(got.emplace(i, std::move(s)).second) << "key " << i << " twice";
        if (got.size() == 3) all.Notify();
      },
      [&](absl::Time) {
        grpc = true;
        all.Notify();
      });
  ASSERT_TRUE(all.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(grpc);
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(got[0].ok()) << got[0];
  EXPECT_TRUE(got[1].ok()) << got[1];
  EXPECT_EQ(outs[1].NumElements(), 2);
  EXPECT_EQ(got[2].code(), absl::StatusCode::kDeadlineExceeded) << got[2];
}

TEST(BulkRouteTest, RecvTensorsStopTryingAPortThatDoesNotServeThem) {
  auto server = StartServer();
  ServeReverse(*server);  // calls, but no RecvTensor
  BulkRoute route(LoopbackRoute());
  route.Learn(server->port());
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<Tensor> outs(2);
    Outcome outcome;
    route.RecvTensorsAsync(
        1, {"a", "b"}, Soon(), &outs,
        [](int i, absl::Status s) { ADD_FAILURE() << "key " << i << " answered: " << s; },
        outcome.Grpc());
    ASSERT_TRUE(outcome.Wait());
    EXPECT_TRUE(outcome.grpc);
  }
  EXPECT_EQ(server->tensor_batches(), 0);
  EXPECT_TRUE(CallReverse(route)->ran);  // calls still go there
}

TEST(BulkRouteTest, ChunksGoToThePortButStringsAndNoBufferKeepToGrpc) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  source.Release("k", Ramp(8));
  BulkRoute route(LoopbackRoute());
  route.Learn(server->port());
  Tensor chunk(DT_FLOAT, TensorShape({8}));
  Outcome numbers;
  route.RecvBufAsync("k", Soon(), &chunk, numbers.StatusDone(), numbers.Grpc());
  ASSERT_TRUE(numbers.Wait());
  ASSERT_TRUE(numbers.ran);
  ASSERT_OK(numbers.status);
  EXPECT_EQ(chunk.data<float>()[7], 7.f);
  Tensor strings(DT_STRING, TensorShape({1}));
  Outcome text;
  route.RecvBufAsync("s", Soon(), &strings, text.StatusDone(), text.Grpc());
  ASSERT_TRUE(text.Wait());
  EXPECT_TRUE(text.grpc);
  Outcome nowhere;
  route.RecvBufAsync("n", Soon(), nullptr, nowhere.StatusDone(), nowhere.Grpc());
  ASSERT_TRUE(nowhere.Wait());
  EXPECT_TRUE(nowhere.grpc);
}

TEST(BulkRouteTest, ATicketTeachesThePortAndItsBytesArrive) {
  auto server = StartServer();
  const Tensor sent = Ramp(1 << 18);
  const std::string id = server->Offer(sent);
  ASSERT_FALSE(id.empty());
  BulkRoute route(LoopbackRoute());
  Tensor out;
  Outcome fetched;
  route.FetchTicketAsync(server->port(), id, Tensor(DT_FLOAT, sent.shape()), &out,
                         absl::Seconds(30), fetched.StatusDone(), fetched.Grpc());
  ASSERT_TRUE(fetched.Wait());
  ASSERT_TRUE(fetched.ran);
  ASSERT_OK(fetched.status);
  EXPECT_EQ(route.port(), server->port());
  ASSERT_EQ(out.NumElements(), sent.NumElements());
  EXPECT_EQ(out.data<float>()[12345], sent.data<float>()[12345]);
}

TEST(BulkRouteTest, ATicketsBoolBytesArriveAsZeroOrOne) {
  auto server = StartServer();
  Tensor sent(DT_BOOL, TensorShape({1 << 20}));
  std::memset(sent.raw_data(), 0, sent.TotalBytes());
  static_cast<uint8_t*>(sent.raw_data())[3] = 0x80;  // a peer's bytes are what they are
  const std::string id = server->Offer(sent);
  ASSERT_FALSE(id.empty());
  BulkRoute route(LoopbackRoute());
  Tensor out;
  Outcome fetched;
  route.FetchTicketAsync(server->port(), id, Tensor(DT_BOOL, sent.shape()), &out,
                         absl::Seconds(30), fetched.StatusDone(), fetched.Grpc());
  ASSERT_TRUE(fetched.Wait());
  ASSERT_OK(fetched.status);
  EXPECT_EQ(static_cast<const uint8_t*>(out.raw_data())[3], 1);
  EXPECT_EQ(static_cast<const uint8_t*>(out.raw_data())[4], 0);
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
