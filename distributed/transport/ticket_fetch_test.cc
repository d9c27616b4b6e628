// Ticket fetches: the bytes of a large tensor a gRPC answer handed out a
// ticket for, read from the sender's bulk port.
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
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/bulk_server.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

TEST(TicketFetchTest, FetchesTheOfferedBytesOnce) {
  auto server = StartServer();
  const Tensor sent = Ramp(1 << 20);  // 4 MiB
  const std::string id = server->Offer(sent);
  ASSERT_EQ(id.size(), kBulkTicketBytes);
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes());
  ASSERT_TRUE(client.Fetch(server->port(), id, got.data(), got.size(), Soon()).ok());
  EXPECT_EQ(std::memcmp(got.data(), sent.raw_data(), got.size()), 0);
  EXPECT_EQ(server->fetches(), 1);
  // One fetch per ticket: the second finds nothing (on the pooled connection).
  const absl::Status again = client.Fetch(server->port(), id, got.data(), got.size(), Soon());
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound) << again;
  EXPECT_NE(again.message().find("no longer holds the ticket"), std::string::npos) << again;
  // And the connection still serves the next ticket.
  const std::string next = server->Offer(sent);
  EXPECT_TRUE(client.Fetch(server->port(), next, got.data(), got.size(), Soon()).ok());
  EXPECT_EQ(server->fetches(), 2);
}

TEST(TicketFetchTest, TicketsAreDistinctAndTakeRemovesThem) {
  auto server = StartServer();
  const Tensor sent = Ramp(1 << 18);
  const std::string a = server->Offer(sent), b = server->Offer(sent);
  EXPECT_NE(a, b);
  std::optional<Tensor> taken = server->Take(a);
  ASSERT_TRUE(taken.has_value());
  EXPECT_TRUE(taken->SharesBufferWith(sent));  // held by reference, not copied
  EXPECT_FALSE(server->Take(a).has_value());
  EXPECT_FALSE(server->Take("not a ticket").has_value());
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes());
  EXPECT_EQ(client.Fetch(server->port(), a, got.data(), got.size(), Soon()).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(client.Fetch(server->port(), b, got.data(), got.size(), Soon()).ok());
}

TEST(TicketFetchTest, TicketsExpire) {
  BulkServer::Options options;
  options.ticket_ttl = absl::Milliseconds(1);
  auto server = StartServer(options);
  const Tensor sent = Ramp(1 << 18);
  const std::string id = server->Offer(sent);
  absl::SleepFor(absl::Milliseconds(20));
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes());
  EXPECT_EQ(client.Fetch(server->port(), id, got.data(), got.size(), Soon()).code(),
            absl::StatusCode::kNotFound);
  server->Offer(sent);  // sweeps the expired one; the new one waits
  EXPECT_FALSE(server->Take(id).has_value());
}

TEST(TicketFetchTest, AnotherSizeThanExpectedIsDataLoss) {
  auto server = StartServer();
  const Tensor sent = Ramp(1 << 18);
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes() + 4);
  const absl::Status s =
      client.Fetch(server->port(), server->Offer(sent), got.data(), got.size(), Soon());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("expected"), std::string::npos) << s;
}

TEST(TicketFetchTest, MalformedTicketIsInvalidArgument) {
  BulkClient client("127.0.0.1");
  char byte;
  EXPECT_EQ(client.Fetch(1, "short", &byte, 1, Soon()).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TicketFetchTest, GarbageOnThePortDoesNotStopTheServer) {
  auto server = StartServer();
  const int fd = ConnectToLoopback(server->port());
  ASSERT_GE(fd, 0);
  const std::string garbage(64, 'x');
  ASSERT_EQ(send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(garbage.size()));
  char byte;
  // The server hangs up answering nothing (a reset: it left bytes unread).
  EXPECT_LE(recv(fd, &byte, 1, 0), 0);
  close(fd);
  const Tensor sent = Ramp(1 << 18);
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes());
  EXPECT_TRUE(
      client.Fetch(server->port(), server->Offer(sent), got.data(), got.size(), Soon()).ok());
}

TEST(TicketFetchTest, UnreachablePortIsUnavailableAndKeepsTheTicket) {
  auto server = StartServer();
  server->StopListening();
  const Tensor sent = Ramp(1 << 18);
  const std::string id = server->Offer(sent);
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes());
  BulkClient::Fallback fallback = BulkClient::Fallback::kNone;
  const absl::Status s =
      client.Fetch(server->port(), id, got.data(), got.size(), Soon(), &fallback);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  // Nothing listens: refused, which says the server may have moved.
  EXPECT_EQ(fallback, BulkClient::Fallback::kPortRefused);
  EXPECT_NE(s.message().find(absl::StrCat("127.0.0.1:", server->port())), std::string::npos) << s;
  EXPECT_TRUE(server->Take(id).has_value());  // so gRPC can still carry the bytes
}

