// The server's side of calls: refusals before a request is read, the
// token, the addressee, cancellation, and Stop.
#include "distributed/transport/bulk_server.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/framework/rendezvous.h"
#include "core/framework/tensor.h"
#include "core/platform/status.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/frames.h"
#include "distributed/transport/socket.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

TEST(BulkServerTest, UnknownMethodIsUnimplementedAndGoesOverGrpc) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Nope", "x");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnimplemented) << result->status;
  EXPECT_NE(result->status.message().find("Nope"), std::string::npos) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kOverGrpc);
  EXPECT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());
}

TEST(BulkServerTest, TokenIsRequiredWhenTheServerHasOne) {
  BulkServer::Options options;
  options.token = "secret";
  auto server = StartServer(options);
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  for (const std::string token : {"", "guess", "secret"}) {
    const auto result = Call(client, server->port(), "Reverse", "ab", token);
    if (token == "secret") {
      ASSERT_TRUE(result->status.ok()) << result->status;
      EXPECT_EQ(result->answer, "ba");
    } else {
      EXPECT_EQ(result->status.code(), absl::StatusCode::kUnauthenticated) << result->status;
      EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
    }
  }
  EXPECT_EQ(server->calls(), 1);
}

TEST(BulkServerTest, RequestOverTheLimitIsResourceExhaustedUnread) {
  BulkServer::Options options;
  options.max_call_bytes = 1000;
  auto server = StartServer(options);
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Reverse", std::string(1001, 'x'));
  EXPECT_EQ(result->status.code(), absl::StatusCode::kResourceExhausted) << result->status;
  EXPECT_NE(result->status.message().find("1001"), std::string::npos) << result->status;
  EXPECT_EQ(server->calls(), 0);
  EXPECT_TRUE(Call(client, server->port(), "Reverse", std::string(1000, 'x'))->status.ok());
}

TEST(BulkServerTest, UnansweredCallIsDeadlineExceededAndCancelled) {
  auto server = StartServer();
  NeverAnswered never;
  never.Serve(*server, "Never");
  BulkClient client("127.0.0.1");
  const auto result =
      Call(client, server->port(), "Never", "x", "", absl::Now() + absl::Milliseconds(500));
  EXPECT_EQ(result->status.code(), absl::StatusCode::kDeadlineExceeded) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
  // The client gave up: its call is cancelled on the server too.
  EXPECT_TRUE(never.WaitCancelled(1));
}

TEST(BulkServerTest, ServerStoppingWhileACallWaitsCancelsAndEndsIt) {
  auto server = StartServer();
  NeverAnswered never;
  never.Serve(*server, "Never");
  BulkClient client("127.0.0.1");
  CallResult result;
  client.CallAsync(server->port(), "", "Never", "x", Soon(), result.Callback());
  ASSERT_TRUE(never.WaitTaken(1));
  server->Stop();  // cancels the call, which then answers at once
  {
    absl::MutexLock lock(&never.mu);
    EXPECT_EQ(never.cancelled, 1);  // before Stop returned
  }
  ASSERT_TRUE(result.Wait());
  // Answered before the connection closed: the call was taken, so it is
  // final, not one to send again over gRPC. The handler's own "cancelled"
  // gives way to the reason.
  EXPECT_TRUE(absl::IsAborted(result.status)) << result.status;
  EXPECT_NE(result.status.message().find("shutting down"), std::string::npos) << result.status;
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
}

// A handler that ignores its cancellation: its client is answered Aborted
// once the grace has passed, and Stop returns only once the handler has
// answered (nothing of the call runs on after it).
TEST(BulkServerTest, StopAnswersByItsGraceAndWaitsForTheHandler) {
  BulkServer::Options options;
  options.stop_grace = absl::Milliseconds(300);
  auto server = StartServer(options);
  HeldCall held;
  held.Serve(*server, "Deaf");
  BulkClient client("127.0.0.1");
  CallResult result;
  bool returned_early = false, returned_after = false;
  ASSERT_NO_FATAL_FAILURE(StopWhileTheHandlerHoldsACall(*server, client, held, "Deaf",
                                                        BulkServer::Bytes("late"), &result,
                                                        &returned_early, &returned_after));
  EXPECT_TRUE(absl::IsAborted(result.status)) << result.status;
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
  EXPECT_FALSE(returned_early);  // the handler has not answered
  EXPECT_TRUE(returned_after);
}

