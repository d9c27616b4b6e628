// Calls from a client to a bulk port of its own process (local_ports.h):
// which ports a client reaches in process, and that such calls keep the
// socket's promises (answers, statuses, the token, deadlines, Stop, a
// client going away) with the handler on the caller's thread.
#include "distributed/transport/local_ports.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "core/platform/status.h"
#include "core/platform/status_testutil.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/bulk_server.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

bulk::LocalCallFn Answering(const std::string& answer) {
  return [answer](const bulk::LocalCall&, bulk::LocalCallDone done) -> bulk::LocalCallWithdraw {
    done(absl::OkStatus(), [answer]() -> absl::StatusOr<std::string> { return answer; });
    return [] {};
  };
}

std::string AnswerOf(const bulk::LocalCallFn& fn) {
  std::string request, out;
  fn(bulk::LocalCall{"", "", "m", &request, absl::InfiniteFuture()},
     [&](absl::Status, bulk::LocalAnswer answer) { out = *answer(); });
  return out;
}

TEST(LocalPortsTest, AClientReachesAPortBoundToWhatItDials) {
  // Ports no test here listens on.
  const uint64_t loopback = bulk::RegisterLocalPort(1, "127.0.0.1", "", Answering("loopback"));
  const uint64_t any = bulk::RegisterLocalPort(2, "0.0.0.0", "worker-2.svc", Answering("any"));
  const uint64_t named = bulk::RegisterLocalPort(3, "n3", "", Answering("named"));
  const uint64_t v6 = bulk::RegisterLocalPort(4, "[::]", "", Answering("v6"));
  for (const char* host : {"127.0.0.1", "localhost", "127.0.0.2", "::1"}) {
    ASSERT_NE(bulk::FindLocalPort(host, 1), nullptr) << host;
    EXPECT_EQ(AnswerOf(bulk::FindLocalPort(host, 1)), "loopback");
    ASSERT_NE(bulk::FindLocalPort(host, 2), nullptr) << host;
  }
  // Another machine's address may have a port 2 of its own; the task's own
  // name (its cluster entry) is this one.
  EXPECT_EQ(bulk::FindLocalPort("10.1.2.3", 1), nullptr);
  EXPECT_EQ(bulk::FindLocalPort("10.1.2.3", 2), nullptr);
  ASSERT_NE(bulk::FindLocalPort("worker-2.svc", 2), nullptr);
  EXPECT_EQ(AnswerOf(bulk::FindLocalPort("worker-2.svc", 2)), "any");
  EXPECT_EQ(bulk::FindLocalPort("", 2), nullptr);
  ASSERT_NE(bulk::FindLocalPort("n3", 3), nullptr);
  EXPECT_EQ(bulk::FindLocalPort("localhost", 3), nullptr);
  EXPECT_EQ(bulk::FindLocalPort("n4", 3), nullptr);
  ASSERT_NE(bulk::FindLocalPort("127.0.0.1", 4), nullptr);
  EXPECT_EQ(bulk::FindLocalPort("10.1.2.3", 4), nullptr);
  EXPECT_EQ(bulk::FindLocalPort("localhost", 5), nullptr);
  // A new server on the port takes its place; the old one's leaving then
  // does not remove it.
  const uint64_t again = bulk::RegisterLocalPort(1, "127.0.0.1", "", Answering("again"));
  bulk::UnregisterLocalPort(1, loopback);
  EXPECT_EQ(AnswerOf(bulk::FindLocalPort("localhost", 1)), "again");
  for (auto [port, id] : {std::pair{1, again}, {2, any}, {3, named}, {4, v6}}) {
    bulk::UnregisterLocalPort(port, id);
    EXPECT_EQ(bulk::FindLocalPort("localhost", port), nullptr);
  }
}

TEST(InProcessCallTest, ABlockingCallRunsOnTheCallersThreadWithNoSocket) {
  auto server = StartServer({}, /*in_process=*/true);
  std::thread::id handled, encoded;
  server->ServeCall("Echo", [&](std::string request, absl::Time, CancellationManager*,
                                BulkServer::CallDone done) {
    handled = std::this_thread::get_id();
    done(absl::OkStatus(), [&, request]() -> absl::StatusOr<std::string> {
      encoded = std::this_thread::get_id();
      return request + request;
    });
  });
  BulkClient client("localhost");
  CallResult result;
  client.Call(server->port(), "", "Echo", "ab", Soon(), result.Callback());
  ASSERT_TRUE(result.done.HasBeenNotified());  // before Call returned
  ASSERT_OK(result.status);
  EXPECT_EQ(result.answer, "abab");
  EXPECT_EQ(handled, std::this_thread::get_id());
  EXPECT_EQ(encoded, std::this_thread::get_id());
  EXPECT_EQ(server->calls(), 1);
  EXPECT_EQ(server->calls_in_process(), 1);
  EXPECT_EQ(server->calls_waiting(), 0);
}

