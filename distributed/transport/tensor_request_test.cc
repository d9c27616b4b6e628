// Direct tensor requests: RecvBuf (a collective's chunk) and RecvTensor (a
// step's tensor), waited for by the server and sent.
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
#include "distributed/transport/frames.h"
#include "distributed/transport/test_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {
namespace {

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
  const auto result = Ask(client, server->port(), "never", &out, nullptr, "",
                          absl::Now() + absl::Milliseconds(200));
  EXPECT_EQ(result->status.code(), absl::StatusCode::kDeadlineExceeded) << result->status;
  EXPECT_NE(result->status.message().find("never"), std::string::npos) << result->status;
}

// The request may wait an hour: that it ends within Wait's 30 s once Stop
// returns (and Stop returns at all) is Stop's doing, not its deadline's.
TEST(BulkRecvBufTest, StoppingTheServerEndsAWaitingRequest) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  Tensor out;
  RecvBufResult result;
  client.RecvBufAsync(server->port(), "", "never", absl::Now() + absl::Hours(1), nullptr, &out,
                      result.Callback());
  absl::SleepFor(absl::Milliseconds(50));
  server->Stop();
  ASSERT_TRUE(result.Wait());
  EXPECT_FALSE(result.status.ok());
}

// A requester that hangs up is withdrawn at once: it pins nothing for the
// wait it asked for, and the key is free for the next request.
TEST(BulkRecvBufTest, ARequestWhoseClientHangsUpIsWithdrawnAndItsKeyFreed) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  bulk::TensorRequest abandoned;
  abandoned.key = "k";
  abandoned.wait_ms = 3600 * 1000;  // an hour
  const int fd = ConnectToLoopback(server->port());
  ASSERT_GE(fd, 0);
  const std::string bytes = abandoned.Encode();
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  absl::SleepFor(absl::Milliseconds(50));  // asked (a later hang-up is seen within ~100 ms)
  close(fd);
  const absl::Time until = absl::Now() + absl::Seconds(30);
  while (source.withdrawn() < 1 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(source.withdrawn(), 1);
  source.Release("k", Ramp(8));
  BulkClient client("127.0.0.1");
  Tensor out;
  const auto result = Ask(client, server->port(), "k", &out);
  ASSERT_TRUE(result->status.ok()) << result->status;
  EXPECT_EQ(out.NumElements(), 8);
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

// Chunks put after their requests arrived, small and in-place sized, one
// connection after another: each answer whole, each counted once.
TEST(BulkRecvBufTest, ChunksPutAfterTheirRequestsArriveWholeOnePerFetch) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());
  BulkClient client("127.0.0.1");
  int64_t fetches = 0;
  for (const int64_t size : {1, 1000, 16384, 1, 16384}) {
    Tensor out;
    RecvBufResult result;
    const std::string key = absl::StrCat("small/", fetches);
    client.RecvBufAsync(server->port(), "", key, Soon(), nullptr, &out, result.Callback());
    absl::SleepFor(absl::Milliseconds(20));  // asked before it exists: the server waits
    const Tensor chunk = Ramp(size);
    source.Release(key, chunk);
    ASSERT_TRUE(result.Wait()) << size;
    ASSERT_TRUE(result.status.ok()) << size << ": " << result.status;
    ASSERT_EQ(out.NumElements(), size);
    EXPECT_EQ(std::memcmp(out.raw_data(), chunk.raw_data(), chunk.TotalBytes()), 0) << size;
    EXPECT_EQ(server->fetches(), ++fetches);
  }
}

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
      [&](int64_t step_id, const std::string& key, absl::Time, Tensor* out, CancellationManager*,
          StatusCallback done) {
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
  server->ServeRecvTensor([](int64_t, const std::string&, absl::Time, Tensor*,
                             CancellationManager*, StatusCallback) {});
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

// RecvTensors: several keys of a step in one request, each answered as
// its tensor comes.
struct ItemsResult {
  absl::Mutex mu;
  std::vector<std::pair<int, absl::Status>> items ABSL_GUARDED_BY(mu);  // as they came
  absl::Notification done;
  absl::Status status;
  BulkClient::Fallback fallback = BulkClient::Fallback::kNone;
  BulkClient::ItemCallback Item() {
    return [this](int i, absl::Status s) {
      absl::MutexLock lock(&mu);
      items.emplace_back(i, std::move(s));
    };
  }
  BulkClient::FetchCallback Done() {
    return [this](absl::Status s, BulkClient::Fallback f) {
      status = std::move(s);
      fallback = f;
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(30)); }
  // Waits until `n` items came.
  bool WaitForItems(size_t n) {
    absl::MutexLock lock(&mu);
    wanted = n;
    return mu.AwaitWithTimeout(absl::Condition(this, &ItemsResult::Enough), absl::Seconds(30));
  }
  size_t wanted ABSL_GUARDED_BY(mu) = 0;
  bool Enough() const ABSL_SHARED_LOCKS_REQUIRED(mu) { return items.size() >= wanted; }
  std::vector<std::pair<int, absl::Status>> Items() {
    absl::MutexLock lock(&mu);
    return items;
  }
};

// A RecvTensor handler answering from `source` (the step is not looked at).
BulkServer::RecvTensorFn FromSource(ChunkSource& source) {
  return [fn = source.Fn()](int64_t, const std::string& key, absl::Time deadline, Tensor* out,
                            CancellationManager* cancellation, StatusCallback done) {
    fn(key, deadline, out, cancellation, std::move(done));
  };
}

TEST(BulkRecvTensorsTest, EachTensorArrivesAsItIsSentAndAKeysErrorIsItsOwn) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvTensor(FromSource(source));
  BulkClient client("127.0.0.1");
  const std::vector<std::string> keys = {"a", "b", "c"};
  std::vector<Tensor> outs(keys.size());
  ItemsResult result;
  client.RecvTensorsAsync(server->port(), "", 5, keys, Soon(), &outs, result.Item(),
                          result.Done());
  source.Release("c", Ramp(4));
  ASSERT_TRUE(result.WaitForItems(1));
  EXPECT_EQ(result.Items()[0].first, 2);
  EXPECT_TRUE(result.Items()[0].second.ok()) << result.Items()[0].second;
  EXPECT_EQ(std::memcmp(outs[2].raw_data(), Ramp(4).raw_data(), 16), 0);
  EXPECT_FALSE(result.done.HasBeenNotified());
  const Tensor big = Ramp(1 << 16);  // 256 KiB: in place where allowed
  source.Release("b", errors::Aborted("b's step failed"));
  source.Release("a", big);
  ASSERT_TRUE(result.Wait());
  EXPECT_TRUE(result.status.ok()) << result.status;
  const auto items = result.Items();
  ASSERT_EQ(items.size(), 3u);
  for (const auto& [i, status] : items) {
    if (i == 1) {
      EXPECT_TRUE(absl::IsAborted(status)) << status;
      EXPECT_EQ(status.message(), "b's step failed");
    } else {
      EXPECT_TRUE(status.ok()) << i << ": " << status;
    }
  }
  ASSERT_EQ(outs[0].NumElements(), big.NumElements());
  EXPECT_EQ(std::memcmp(outs[0].raw_data(), big.raw_data(), big.TotalBytes()), 0);
  EXPECT_EQ(server->fetches(), 2);
  // The connection is whole again: a plain RecvTensor goes on it.
  source.Release("d", Ramp(2));
  RecvBufResult next;
  Tensor out;
  client.RecvTensorAsync(server->port(), "", 6, "d", Soon(), &out, next.Callback());
  ASSERT_TRUE(next.Wait());
  EXPECT_TRUE(next.status.ok()) << next.status;
  EXPECT_EQ(out.NumElements(), 2);
}