// Stop keeps a connection whose call waits for its handler open past its
// first half second: the answer arrives, rather than a hang-up the client
// would take for a call never run (and send again elsewhere).
TEST(BulkServerTest, StopLetsASlowHandlerAnswerWithinTheGrace) {
  BulkServer::Options options;
  options.stop_grace = absl::Seconds(20);
  auto server = StartServer(options);
  HeldCall held;
  held.Serve(*server, "Slow");
  BulkClient client("127.0.0.1");
  CallResult result;
  ASSERT_NO_FATAL_FAILURE(held.Ask(client, *server, "Slow", &result));
  std::thread answerer([&] {
    absl::SleepFor(absl::Seconds(1));  // past Stop's 500 ms of reading-only shutdown
    held.kept(absl::OkStatus(), BulkServer::Bytes("done"));
  });
  server->Stop();
  answerer.join();
  ASSERT_TRUE(result.Wait());
  ASSERT_TRUE(result.status.ok()) << result.status;  // it ran: its answer, not a fallback
  EXPECT_EQ(result.answer, "done");
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
}

// A handler still starting (on the connection's thread) when Stop begins:
// the connection stays open for its answer, past Stop's first half second.
TEST(BulkServerTest, StopWhileAHandlerStartsNeverHangsUpOnIt) {
  BulkServer::Options options;
  options.stop_grace = absl::Seconds(20);
  auto server = StartServer(options);
  absl::Notification started;
  server->ServeCall("SlowStart",
                    [&](std::string, absl::Time, CancellationManager*, BulkServer::CallDone done) {
                      started.Notify();
                      absl::SleepFor(absl::Seconds(1));
                      done(absl::OkStatus(), BulkServer::Bytes("ran"));
                    });
  BulkClient client("127.0.0.1");
  CallResult result;
  client.CallAsync(server->port(), "", "SlowStart", "x", Soon(), result.Callback());
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  server->Stop();
  ASSERT_TRUE(result.Wait());
  ASSERT_TRUE(result.status.ok()) << result.status;  // it ran: its answer, not a fallback
  EXPECT_EQ(result.answer, "ran");
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
}

TEST(BulkServerTest, ClientHangingUpCancelsItsCall) {
  auto server = StartServer();
  NeverAnswered never;
  never.Serve(*server, "Never");
  {
    CallResult result;  // outlives the client, which answers it as it goes
    BulkClient client("127.0.0.1");
    client.CallAsync(server->port(), "", "Never", "x", Soon(), result.Callback());
    ASSERT_TRUE(never.WaitTaken(1));
  }  // the client closes its connection
  EXPECT_TRUE(never.WaitCancelled(1));
}

TEST(BulkServerTest, AnswerIsMadeOnTheConnectionsThreadAndMayFail) {
  auto server = StartServer();
  absl::Mutex mu;
  std::thread::id answering, encoding;
  server->ServeCall("Lazy", [&](std::string request, absl::Time, CancellationManager*,
                                BulkServer::CallDone done) {
    std::thread([&, request, done = std::move(done)] {
      {
        absl::MutexLock lock(&mu);
        answering = std::this_thread::get_id();
      }
      done(absl::OkStatus(), [&, request]() -> absl::StatusOr<std::string> {
        absl::MutexLock lock(&mu);
        encoding = std::this_thread::get_id();
        if (request == "big") return errors::ResourceExhausted("the answer is too large");
        return request + request;
      });
    }).join();
  });
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Lazy", "ab");
  ASSERT_TRUE(result->status.ok()) << result->status;
  EXPECT_EQ(result->answer, "abab");
  {
    absl::MutexLock lock(&mu);
    EXPECT_NE(encoding, answering);
    EXPECT_NE(encoding, std::thread::id());
  }
  const auto failed = Call(client, server->port(), "Lazy", "big");
  EXPECT_EQ(failed->status.code(), absl::StatusCode::kResourceExhausted) << failed->status;
  EXPECT_EQ(failed->fallback, BulkClient::Fallback::kNone);
}

TEST(BulkServerTest, HandlersUnimplementedIsFinalNotAFallback) {
  // Only a request refused unread may go over gRPC: one the handler ran and
  // failed (an op without a kernel, say) must not run twice.
  auto server = StartServer();
  server->ServeCall("Run",
                    [](std::string, absl::Time, CancellationManager*, BulkServer::CallDone done) {
                      done(errors::Unimplemented("no kernel for op Foo"), nullptr);
                    });
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Run", "x");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnimplemented) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
  EXPECT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());  // same connection
}