TEST(InProcessCallTest, StatusesTokenAndRefusalsAreTheSocketsOwn) {
  BulkServer::Options options;
  options.token = "secret";
  options.task = "/job:worker/replica:0/task:0";
  auto server = StartServer(options, /*in_process=*/true);
  server->ServeCall("Fail",
                    [](std::string, absl::Time, CancellationManager*, BulkServer::CallDone done) {
                      done(errors::Aborted("step 7 was aborted"), nullptr);
                    });
  ServeReverse(*server);
  BulkClient client("127.0.0.1", "/job:worker/replica:0/task:0");
  auto result = Call(client, server->port(), "Fail", "x", "secret");
  EXPECT_STATUS(result->status, kAborted, "step 7 was aborted");
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
  result = Call(client, server->port(), "Reverse", "ab", "wrong");
  EXPECT_STATUS(result->status, kUnauthenticated, "");
  // Not taken in process: the socket answers, as it would anyway.
  result = Call(client, server->port(), "Missing", "x", "secret");
  EXPECT_STATUS(result->status, kUnimplemented, "Missing");
  BulkClient other_task("127.0.0.1", "/job:worker/replica:0/task:9");
  result = Call(other_task, server->port(), "Reverse", "ab", "secret");
  EXPECT_NE(result->fallback, BulkClient::Fallback::kNone) << result->status;
  result = Call(client, server->port(), "Reverse", "ab", "secret");
  ASSERT_OK(result->status);
  EXPECT_EQ(result->answer, "ba");
}

TEST(InProcessCallTest, AnUnansweredCallIsDeadlineExceededAndCancelled) {
  auto server = StartServer({}, /*in_process=*/true);
  NeverAnswered never;
  never.Serve(*server, "Never");
  BulkClient client("127.0.0.1");
  const auto result =
      Call(client, server->port(), "Never", "x", "", absl::Now() + absl::Milliseconds(100));
  EXPECT_STATUS(result->status, kDeadlineExceeded, "Never call: no answer within");
  EXPECT_TRUE(never.WaitCancelled(1));
}

TEST(InProcessCallTest, StopCancelsACallAndAnswersItAborted) {
  auto server = StartServer({}, /*in_process=*/true);
  NeverAnswered never;
  never.Serve(*server, "Never");
  BulkClient client("127.0.0.1");
  CallResult result;
  client.CallAsync(server->port(), "", "Never", "x", Soon(), result.Callback());
  ASSERT_TRUE(never.WaitTaken(1));
  server->Stop();
  {
    absl::MutexLock lock(&never.mu);
    EXPECT_EQ(never.cancelled, 1);  // before Stop returned
  }
  ASSERT_TRUE(result.Wait());
  EXPECT_STATUS(result.status, kAborted, "the task is shutting down");
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
}

TEST(InProcessCallTest, StopAnswersADeafHandlersCallerByItsGraceAndWaitsForIt) {
  BulkServer::Options options;
  options.stop_grace = absl::Milliseconds(200);
  auto server = StartServer(options, /*in_process=*/true);
  HeldCall held;
  held.Serve(*server, "Deaf");
  BulkClient client("127.0.0.1");
  CallResult result;
  bool returned_early = false, returned_after = false;
  ASSERT_NO_FATAL_FAILURE(StopWhileTheHandlerHoldsACall(*server, client, held, "Deaf", nullptr,
                                                        &result, &returned_early, &returned_after));
  EXPECT_STATUS(result.status, kAborted, "the task is shutting down");
  EXPECT_FALSE(returned_early);  // the handler has not answered yet
}

TEST(InProcessCallTest, AClientGoingAwayEndsItsCallsCancelledAndCancelsThem) {
  auto server = StartServer({}, /*in_process=*/true);
  NeverAnswered never;
  never.Serve(*server, "Never");
  CallResult results[3];
  {
    BulkClient client("127.0.0.1");
    for (CallResult& r : results) {
      client.CallAsync(server->port(), "", "Never", "x", Soon(), r.Callback());
    }
    ASSERT_TRUE(never.WaitTaken(3));
  }
  for (CallResult& r : results) {
    EXPECT_TRUE(r.done.HasBeenNotified());  // before the destructor returned
    EXPECT_STATUS(r.status, kCancelled, "");
  }
  EXPECT_TRUE(never.WaitCancelled(3));
}

TEST(InProcessCallTest, APortThatStoppedListeningIsReachedByNoOne) {
  auto server = StartServer({}, /*in_process=*/true);
  ServeReverse(*server);
  server->StopListening();
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Reverse", "ab");
  EXPECT_NE(result->fallback, BulkClient::Fallback::kNone) << result->status;
  EXPECT_EQ(server->calls(), 0);
  EXPECT_EQ(server->calls_in_process(), 0);
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
