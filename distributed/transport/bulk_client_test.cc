// The client's side of calls: answers, the pool, beats and silence,
// fallbacks, and a client destroyed while calls wait.
#include "distributed/transport/bulk_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
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
#include "distributed/transport/bulk_server.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

TEST(BulkClientTest, AnswersComeBackAndConnectionsAreReused) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  for (int i = 0; i < 20; ++i) {
    const std::string request = absl::StrCat("abc", i);
    const auto result = Call(client, server->port(), "Reverse", request);
    ASSERT_TRUE(result->status.ok()) << result->status;
    EXPECT_EQ(result->answer, std::string(request.rbegin(), request.rend()));
  }
  EXPECT_EQ(server->calls(), 20);
  // An empty request and an empty answer are fine too.
  EXPECT_TRUE(Call(client, server->port(), "Reverse", "")->status.ok());
}

// Call, for a caller that blocks: on a pooled connection the answer is read
// (and the callback run) on the caller's thread before Call returns; a
// deadline still ends it, with the server's call cancelled.
TEST(BulkClientTest, BlockingCallReadsItsAnswerOnTheCallersThread) {
  auto server = StartServer();
  ServeReverse(*server);
  NeverAnswered never;
  never.Serve(*server, "Never");
  BulkClient client("127.0.0.1");
  ASSERT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());  // pools a connection
  std::thread::id ran_on;
  std::string answer;
  client.Call(server->port(), "", "Reverse", "xyz", Soon(),
              [&](absl::Status s, std::string a, BulkClient::Fallback) {
                EXPECT_TRUE(s.ok()) << s;
                ran_on = std::this_thread::get_id();
                answer = std::move(a);
              });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(answer, "zyx");
  CallResult late;
  client.Call(server->port(), "", "Never", "x", absl::Now() + absl::Milliseconds(300),
              late.Callback());
  ASSERT_TRUE(late.Wait());
  EXPECT_EQ(late.status.code(), absl::StatusCode::kDeadlineExceeded) << late.status;
  EXPECT_TRUE(never.WaitCancelled(1));
  ASSERT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());  // still serving
}

// A server that takes a request and then goes silent (a frozen process:
// its kernel keeps the connection up) fails the call once the client has
// heard nothing for its silence, final; a busy one that beats keeps it
// alive; one that beat and then hung up ran it (final too). The busy server
// beats every 20 ms against a 2 s silence: only a beat 100 times late (a
// stalled machine, not a loaded one) could fail it.
TEST(BulkClientTest, SilentServerFailsTheCallBusyOneBeats) {
  for (const bool beat_then_hang_up : {false, true}) {
    int port = 0;
    const int listener = ListenOnLoopback(&port);
    ASSERT_GE(listener, 0);
    std::thread frozen([&] {
      const int fd = accept(listener, nullptr, nullptr);
      ASSERT_GE(fd, 0);
      char request[64];
      EXPECT_GT(recv(fd, request, sizeof(request), 0), 0);
      if (beat_then_hang_up) {
        const char beat = 7;
        send(fd, &beat, 1, MSG_NOSIGNAL);
        absl::SleepFor(absl::Milliseconds(100));
      } else {
        char byte;
        EXPECT_LE(recv(fd, &byte, 1, 0), 0);  // until the client hangs up
      }
      close(fd);
    });
    BulkClient client("127.0.0.1");
    client.set_peer_silence(absl::Milliseconds(500));
    const auto result = Call(client, port, "Run", "x", "", absl::Now() + absl::Seconds(60));
    EXPECT_EQ(result->status.code(), absl::StatusCode::kUnavailable) << result->status;
    if (!beat_then_hang_up) {
      EXPECT_NE(result->status.message().find("nothing heard"), std::string::npos)
          << result->status;
    }
    EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);  // it may have run
    frozen.join();
    close(listener);
  }
  BulkServer::Options options;
  options.beat_interval = absl::Milliseconds(20);
  auto server = StartServer(options);
  server->ServeCall(
      "Busy", [](std::string request, absl::Time, CancellationManager*, BulkServer::CallDone done) {
        std::thread([request, done = std::move(done)] {
          absl::SleepFor(absl::Seconds(3));  // past the client's silence
          done(absl::OkStatus(), BulkServer::Bytes(request));
        }).detach();
      });
  ServeReverse(*server);
  for (const bool blocking : {false, true}) {
    BulkClient client("127.0.0.1");
    client.set_peer_silence(absl::Seconds(2));
    CallResult result;
    if (blocking) {
      ASSERT_TRUE(Call(client, server->port(), "Reverse", "warm")->status.ok());  // pooled
      client.Call(server->port(), "", "Busy", "late", Soon(), result.Callback());
    } else {
      client.CallAsync(server->port(), "", "Busy", "late", Soon(), result.Callback());
    }
    ASSERT_TRUE(result.Wait());
    ASSERT_TRUE(result.status.ok()) << blocking << ": " << result.status;
    EXPECT_EQ(result.answer, "late");
  }
}

TEST(BulkClientTest, LargeRequestsAndAnswersArriveIntact) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  std::string request(6 << 20, '\0');  // past both the inline send and the inline read
  for (size_t i = 0; i < request.size(); ++i) request[i] = static_cast<char>(i * 7 % 251);
  const auto result = Call(client, server->port(), "Reverse", request);
  ASSERT_TRUE(result->status.ok()) << result->status;
  EXPECT_EQ(result->answer, std::string(request.rbegin(), request.rend()));
}