TEST(BulkServerTest, RequestForAnotherTaskIsRefusedUnread) {
  BulkServer::Options options;
  options.task = "/job:ps/replica:0/task:0";
  auto server = StartServer(options);
  ServeReverse(*server);
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  source.Release("k", Ramp(4));
  // A client that means another task (its port was taken by this one).
  BulkClient stranger("127.0.0.1", "/job:ps/replica:0/task:1");
  const auto call = Call(stranger, server->port(), "Reverse", "ab");
  EXPECT_EQ(call->status.code(), absl::StatusCode::kFailedPrecondition) << call->status;
  EXPECT_NE(call->status.message().find("task:1"), std::string::npos) << call->status;
  EXPECT_EQ(call->fallback, BulkClient::Fallback::kOverGrpc);
  Tensor out;
  const auto recv = Ask(stranger, server->port(), "k", &out);
  EXPECT_EQ(recv->status.code(), absl::StatusCode::kFailedPrecondition) << recv->status;
  EXPECT_EQ(recv->fallback, BulkClient::Fallback::kOverGrpc);
  EXPECT_EQ(server->calls(), 0);
  // The right task, or any, is served.
  BulkClient right("127.0.0.1", "/job:ps/replica:0/task:0"), any("127.0.0.1");
  EXPECT_TRUE(Call(right, server->port(), "Reverse", "ab")->status.ok());
  EXPECT_TRUE(Call(any, server->port(), "Reverse", "ab")->status.ok());
  EXPECT_TRUE(Ask(right, server->port(), "k", &out)->status.ok());
}

TEST(BulkServerTest, GarbageCallHeaderIsDroppedAndTheServerKeepsServing) {
  auto server = StartServer();
  ServeReverse(*server);
  const int fd = ConnectToLoopback(server->port());
  ASSERT_GE(fd, 0);
  // A call with no token, no addressee and a method name of 2^32 - 1 bytes.
  const std::string garbage =
      std::string("TGC2") + std::string(8, '\0') + std::string(4, '\xff') + std::string(16, '\0');
  ASSERT_EQ(send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(garbage.size()));
  char byte;
  EXPECT_EQ(recv(fd, &byte, 1, 0), 0);  // hung up without an answer
  close(fd);
  BulkClient client("127.0.0.1");
  EXPECT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());
}

// Whether the server closes `fd` within `within` (reads return 0 or fail).
bool ServerHangsUp(int fd, absl::Duration within) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(within))) <= 0) return false;
  char byte;
  return recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