TEST(BulkRecvTensorsTest, ManyKeysOfEveryKindArriveInTheOrderTheyAreSent) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvTensor(FromSource(source));
  BulkClient client("127.0.0.1");
  constexpr int kKeys = 200;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(absl::StrCat("k", i));
  std::vector<Tensor> outs(keys.size());
  ItemsResult result;
  client.RecvTensorsAsync(server->port(), "", 1, keys, Soon(), &outs, result.Item(),
                          result.Done());
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.data<std::string>()[0] = "one";
  strings.data<std::string>()[1] = std::string(100, 'x');
  // The last key is asked for last: once it came, the server waits for all.
  source.Release(keys[kKeys - 1], Ramp(kKeys));
  ASSERT_TRUE(result.WaitForItems(1));
  for (int i = kKeys - 2; i >= 0; --i) {
    source.Release(keys[i], i == 7 ? strings : Ramp(i + 1));
    if (i % 50 == 0) {
      ASSERT_TRUE(result.WaitForItems(kKeys - i));  // some while it waits
    }
  }
  ASSERT_TRUE(result.Wait());
  EXPECT_TRUE(result.status.ok()) << result.status;
  const auto items = result.Items();
  ASSERT_EQ(items.size(), static_cast<size_t>(kKeys));
  // Released last first, so that is the order of the answers.
  for (int n = 0; n < kKeys; ++n) EXPECT_EQ(items[n].first, kKeys - 1 - n);
  for (int i = 0; i < kKeys; ++i) {
    if (i == 7) {
      ASSERT_EQ(outs[i].dtype(), DT_STRING);
      EXPECT_EQ(outs[i].data<std::string>()[1], std::string(100, 'x'));
    } else {
      ASSERT_EQ(outs[i].NumElements(), i + 1) << i;
      EXPECT_EQ(outs[i].data<float>()[i], Ramp(i + 1).data<float>()[i]);
    }
  }
}

