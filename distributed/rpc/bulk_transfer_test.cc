#include "distributed/rpc/bulk_transfer.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <map>
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
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

Tensor Ramp(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i % 4099);
  return t;
}

// A listening loopback socket (its port in `*port`), or -1.
int ListenOnLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 4) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

absl::Time Soon() { return absl::Now() + absl::Seconds(30); }

std::unique_ptr<BulkServer> StartServer(BulkServer::Options options = {}) {
  absl::StatusOr<std::unique_ptr<BulkServer>> server = BulkServer::Start("127.0.0.1", options);
  EXPECT_TRUE(server.ok()) << server.status();
  return *std::move(server);
}

TEST(BulkTransferTest, FetchesTheOfferedBytesOnce) {
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

TEST(BulkTransferTest, TicketsAreDistinctAndTakeRemovesThem) {
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

TEST(BulkTransferTest, TicketsExpire) {
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

TEST(BulkTransferTest, AnotherSizeThanExpectedIsDataLoss) {
  auto server = StartServer();
  const Tensor sent = Ramp(1 << 18);
  BulkClient client("127.0.0.1");
  std::vector<char> got(sent.TotalBytes() + 4);
  const absl::Status s =
      client.Fetch(server->port(), server->Offer(sent), got.data(), got.size(), Soon());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("expected"), std::string::npos) << s;
}

TEST(BulkTransferTest, MalformedTicketIsInvalidArgument) {
  BulkClient client("127.0.0.1");
  char byte;
  EXPECT_EQ(client.Fetch(1, "short", &byte, 1, Soon()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BulkTransferTest, GarbageOnThePortDoesNotStopTheServer) {
  auto server = StartServer();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(server->port());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
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
  EXPECT_TRUE(client.Fetch(server->port(), server->Offer(sent), got.data(), got.size(), Soon())
                  .ok());
}

TEST(BulkTransferTest, UnreachablePortIsUnavailableAndKeepsTheTicket) {
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

TEST(BulkTransferTest, StoppedServerFailsPooledConnectionsCleanly) {
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

TEST(BulkTransferTest, SenderGoingAwayMidFetchIsUnavailable) {
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

TEST(BulkTransferTest, ServerAtItsConnectionLimitLeavesTheTicketForGrpc) {
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

TEST(BulkTransferTest, PassedDeadlineIsDeadlineExceededWithoutFallback) {
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

TEST(BulkTransferTest, SilentPeerIsDeadlineExceeded) {
  // A port that accepts but never answers.
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  BulkClient client("127.0.0.1");
  char byte;
  const absl::Status s = client.Fetch(port, std::string(kBulkTicketBytes, 'a'),
                                      &byte, 1, absl::Now() + absl::Milliseconds(100));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  close(listener);
}

TEST(BulkTransferTest, ConcurrentFetches) {
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

TEST(BulkTransferTest, WantsBulkOnlyForLargePlainTensors) {
  EXPECT_TRUE(WantsBulk(Ramp(kBulkMinBytes / sizeof(float))));
  EXPECT_FALSE(WantsBulk(Ramp(kBulkMinBytes / sizeof(float) - 1)));
  EXPECT_FALSE(WantsBulk(Tensor()));
  EXPECT_FALSE(WantsBulk(Tensor(DT_STRING, TensorShape({1 << 20}))));
}

TEST(BulkTransferTest, HostOf) {
  EXPECT_EQ(HostOf("localhost:2222"), "localhost");
  EXPECT_EQ(HostOf("[::1]:2222"), "::1");
  EXPECT_EQ(HostOf("10.0.0.1:80"), "10.0.0.1");
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

// Waits (bounded) for RecvBufAsync's callback.
struct RecvBufResult {
  absl::Notification done;
  absl::Status status;
  BulkClient::Fallback fallback = BulkClient::Fallback::kNone;
  BulkClient::FetchCallback Callback() {
    return [this](absl::Status s, BulkClient::Fallback f) {
      status = std::move(s);
      fallback = f;
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(30)); }
};

// One RecvBufAsync, waited for.
std::unique_ptr<RecvBufResult> Ask(BulkClient& client, int port, const std::string& key,
                                   Tensor* out, const Tensor* into = nullptr,
                                   const std::string& token = "", absl::Time deadline = Soon()) {
  auto result = std::make_unique<RecvBufResult>();
  client.RecvBufAsync(port, token, key, deadline, into, out, result->Callback());
  EXPECT_TRUE(result->Wait());
  return result;
}

// Chunks by key, answered when Release(key) is called (or at once if
// released before being asked for).
class ChunkSource {
 public:
  BulkServer::RecvBufFn Fn() {
    return [this](const std::string& key, absl::Time, Tensor* out, StatusCallback done) {
      absl::MutexLock lock(&mu_);
      asked_[key] = {out, std::move(done)};
      MaybeAnswer(key);
    };
  }
  void Release(const std::string& key, absl::StatusOr<Tensor> value) {
    absl::MutexLock lock(&mu_);
    released_[key] = std::move(value);
    MaybeAnswer(key);
  }

 private:
  void MaybeAnswer(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto a = asked_.find(key);
    auto r = released_.find(key);
    if (a == asked_.end() || r == released_.end()) return;
    if (r->second.ok()) *a->second.first = *r->second;
    a->second.second(r->second.status());
    asked_.erase(a);
  }
  absl::Mutex mu_;
  std::map<std::string, std::pair<Tensor*, StatusCallback>> asked_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::StatusOr<Tensor>> released_ ABSL_GUARDED_BY(mu_);
};

TEST(BulkRecvBufTest, ChunkLandsInTheGivenBufferWhenItIsReady) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  const Tensor into(DT_FLOAT, TensorShape({1 << 18}));
  Tensor out;
  RecvBufResult result;
  client.RecvBufAsync(server->port(), "", "chunk/0", Soon(), &into, &out, result.Callback());
  absl::SleepFor(absl::Milliseconds(50));  // asked before it exists: the server waits
  EXPECT_FALSE(result.done.HasBeenNotified());
  const Tensor chunk = Ramp(1 << 18);
  source.Release("chunk/0", chunk);
  ASSERT_TRUE(result.Wait());
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_TRUE(out.SharesBufferWith(into));
  EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0);
  EXPECT_EQ(server->fetches(), 1);
}

TEST(BulkRecvBufTest, TheWorkersErrorCrossesWithItsCodeAndMessage) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  source.Release("k", errors::Aborted("step 7 was cancelled"));
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto result = Ask(client, server->port(), "k", &out, nullptr);
  EXPECT_EQ(result->status.code(), absl::StatusCode::kAborted) << result->status;
  EXPECT_EQ(result->status.message(), "step 7 was cancelled");
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kNone);
}

TEST(BulkRecvBufTest, TokenIsRequiredWhenTheServerHasOne) {
  BulkServer::Options options;
  options.token = "secret";
  auto server = StartServer(options);
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  source.Release("k", Ramp(4));
  BulkClient client("127.0.0.1");
  for (const std::string token : {"", "guess", "secret"}) {
    Tensor out;
    const auto result = Ask(client, server->port(), "k", &out, nullptr, token);
    if (token == "secret") {
      EXPECT_TRUE(result->status.ok()) << result->status;
      EXPECT_EQ(out.NumElements(), 4);
    } else {
      EXPECT_EQ(result->status.code(), absl::StatusCode::kUnauthenticated) << result->status;
    }
  }
}

TEST(BulkRecvBufTest, ChunkThatNeverComesIsDeadlineExceeded) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto result =
      Ask(client, server->port(), "never", &out, nullptr, "", absl::Now() + absl::Milliseconds(200));
  EXPECT_EQ(result->status.code(), absl::StatusCode::kDeadlineExceeded) << result->status;
  EXPECT_NE(result->status.message().find("never"), std::string::npos) << result->status;
}

TEST(BulkRecvBufTest, StoppingTheServerEndsAWaitingRequest) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  Tensor out;
  RecvBufResult result;
  client.RecvBufAsync(server->port(), "", "never", Soon(), nullptr, &out, result.Callback());
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Time start = absl::Now();
  server->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_TRUE(result.Wait());
  EXPECT_FALSE(result.status.ok());
}

TEST(BulkRecvBufTest, UnreachablePortFallsBack) {
  auto server = StartServer();
  server->StopListening();
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto result = Ask(client, server->port(), "k", &out, nullptr);
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnavailable) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kPortRefused);
}

TEST(BulkRecvBufTest, ManyWaitingRequestsAnsweredInAnyOrder) {
  // More than the client's threads wait at once, and the last asked is
  // answered first: nothing may hold a thread while it waits.
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  constexpr int kRequests = 24;
  std::vector<Tensor> out(kRequests);
  std::vector<std::unique_ptr<RecvBufResult>> results;
  for (int i = 0; i < kRequests; ++i) {
    results.push_back(std::make_unique<RecvBufResult>());
    client.RecvBufAsync(server->port(), "", absl::StrCat("k", i), Soon(), nullptr, &out[i],
                        results[i]->Callback());
  }
  for (int i = kRequests - 1; i >= 0; --i) source.Release(absl::StrCat("k", i), Ramp(1000 + i));
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(results[i]->Wait()) << i;
    ASSERT_TRUE(results[i]->status.ok()) << i << ": " << results[i]->status;
    EXPECT_EQ(out[i].NumElements(), 1000 + i);
  }
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

TEST(BulkRecvBufTest, AnswerOfAnotherSizeThanTheGivenBufferIsDataLoss) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  source.Release("k", Ramp(100));
  BulkClient client("127.0.0.1");
  const Tensor into(DT_FLOAT, TensorShape({99}));
  Tensor out;
  const auto result = Ask(client, server->port(), "k", &out, &into);
  EXPECT_EQ(result->status.code(), absl::StatusCode::kDataLoss) << result->status;
}

TEST(BulkRecvBufTest, PortWithoutRecvBufSendsTheRequestOverGrpc) {
  auto server = StartServer();  // no ServeRecvBuf
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto result = Ask(client, server->port(), "k", &out, nullptr);
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnimplemented) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kOverGrpc);
}