TEST(BulkClientTest, HandlerErrorsCrossWithCodeMessageAndPayload) {
  auto server = StartServer();
  server->ServeCall("Fail",
                    [](std::string, absl::Time, CancellationManager*, BulkServer::CallDone done) {
                      absl::Status s = errors::Aborted("step 7 was aborted on task 1");
                      s.SetPayload("type.tensorgrid/derived", absl::Cord("yes"));
                      done(s, nullptr);
                    });
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Fail", "x");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kAborted) << result->status;
  EXPECT_EQ(result->status.message(), "step 7 was aborted on task 1");
  EXPECT_EQ(result->status.GetPayload("type.tensorgrid/derived"), absl::Cord("yes"));
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
  // The connection goes on serving.
  EXPECT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());
}

TEST(BulkClientTest, ClientDestroyedWhileCallsWaitCancelsEachOnce) {
  auto server = StartServer();
  NeverAnswered never;
  never.Serve(*server, "Never");
  absl::Mutex mu;
  std::vector<int> finished(6, 0);
  {
    BulkClient client("127.0.0.1");
    for (int i = 0; i < 6; ++i) {
      client.CallAsync(server->port(), "", "Never", "x", Soon(),
                       [&, i](absl::Status s, std::string, BulkClient::Fallback) {
                         EXPECT_TRUE(absl::IsCancelled(s)) << s;
                         absl::MutexLock lock(&mu);
                         ++finished[i];
                       });
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  {
    absl::MutexLock lock(&mu);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(finished[i], 1) << i;  // before the destructor returned
  }
  EXPECT_TRUE(never.WaitCancelled(6));  // and the server cancelled each
}

TEST(BulkClientTest, StoppedServerIsRefusedNotAHang) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  ASSERT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());  // pools a connection
  server->Stop();
  // The pooled connection is seen to be closed; a new one is refused.
  const auto result = Call(client, server->port(), "Reverse", "ab");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnavailable) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kPortRefused);
}

TEST(BulkClientTest, UnresolvableHostIsUnreachable) {
  BulkClient client("no-such-host.invalid");
  const auto result = Call(client, 1, "Reverse", "ab");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnavailable) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kPortUnreachable);
}

TEST(BulkClientTest, ManyWaitingCallsAnsweredInAnyOrder) {
  auto server = StartServer();
  absl::Mutex mu;
  std::map<std::string, BulkServer::CallDone> held;
  server->ServeCall("Hold", [&](std::string request, absl::Time, CancellationManager*,
                                BulkServer::CallDone done) {
    absl::MutexLock lock(&mu);
    held[request] = std::move(done);
  });
  BulkClient client("127.0.0.1");
  constexpr int kCalls = 24;
  std::vector<std::unique_ptr<CallResult>> results;
  for (int i = 0; i < kCalls; ++i) {
    results.push_back(std::make_unique<CallResult>());
    client.CallAsync(server->port(), "", "Hold", absl::StrCat(i), Soon(),
                     results.back()->Callback());
  }
  const absl::Time until = absl::Now() + absl::Seconds(20);
  for (;;) {
    absl::MutexLock lock(&mu);
    if (held.size() == kCalls || absl::Now() > until) break;
    mu.AwaitWithTimeout(
        absl::Condition(
            +[](std::map<std::string, BulkServer::CallDone>* h) { return h->size() == kCalls; },
            &held),
        absl::Milliseconds(50));
  }
  std::map<std::string, BulkServer::CallDone> answer;
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(held.size(), static_cast<size_t>(kCalls));
    answer.swap(held);
  }
  for (auto it = answer.rbegin(); it != answer.rend(); ++it)
    it->second(absl::OkStatus(), BulkServer::Bytes(it->first));
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(results[i]->Wait()) << i;
    ASSERT_TRUE(results[i]->status.ok()) << i << ": " << results[i]->status;
    EXPECT_EQ(results[i]->answer, absl::StrCat(i));
  }
}

// A scripted server that reads one request and answers `answer`.
std::thread AnswerOnce(int listener, std::string answer) {
  return std::thread([listener, answer] {
    const int fd = accept(listener, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    char request[256];
    EXPECT_GT(recv(fd, request, sizeof(request), 0), 0);
    send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    char byte;
    recv(fd, &byte, 1, 0);  // until the client hangs up
    close(fd);
  });
}

TEST(BulkClientTest, AnswersThatCannotBeAreDataLossNamingWhatIsWrong) {
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  BulkClient client("127.0.0.1");
  {
    std::thread peer = AnswerOnce(listener, "\x7f");  // no kind of answer
    const auto result = Call(client, port, "Reverse", "ab");
    EXPECT_EQ(result->status.code(), absl::StatusCode::kDataLoss) << result->status;
    EXPECT_NE(result->status.message().find("an answer of kind 127"), std::string::npos)
        << result->status;
    EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
    peer.join();
  }
  {
    // A tensor answer of rank 65.
    std::thread peer = AnswerOnce(listener, std::string("\0\1\0\0\0\x41\0\0\0", 9));
    Tensor out;
    const auto result = Ask(client, port, "k", &out);
    EXPECT_EQ(result->status.code(), absl::StatusCode::kDataLoss) << result->status;
    EXPECT_NE(result->status.message().find("an answer of rank 65"), std::string::npos)
        << result->status;
    peer.join();
  }
  close(listener);
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