// Resident memory of this process, in bytes.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(BulkServerTest, OnePeerCannotHoldMoreThanItsShareOfConnections) {
  BulkServer::Options options;
  options.max_connections_per_peer = 2;
  auto server = StartServer(options);
  ServeReverse(*server);
  const int a = ConnectToLoopback(server->port());
  const int b = ConnectToLoopback(server->port());
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  absl::SleepFor(absl::Milliseconds(100));  // both accepted
  const int c = ConnectToLoopback(server->port());
  ASSERT_GE(c, 0);
  EXPECT_TRUE(ServerHangsUp(c, absl::Seconds(30)));  // closed as soon as accepted
  EXPECT_FALSE(ServerHangsUp(a, absl::Milliseconds(100)));
  close(a);
  close(b);
  close(c);
  BulkClient client("127.0.0.1");
  std::unique_ptr<CallResult> result;
  // The two closed ones are gone from the count within a moment.
  for (int i = 0; i < 300; ++i) {
    result = Call(client, server->port(), "Reverse", "ab");
    if (result->status.ok()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(result->status.ok()) << result->status;
  EXPECT_EQ(result->answer, "ba");
}

TEST(BulkServerTest, AHeaderThatTricklesIsCutAtItsDeadlineNotKeptAlive) {
  BulkServer::Options options;
  options.header_timeout = absl::Milliseconds(300);
  auto server = StartServer(options);
  ServeReverse(*server);
  const int fd = ConnectToLoopback(server->port());
  ASSERT_GE(fd, 0);
  // One byte every 100 ms: each would reset an idle timer.
  bool cut = false;
  for (char byte : std::string("TGC2") + std::string(28, '\0')) {
    if (send(fd, &byte, 1, MSG_NOSIGNAL) != 1 || ServerHangsUp(fd, absl::Milliseconds(100))) {
      cut = true;
      break;
    }
  }
  if (!cut) cut = ServerHangsUp(fd, absl::Seconds(30));
  EXPECT_TRUE(cut);
  close(fd);
}

TEST(BulkServerTest, APromisedRequestCostsMemoryOnlyAsItsBytesArrive) {
  auto server = StartServer();
  ServeReverse(*server);
  // Calls that declare 1 GiB each and then send nothing.
  std::string header = bulk::EncodeCallRequest("", "", "Reverse", 60000, "");
  const std::string promised =
      bulk::EncodeCallRequest("", "", "Reverse", 60000, std::string(8, '\0'));
  // The same header with the declared length set to 2^30 (its last 8 bytes
  // of the fixed part): built by hand as a hostile peer would.
  header = promised.substr(0, promised.size() - 8 - std::string("Reverse").size());
  header.replace(bulk::kMagicBytes + 20, 8, std::string("\0\0\0\x40\0\0\0\0", 8));
  header += "Reverse";
  const int64_t before = ResidentBytes();
  std::vector<int> fds;
  for (int i = 0; i < 100; ++i) {
    const int fd = ConnectToLoopback(server->port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, header.data(), header.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(header.size()));
    fds.push_back(fd);
  }
  absl::SleepFor(absl::Milliseconds(500));  // every header read, bodies awaited
  const int64_t grown = ResidentBytes() - before;
  // A buffer sized from the promise would be 100 MiB or more; threads and
  // their stacks cost far less.
  EXPECT_LT(grown, int64_t{40} << 20) << grown;
  for (int fd : fds) close(fd);
}

TEST(BulkServerTest, ServesAConnectionHandedToIt) {
  BulkServer::Options options;
  options.max_connections = 1;
  auto server = StartServer(options);
  ServeReverse(*server);
  int ends[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  ASSERT_TRUE(server->ServeConnection(ends[1]).ok());
  EXPECT_EQ(server->connections(), 1);
  // Over the limit while the first is served: refused, and closed.
  int other[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, other), 0);
  const absl::Status refused = server->ServeConnection(other[1]);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  char byte;
  EXPECT_EQ(recv(other[0], &byte, 1, 0), 0);
  close(other[0]);
  // A call on the pair is answered as on the port: kBytes, its length, "ba".
  const std::string call = bulk::EncodeCallRequest("", "", "Reverse", 10000, "ab");
  ASSERT_EQ(send(ends[0], call.data(), call.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(call.size()));
  char answer[1 + bulk::kLengthBytes + 2];
  ASSERT_EQ(bulk::ReadFull(ends[0], answer, sizeof(answer), absl::Now() + absl::Seconds(10)),
            sizeof(answer));
  EXPECT_EQ(static_cast<bulk::AnswerKind>(answer[0]), bulk::AnswerKind::kBytes);
  EXPECT_EQ(bulk::DecodeLength(answer + 1), 2u);
  EXPECT_EQ(std::string(answer + 1 + bulk::kLengthBytes, 2), "ba");
  EXPECT_EQ(server->calls(), 1);
  // The client goes: the server hangs up, and stops counting the connection.
  shutdown(ends[0], SHUT_WR);
  EXPECT_EQ(recv(ends[0], &byte, 1, 0), 0);
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (server->connections() > 0 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(server->connections(), 0);
  close(ends[0]);
  server->Stop();
  int late[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, late), 0);
  EXPECT_EQ(server->ServeConnection(late[1]).code(), absl::StatusCode::kUnavailable);
  close(late[0]);
}

TEST(BulkServerTest, ConnectionsHandedToItCountAsOnePeer) {
  BulkServer::Options options;
  options.max_connections_per_peer = 1;
  auto server = StartServer(options);
  ServeReverse(*server);
  int first[2], second[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, first), 0);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, second), 0);
  ASSERT_TRUE(server->ServeConnection(first[1]).ok());
  const absl::Status refused = server->ServeConnection(second[1]);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_NE(refused.message().find("its limit per peer"), absl::string_view::npos) << refused;
  close(first[0]);
  close(second[0]);
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