TEST(BulkRecvBufTest, ClientDestroyedWhileRequestsWaitCancelsThem) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  std::vector<std::unique_ptr<RecvBufResult>> results;
  std::vector<Tensor> out(4);
  {
    BulkClient client("127.0.0.1");
    for (int i = 0; i < 4; ++i) {
      results.push_back(std::make_unique<RecvBufResult>());
      client.RecvBufAsync(server->port(), "", absl::StrCat("never", i), Soon(), nullptr, &out[i],
                          results[i]->Callback());
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  for (auto& r : results) {
    ASSERT_TRUE(r->done.HasBeenNotified());  // before the destructor returned
    EXPECT_EQ(r->status.code(), absl::StatusCode::kCancelled) << r->status;
  }
}

// RecvTensor on the port: tensors by (step, rendezvous key), of any dtype.
TEST(BulkRecvTensorTest, TensorsOfEveryKindArriveAndErrorsCross) {
  auto server = StartServer();
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.data<std::string>()[0] = "one";
  strings.data<std::string>()[1] = std::string(3 << 20, 'x');  // read on the client's pool
  Tensor big(DT_FLOAT, TensorShape({1 << 16}));  // 256 KiB: read in place where allowed
  for (int64_t i = 0; i < big.NumElements(); ++i) big.data<float>()[i] = i * 0.25f;
  const std::map<std::string, Tensor> sent = {
      {"floats", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))},
      {"strings", strings},
      {"big", big},
      {"empty", Tensor(DT_INT32, TensorShape({0, 2}))}};
  absl::Mutex mu;
  std::vector<int64_t> steps;
  server->ServeRecvTensor(
      [&](int64_t step_id, const std::string& key, absl::Time, Tensor* out, StatusCallback done) {
        {
          absl::MutexLock lock(&mu);
          steps.push_back(step_id);
        }
        auto it = sent.find(key);
        if (it == sent.end()) {
          return done(MarkDerived(errors::Aborted("step ", step_id, " is already over")));
        }
        *out = it->second;
        done(absl::OkStatus());
      });
  BulkClient client("127.0.0.1");
  int64_t step = 40;
  for (const auto& [key, tensor] : sent) {
    RecvBufResult result;
    Tensor out;
    client.RecvTensorAsync(server->port(), "", ++step, key, Soon(), &out, result.Callback());
    ASSERT_TRUE(result.Wait());
    ASSERT_TRUE(result.status.ok()) << key << ": " << result.status;
    ASSERT_EQ(out.dtype(), tensor.dtype()) << key;
    ASSERT_EQ(out.shape(), tensor.shape()) << key;
    if (tensor.dtype() == DT_STRING) {
      for (int64_t i = 0; i < tensor.NumElements(); ++i) {
        EXPECT_EQ(out.data<std::string>()[i], tensor.data<std::string>()[i]);
      }
    } else {
      EXPECT_EQ(std::memcmp(out.raw_data(), tensor.raw_data(), tensor.TotalBytes()), 0) << key;
    }
  }
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(steps, (std::vector<int64_t>{41, 42, 43, 44}));
  }
  RecvBufResult failed;
  Tensor out;
  client.RecvTensorAsync(server->port(), "", 7, "gone", Soon(), &out, failed.Callback());
  ASSERT_TRUE(failed.Wait());
  EXPECT_TRUE(absl::IsAborted(failed.status)) << failed.status;
  EXPECT_TRUE(IsDerivedError(failed.status)) << failed.status;
  EXPECT_EQ(failed.fallback, BulkClient::Fallback::kNone);
}