TEST(BulkRecvTensorsTest, KeysNotSentByTheDeadlineAreDeadlineExceededEachNamingItsKey) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvTensor(FromSource(source));
  source.Release("here", Ramp(3));
  BulkClient client("127.0.0.1");
  const std::vector<std::string> keys = {"here", "never", "nor"};
  std::vector<Tensor> outs(keys.size());
  ItemsResult result;
  client.RecvTensorsAsync(server->port(), "", 9, keys, absl::Now() + absl::Milliseconds(300),
                          &outs, result.Item(), result.Done());
  ASSERT_TRUE(result.Wait());
  EXPECT_TRUE(result.status.ok()) << result.status;  // every key was answered
  const auto items = result.Items();
  ASSERT_EQ(items.size(), 3u);
  for (const auto& [i, status] : items) {
    if (i == 0) {
      EXPECT_TRUE(status.ok()) << status;
      continue;
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_NE(status.message().find(absl::StrCat("RecvTensor of '", keys[i], "'")),
              std::string::npos)
        << status;
    EXPECT_NE(status.message().find("for step 9"), std::string::npos) << status;
  }
  EXPECT_EQ(source.withdrawn(), 2);  // the server gave them up
}

TEST(BulkRecvTensorsTest, StoppingTheServerAnswersTheKeysLeftAborted) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvTensor(FromSource(source));
  source.Release("a", Ramp(1));
  BulkClient client("127.0.0.1");
  const std::vector<std::string> keys = {"a", "b"};
  std::vector<Tensor> outs(keys.size());
  ItemsResult result;
  client.RecvTensorsAsync(server->port(), "", 2, keys, Soon(), &outs, result.Item(),
                          result.Done());
  ASSERT_TRUE(result.WaitForItems(1));
  server->Stop();
  ASSERT_TRUE(result.Wait());
  const auto items = result.Items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].first, 1);
  EXPECT_TRUE(absl::IsAborted(items[1].second)) << items[1].second;
  EXPECT_NE(items[1].second.message().find("the task is shutting down"), std::string::npos)
      << items[1].second;
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kNone);
}

TEST(BulkRecvTensorsTest, AClientGoingAwayWithdrawsTheKeysLeft) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvTensor(FromSource(source));
  ItemsResult result;
  std::vector<Tensor> outs(3);
  {
    BulkClient client("127.0.0.1");
    client.RecvTensorsAsync(server->port(), "", 3, {"x", "y", "z"}, Soon(), &outs,
                            result.Item(), result.Done());
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(result.Wait());
  EXPECT_TRUE(absl::IsCancelled(result.status)) << result.status;
  EXPECT_TRUE(result.Items().empty());
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (source.withdrawn() < 3 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(source.withdrawn(), 3);
}

TEST(BulkRecvTensorsTest, APortWithoutRecvTensorSendsThemOverGrpc) {
  auto server = StartServer();
  ChunkSource source;
  server->ServeRecvBuf(source.Fn());  // RecvBuf only
  BulkClient client("127.0.0.1");
  std::vector<Tensor> outs(2);
  ItemsResult result;
  client.RecvTensorsAsync(server->port(), "", 1, {"a", "b"}, Soon(), &outs, result.Item(),
                          result.Done());
  ASSERT_TRUE(result.Wait());
  EXPECT_EQ(result.status.code(), absl::StatusCode::kUnimplemented) << result.status;
  EXPECT_EQ(result.fallback, BulkClient::Fallback::kOverGrpc);
  EXPECT_TRUE(result.Items().empty());
}

TEST(BulkRecvTensorsTest, KeysOutOfRangeAreInvalidArgumentBeforeAnythingIsSent) {
  BulkClient client("127.0.0.1");
  for (const std::vector<std::string>& keys :
       {std::vector<std::string>{}, std::vector<std::string>{"a", ""},
        std::vector<std::string>{std::string(bulk::kMaxKeyBytes + 1, 'k')}}) {
    std::vector<Tensor> outs(keys.size());
    ItemsResult result;
    client.RecvTensorsAsync(1, "", 1, keys, Soon(), &outs, result.Item(), result.Done());
    ASSERT_TRUE(result.Wait());
    EXPECT_EQ(result.status.code(), absl::StatusCode::kInvalidArgument) << result.status;
  }
}

}  // namespace
}  // namespace bulk_test
}  // namespace tensorgrid