TEST(TicketFetchTest, StoppedServerFailsPooledConnectionsCleanly) {
  auto server = StartServer();
  const int port = server->port();
  const Tensor sent = Ramp(1 << 18);
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes());
  ASSERT_TRUE(client.Fetch(port, server->Offer(sent), got.data(), got.size(), Soon()).ok());
  const std::string id = server->Offer(sent);
  server->Stop();  // closes the pooled connection and the port
  const absl::Status s = client.Fetch(port, id, got.data(), got.size(), Soon());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(server->Offer(sent).empty());
}

TEST(TicketFetchTest, SenderGoingAwayMidFetchIsUnavailable) {
  // A port that reads the request, announces 1 MiB, sends 10 bytes and hangs up.
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  std::thread sender([listener] {
    const int fd = accept(listener, nullptr, nullptr);
    char request[20];
    ASSERT_EQ(recv(fd, request, sizeof(request), MSG_WAITALL), 20);
    char answer[9 + 10] = {0, 0, 0, 0x10, 0, 0, 0, 0, 0};  // code 0, length 1 MiB
    send(fd, answer, sizeof(answer), MSG_NOSIGNAL);
    close(fd);
  });
  BulkClient client("127.0.0.1");
  std::vector<char> got(1 << 20);
  BulkClient::Fallback fallback = BulkClient::Fallback::kOverGrpc;
  const absl::Status s = client.Fetch(port, std::string(kBulkTicketBytes, 'a'), got.data(),
                                      got.size(), Soon(), &fallback);
  sender.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(fallback, BulkClient::Fallback::kNone);  // it was reached: the ticket is spent
  EXPECT_NE(s.message().find("reading the tensor"), std::string::npos) << s;
  close(listener);
}

TEST(TicketFetchTest, ServerAtItsConnectionLimitLeavesTheTicketForGrpc) {
  BulkServer::Options options;
  options.max_connections = 1;
  auto server = StartServer(options);
  const Tensor sent = Ramp(1 << 18);
  std::vector<char> got(sent.TotalBytes());
  BulkClient first("127.0.0.1"), second("127.0.0.1");
  ASSERT_TRUE(first.Fetch(server->port(), server->Offer(sent), got.data(), got.size(), Soon())
                  .ok());  // `first` keeps its connection: the one allowed
  const std::string id = server->Offer(sent);
  BulkClient::Fallback fallback = BulkClient::Fallback::kNone;
  const absl::Status s =
      second.Fetch(server->port(), id, got.data(), got.size(), Soon(), &fallback);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(fallback, BulkClient::Fallback::kOverGrpc);
  EXPECT_TRUE(server->Take(id).has_value());
}

TEST(TicketFetchTest, PassedDeadlineIsDeadlineExceededWithoutFallback) {
  auto server = StartServer();
  const Tensor sent = Ramp(1 << 18);
  std::vector<char> got(sent.TotalBytes());
  BulkClient client("127.0.0.1");
  BulkClient::Fallback fallback = BulkClient::Fallback::kOverGrpc;
  const absl::Status s = client.Fetch(server->port(), server->Offer(sent), got.data(), got.size(),
                                      absl::Now() - absl::Seconds(1), &fallback);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_EQ(fallback, BulkClient::Fallback::kNone);
}

TEST(TicketFetchTest, SilentPeerIsDeadlineExceeded) {
  // A port that accepts but never answers.
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  BulkClient client("127.0.0.1");
  char byte;
  const absl::Status s = client.Fetch(port, std::string(kBulkTicketBytes, 'a'), &byte, 1,
                                      absl::Now() + absl::Milliseconds(100));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  close(listener);
}

TEST(TicketFetchTest, ConcurrentFetches) {
  auto server = StartServer();
  BulkClient client("127.0.0.1");
  constexpr int kFetches = 24;
  std::vector<Tensor> sent;
  std::vector<std::vector<char>> got(kFetches);
  std::vector<absl::Status> status(kFetches);
  absl::Mutex mu;
  int left = kFetches;
  for (int i = 0; i < kFetches; ++i) {
    sent.push_back(Ramp((1 << 16) + 1024 * i));
    got[i].resize(sent[i].TotalBytes());
    client.FetchAsync(server->port(), server->Offer(sent[i]), got[i].data(), got[i].size(), Soon(),
                      [&, i](absl::Status s, BulkClient::Fallback) {
                        absl::MutexLock lock(&mu);
                        status[i] = s;
                        --left;
                      });
  }
  {
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(
                                        +[](int* n) { return *n == 0; }, &left),
                                    absl::Seconds(30)));
  }
  for (int i = 0; i < kFetches; ++i) {
    EXPECT_TRUE(status[i].ok()) << i << ": " << status[i];
    EXPECT_EQ(std::memcmp(got[i].data(), sent[i].raw_data(), got[i].size()), 0) << i;
  }
  EXPECT_EQ(server->fetches(), kFetches);
}

TEST(TicketFetchTest, WantsBulkOnlyForLargePlainTensors) {
  EXPECT_TRUE(WantsBulk(Ramp(kBulkMinBytes / sizeof(float))));
  EXPECT_FALSE(WantsBulk(Ramp(kBulkMinBytes / sizeof(float) - 1)));
  EXPECT_FALSE(WantsBulk(Tensor()));
  EXPECT_FALSE(WantsBulk(Tensor(DT_STRING, TensorShape({1 << 20}))));
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