TEST(BulkRecvTensorTest, UnsentTensorIsDeadlineExceededAtTheDeadlineNamingKeyAndStep) {
  auto server = StartServer();
  server->ServeRecvTensor([](int64_t, const std::string&, absl::Time, Tensor*, StatusCallback) {});
  BulkClient client("127.0.0.1");
  RecvBufResult result;
  Tensor out;
  client.RecvTensorAsync(server->port(), "", 9, "never", absl::Now() + absl::Milliseconds(300),
                         &out, result.Callback());
  ASSERT_TRUE(result.Wait());
  EXPECT_EQ(result.status.code(), absl::StatusCode::kDeadlineExceeded) << result.status;
  EXPECT_NE(result.status.message().find("RecvTensor of 'never' for step 9"), std::string::npos)
      << result.status;
}

TEST(BulkRecvTensorTest, PortWithoutRecvTensorSendsTheRequestOverGrpc) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());  // RecvBuf only
  BulkClient client("127.0.0.1");
  RecvBufResult result;
  Tensor out;
  client.RecvTensorAsync(server->port(), "", 1, "k", Soon(), &out, result.Callback());
  ASSERT_TRUE(result.Wait());
  EXPECT_EQ(result.status.code(), absl::StatusCode::kUnimplemented) << result.status;
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kOverGrpc);
}

}  // namespace
}  // namespace tensorgrid

// ---- calls ---------------------------------------------------------------------

namespace tensorgrid {
namespace {

// Waits (bounded) for CallAsync's callback.
struct CallResult {
  absl::Notification done;
  absl::Status status;
  std::string answer;
  BulkClient::Fallback fallback = BulkClient::Fallback::kNone;
  BulkClient::CallCallback Callback() {
    return [this](absl::Status s, std::string a, BulkClient::Fallback f) {
      status = std::move(s);
      answer = std::move(a);
      fallback = f;
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(30)); }
};

std::unique_ptr<CallResult> Call(BulkClient& client, int port, const std::string& method,
                                 std::string request, const std::string& token = "",
                                 absl::Time deadline = Soon()) {
  auto result = std::make_unique<CallResult>();
  client.CallAsync(port, token, method, std::move(request), deadline, result->Callback());
  EXPECT_TRUE(result->Wait());
  return result;
}

// Answers "Reverse" calls with the request reversed, at once.
void ServeReverse(BulkServer& server) {
  server.ServeCall("Reverse", [](std::string request, absl::Time, CancellationManager*,
                                 BulkServer::CallDone done) {
    done(absl::OkStatus(), BulkServer::Bytes(std::string(request.rbegin(), request.rend())));
  });
}

// Serves `method` with calls that are answered only when cancelled
// (Cancelled), as a step is; counts the calls taken and cancelled.
struct NeverAnswered {
  absl::Mutex mu;
  int taken ABSL_GUARDED_BY(mu) = 0;
  int cancelled ABSL_GUARDED_BY(mu) = 0;
  void Serve(BulkServer& server, const std::string& method) {
    server.ServeCall(method, [this](std::string, absl::Time, CancellationManager* cancellation,
                                    BulkServer::CallDone done) {
      {
        absl::MutexLock lock(&mu);
        ++taken;
      }
      CancellationManager::Token token;
      cancellation->RegisterCallback(&token, [this, done = std::move(done)] {
        {
          absl::MutexLock lock(&mu);
          ++cancelled;
        }
        done(errors::Cancelled("the step was cancelled"), nullptr);
      });
    });
  }
  // Waits (bounded) until `n` calls were taken, or cancelled.
  bool WaitTaken(int n) { return WaitFor(&taken, n); }
  bool WaitCancelled(int n) { return WaitFor(&cancelled, n); }
  bool WaitFor(int* count, int n) {
    absl::MutexLock lock(&mu);
    auto enough = [count, n] { return *count >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
  }
};

TEST(BulkCallTest, AnswersComeBackAndConnectionsAreReused) {
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
TEST(BulkCallTest, BlockingCallReadsItsAnswerOnTheCallersThread) {
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
// alive; one that beat and then hung up ran it (final too).
TEST(BulkCallTest, SilentServerFailsTheCallBusyOneBeats) {
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
  options.beat_interval = absl::Milliseconds(100);
  auto server = StartServer(options);
  server->ServeCall(
      "Busy", [](std::string request, absl::Time, CancellationManager*, BulkServer::CallDone done) {
        std::thread([request, done = std::move(done)] {
          absl::SleepFor(absl::Seconds(1));  // twice the client's silence
          done(absl::OkStatus(), BulkServer::Bytes(request));
        }).detach();
      });
  ServeReverse(*server);
  for (const bool blocking : {false, true}) {
    BulkClient client("127.0.0.1");
    client.set_peer_silence(absl::Milliseconds(500));
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

TEST(BulkCallTest, LargeRequestsAndAnswersArriveIntact) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  std::string request(6 << 20, '\0');  // past both the inline send and the inline read
  for (size_t i = 0; i < request.size(); ++i) request[i] = static_cast<char>(i * 7 % 251);
  const auto result = Call(client, server->port(), "Reverse", request);
  ASSERT_TRUE(result->status.ok()) << result->status;
  EXPECT_EQ(result->answer, std::string(request.rbegin(), request.rend()));
}

TEST(BulkCallTest, HandlerErrorsCrossWithCodeMessageAndPayload) {
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

TEST(BulkCallTest, UnknownMethodIsUnimplementedAndGoesOverGrpc) {
  auto server = StartServer();
  ServeReverse(*server);
  BulkClient client("127.0.0.1");
  const auto result = Call(client, server->port(), "Nope", "x");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnimplemented) << result->status;
  EXPECT_NE(result->status.message().find("Nope"), std::string::npos) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kOverGrpc);
  EXPECT_TRUE(Call(client, server->port(), "Reverse", "ab")->status.ok());
}

TEST(BulkCallTest, TokenIsRequiredWhenTheServerHasOne) {
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

TEST(BulkCallTest, RequestOverTheLimitIsResourceExhaustedUnread) {
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

TEST(BulkCallTest, UnansweredCallIsDeadlineExceededAndCancelled) {
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

TEST(BulkCallTest, ServerStoppingWhileACallWaitsCancelsAndEndsIt) {
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

// Serves `method` with one call whose answer the test gives later, by
// `kept`; the handler ignores its cancellation.
struct HeldCall {
  absl::Notification asked;
  BulkServer::CallDone kept;
  void Serve(BulkServer& server, const std::string& method) {
    server.ServeCall(
        method, [this](std::string, absl::Time, CancellationManager*, BulkServer::CallDone done) {
          kept = std::move(done);
          asked.Notify();
        });
  }
  // Calls `method` with `client` into `result`, and waits (bounded) until
  // the handler has it.
  void Ask(BulkClient& client, BulkServer& server, const std::string& method, CallResult* result) {
    client.CallAsync(server.port(), "", method, "x", Soon(), result->Callback());
    ASSERT_TRUE(asked.WaitForNotificationWithTimeout(absl::Seconds(10)));
  }
};

// A handler that ignores its cancellation: its client is answered Aborted
// once the grace has passed, and Stop returns only once the handler has
// answered (nothing of the call runs on after it).
TEST(BulkCallTest, StopAnswersByItsGraceAndWaitsForTheHandler) {
  BulkServer::Options options;
  options.stop_grace = absl::Milliseconds(300);
  auto server = StartServer(options);
  HeldCall held;
  held.Serve(*server, "Deaf");
  BulkClient client("127.0.0.1");
  CallResult result;
  ASSERT_NO_FATAL_FAILURE(held.Ask(client, *server, "Deaf", &result));
  absl::Notification stopped;
  std::thread stopper([&] {
    server->Stop();
    stopped.Notify();
  });
  ASSERT_TRUE(result.Wait());
  EXPECT_TRUE(absl::IsAborted(result.status)) << result.status;
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
  EXPECT_FALSE(stopped.HasBeenNotified());  // the handler has not answered
  held.kept(absl::OkStatus(), BulkServer::Bytes("late"));
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(10)));
  stopper.join();
}

// Stop keeps a connection whose call waits for its handler open past its
// first half second: the answer arrives, rather than a hang-up the client
// would take for a call never run (and send again elsewhere).
TEST(BulkCallTest, StopLetsASlowHandlerAnswerWithinTheGrace) {
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
TEST(BulkCallTest, StopWhileAHandlerStartsNeverHangsUpOnIt) {
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

TEST(BulkCallTest, ClientHangingUpCancelsItsCall) {
  auto server = StartServer();
  NeverAnswered never;
  never.Serve(*server, "Never");
  {
    BulkClient client("127.0.0.1");
    CallResult result;
    client.CallAsync(server->port(), "", "Never", "x", Soon(), result.Callback());
    ASSERT_TRUE(never.WaitTaken(1));
  }  // the client closes its connection
  EXPECT_TRUE(never.WaitCancelled(1));
}

TEST(BulkCallTest, AnswerIsMadeOnTheConnectionsThreadAndMayFail) {
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

TEST(BulkCallTest, HandlersUnimplementedIsFinalNotAFallback) {
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

TEST(BulkCallTest, RequestForAnotherTaskIsRefusedUnread) {
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

TEST(BulkCallTest, ClientDestroyedWhileCallsWaitCancelsEachOnce) {
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

TEST(BulkCallTest, StoppedServerIsRefusedNotAHang) {
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

TEST(BulkCallTest, UnresolvableHostIsUnreachable) {
  BulkClient client("no-such-host.invalid");
  const auto result = Call(client, 1, "Reverse", "ab");
  EXPECT_EQ(result->status.code(), absl::StatusCode::kUnavailable) << result->status;
  EXPECT_EQ(result->fallback, BulkClient::Fallback::kPortUnreachable);
}

TEST(BulkCallTest, ManyWaitingCallsAnsweredInAnyOrder) {
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
    mu.AwaitWithTimeout(absl::Condition(+[](std::map<std::string, BulkServer::CallDone>* h) {
                          return h->size() == kCalls;
                        }, &held),
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

TEST(BulkCallTest, GarbageCallHeaderIsDroppedAndTheServerKeepsServing) {
  auto server = StartServer();
  ServeReverse(*server);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(server->port());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
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

}  // namespace
}  // namespace tensorgrid

// ---- chunks read in place ------------------------------------------------------

namespace tensorgrid {
namespace {

// Reads one direct RecvBuf request from `fd`; returns its flags.
uint32_t ReadRecvBufRequest(int fd) {
  char fixed[4 + 4 + 4 + 4 + 4 + 8];
  EXPECT_EQ(recv(fd, fixed, sizeof(fixed), MSG_WAITALL), static_cast<ssize_t>(sizeof(fixed)));
  EXPECT_EQ(std::string(fixed, 4), "TGR4");
  auto u32 = [&](int at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(fixed[at + i])) << (8 * i);
    return v;
  };
  std::string rest(u32(4) + u32(8) + u32(12), '\0');  // token, addressee, key
  EXPECT_EQ(recv(fd, rest.data(), rest.size(), MSG_WAITALL), static_cast<ssize_t>(rest.size()));
  return u32(16);
}

void Put(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Whether this process may use process_vm_readv at all (a seccomp profile
// can forbid it; the client then takes every chunk from the connection).
bool CanReadProcessMemory() {
  char from[8] = "canread", to[8] = {};
  iovec local{to, sizeof(to)}, remote{from, sizeof(from)};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof(from);
}

TEST(BulkInPlaceTest, LargeChunksFromThisMachineArriveIntact) {
  const bool in_place_possible = CanReadProcessMemory();
  if (!in_place_possible) std::cerr << "process_vm_readv is not allowed here: every chunk comes on the connection\n";
  // A loopback client may copy chunks of 64 KiB or more straight out of the
  // server's memory; smaller ones come on the connection. Both must land.
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  int64_t in_place = 0;
  for (int64_t n : {int64_t{1000}, int64_t{1} << 14, int64_t{1} << 20}) {
    const std::string key = absl::StrCat("k", n);
    const Tensor chunk = Ramp(n);
    source.Release(key, chunk);
    const Tensor into(DT_FLOAT, TensorShape({n}));
    Tensor out;
    const auto result = Ask(client, server->port(), key, &out, &into);
    ASSERT_TRUE(result->status.ok()) << n << ": " << result->status;
    EXPECT_TRUE(out.SharesBufferWith(into));
    EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0) << n;
    // Chunks of 64 KiB (16384 floats) or more are copied in place.
    if (n * 4 >= (64 << 10) && in_place_possible) ++in_place;
    EXPECT_EQ(server->in_place_reads(), in_place) << n;
  }
}

TEST(BulkInPlaceTest, ServerSendsTheBytesWhenTheClientCannotCopy) {
  // A scripted client asks for an in-place answer, then says 'S'.
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  const Tensor chunk = Ramp(1 << 16);  // 256 KiB
  source.Release("k", chunk);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(server->port());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::string request = "TGR4";
  Put(&request, 0, 4);      // no token
  Put(&request, 0, 4);      // any addressee
  Put(&request, 1, 4);      // key "k"
  Put(&request, 1, 4);      // may read in place
  Put(&request, 10000, 8);  // wait 10 s
  request += "k";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  // kInPlaceAnswer, dtype, rank 1, the dimension, the length, pid, address,
  // nonce address, nonce.
  char answer[1 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 16];
  ASSERT_EQ(recv(fd, answer, sizeof(answer), MSG_WAITALL), static_cast<ssize_t>(sizeof(answer)));
  EXPECT_EQ(answer[0], 5);
  const char verdict = 'S';
  ASSERT_EQ(send(fd, &verdict, 1, MSG_NOSIGNAL), 1);
  std::vector<char> bytes(chunk.TotalBytes());
  ASSERT_EQ(recv(fd, bytes.data(), bytes.size(), MSG_WAITALL), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(std::memcmp(bytes.data(), chunk.raw_data(), bytes.size()), 0);
  EXPECT_EQ(server->in_place_reads(), 0);
  close(fd);
}

TEST(BulkInPlaceTest, InPlaceAnswerThatWasNotAskedForIsDataLoss) {
  // A client that may not read in place must not follow an address a server
  // hands it anyway.
  setenv("TG_BULK_IN_PLACE", "0", 1);
  BulkClient client("127.0.0.1");
  unsetenv("TG_BULK_IN_PLACE");
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  const Tensor chunk = Ramp(1 << 16);
  std::thread peer([&] {
    const int fd = accept(listener, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ReadRecvBufRequest(fd) & 1u, 0u);
    std::string answer(1, '\5');
    Put(&answer, DT_FLOAT, 4);
    Put(&answer, 1, 4);
    Put(&answer, chunk.NumElements(), 8);
    Put(&answer, chunk.TotalBytes(), 8);
    Put(&answer, static_cast<uint64_t>(getpid()), 8);
    Put(&answer, reinterpret_cast<uintptr_t>(chunk.raw_data()), 8);
    Put(&answer, reinterpret_cast<uintptr_t>(chunk.raw_data()), 8);
    answer.append(static_cast<const char*>(chunk.raw_data()), 16);  // a "nonce" that matches
    send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    char byte;
    EXPECT_LE(recv(fd, &byte, 1, 0), 0);  // hung up, no verdict
    close(fd);
  });
  Tensor out;
  const auto result = Ask(client, port, "k", &out);
  EXPECT_EQ(result->status.code(), absl::StatusCode::kDataLoss) << result->status;
  peer.join();
  close(listener);
}

TEST(BulkInPlaceTest, ChunkThatCannotBeReadInPlaceComesOnTheConnection) {
  // A scripted server answers in place with a process that is not itself
  // (a wrong nonce): the client must say so ('S'), take the bytes from the
  // connection, and not ask for in-place reads again.
  int port = 0;
  const int listener = ListenOnLoopback(&port);
  ASSERT_GE(listener, 0);
  const Tensor chunk = Ramp(1 << 16);  // 256 KiB
  std::thread peer([&] {
    const int fd = accept(listener, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ReadRecvBufRequest(fd) & 1u, 1u);  // may read in place
    std::string answer(1, '\5');
    Put(&answer, DT_FLOAT, 4);
    Put(&answer, 1, 4);
    Put(&answer, chunk.NumElements(), 8);
    Put(&answer, chunk.TotalBytes(), 8);
    Put(&answer, static_cast<uint64_t>(getpid()), 8);
    Put(&answer, reinterpret_cast<uintptr_t>(chunk.raw_data()), 8);
    static const char kNonce[16] = "the real nonce.";
    Put(&answer, reinterpret_cast<uintptr_t>(kNonce), 8);
    answer += std::string(16, 'x');  // not what lies there
    ASSERT_EQ(send(fd, answer.data(), answer.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(answer.size()));
    char verdict = 0;
    ASSERT_EQ(recv(fd, &verdict, 1, MSG_WAITALL), 1);
    EXPECT_EQ(verdict, 'S');
    ASSERT_EQ(send(fd, chunk.raw_data(), chunk.TotalBytes(), MSG_NOSIGNAL),
              static_cast<ssize_t>(chunk.TotalBytes()));
    // The next request, on the same connection, no longer asks.
    EXPECT_EQ(ReadRecvBufRequest(fd) & 1u, 0u);
    std::string error(1, '\2');
    Put(&error, static_cast<uint64_t>(absl::StatusCode::kAborted), 4);
    Put(&error, 4 + 4, 4);
    Put(&error, 4, 4);
    error += "done";
    send(fd, error.data(), error.size(), MSG_NOSIGNAL);
    close(fd);
  });
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto first = Ask(client, port, "k", &out);
  ASSERT_TRUE(first->status.ok()) << first->status;
  ASSERT_EQ(out.TotalBytes(), chunk.TotalBytes());
  EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0);
  const auto second = Ask(client, port, "k2", &out);
  EXPECT_EQ(second->status.code(), absl::StatusCode::kAborted) << second->status;
  peer.join();
  close(listener);
}

}  // namespace
}  // namespace tensorgrid
