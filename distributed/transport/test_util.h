// What the bulk port's tests share: a fresh server, scripted handlers
// (chunks released on cue, calls never answered or held), and callbacks
// waited for with a bound.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_TEST_UTIL_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_TEST_UTIL_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/framework/tensor.h"
#include "core/platform/status.h"
#include "distributed/transport/bulk_client.h"
#include "distributed/transport/bulk_server.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace bulk_test {

inline Tensor Ramp(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i % 4099);
  return t;
}

// A listening loopback socket (its port in `*port`), or -1.
inline int ListenOnLoopback(int* port) {
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

// A socket connected to `port` on the loopback (-1 when it cannot be), for
// tests that speak the wire format byte by byte.
inline int ConnectToLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline absl::Time Soon() { return absl::Now() + absl::Seconds(30); }

// A server on loopback. Clients of the test reach it over its socket, as
// from another process, unless `in_process` (local_ports.h).
inline std::unique_ptr<BulkServer> StartServer(BulkServer::Options options = {},
                                               bool in_process = false) {
  options.serve_in_process = in_process;
  absl::StatusOr<std::unique_ptr<BulkServer>> server = BulkServer::Start("127.0.0.1", options);
  EXPECT_TRUE(server.ok()) << server.status();
  return *std::move(server);
}

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
inline std::unique_ptr<RecvBufResult> Ask(BulkClient& client, int port, const std::string& key,
                                          Tensor* out, const Tensor* into = nullptr,
                                          const std::string& token = "",
                                          absl::Time deadline = Soon()) {
  auto result = std::make_unique<RecvBufResult>();
  client.RecvBufAsync(port, token, key, deadline, into, out, result->Callback());
  EXPECT_TRUE(result->Wait());
  return result;
}

// Chunks by key, answered when Release(key) is called (or at once if
// released before being asked for). A request the server cancels is
// withdrawn (answered Cancelled), as a worker's is. What the handler and its
// withdrawals use is shared, so the source may go before the server.
class ChunkSource {
 public:
  BulkServer::RecvBufFn Fn() {
    return [state = state_](const std::string& key, absl::Time, Tensor* out,
                            CancellationManager* cancellation, StatusCallback done) {
      absl::MutexLock lock(&state->mu);
      state->asked[key] = {out, std::move(done)};
      CancellationManager::Token token;
      cancellation->RegisterCallback(&token, [state, key] { state->Withdraw(key); });
      state->MaybeAnswer(key);
    };
  }
  void Release(const std::string& key, absl::StatusOr<Tensor> value) {
    absl::MutexLock lock(&state_->mu);
    state_->released[key] = std::move(value);
    state_->MaybeAnswer(key);
  }
  // Requests withdrawn so far.
  int withdrawn() {
    absl::MutexLock lock(&state_->mu);
    return state_->withdrawn;
  }

 private:
  struct State {
    void MaybeAnswer(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      auto a = asked.find(key);
      auto r = released.find(key);
      if (a == asked.end() || r == released.end()) return;
      if (r->second.ok()) *a->second.first = *r->second;
      a->second.second(r->second.status());
      asked.erase(a);
    }
    void Withdraw(const std::string& key) {
      absl::MutexLock lock(&mu);
      auto a = asked.find(key);
      if (a == asked.end()) return;
      a->second.second(errors::Cancelled("withdrawn"));
      asked.erase(a);
      ++withdrawn;
    }
    absl::Mutex mu;
    int withdrawn ABSL_GUARDED_BY(mu) = 0;
    std::map<std::string, std::pair<Tensor*, StatusCallback>> asked ABSL_GUARDED_BY(mu);
    std::map<std::string, absl::StatusOr<Tensor>> released ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<State> state_ = std::make_shared<State>();
};

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

inline std::unique_ptr<CallResult> Call(BulkClient& client, int port, const std::string& method,
                                        std::string request, const std::string& token = "",
                                        absl::Time deadline = Soon()) {
  auto result = std::make_unique<CallResult>();
  client.CallAsync(port, token, method, std::move(request), deadline, result->Callback());
  EXPECT_TRUE(result->Wait());
  return result;
}

// Answers "Reverse" calls with the request reversed, at once.
inline void ServeReverse(BulkServer& server) {
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

// Stops `server` while `held`'s handler keeps `client`'s call to `method`
// unanswered. `*result` gets what the client is answered (by Stop's grace);
// `*returned_early` says whether Stop had returned by then (it must wait for
// the handler). Then the handler answers `late`, and `*returned_after` says
// whether Stop returned within 10 s of that.
inline void StopWhileTheHandlerHoldsACall(BulkServer& server, BulkClient& client, HeldCall& held,
                                          const std::string& method, BulkServer::Answer late,
                                          CallResult* result, bool* returned_early,
                                          bool* returned_after) {
  ASSERT_NO_FATAL_FAILURE(held.Ask(client, server, method, result));
  absl::Notification stopped;
  std::thread stopper([&] {
    server.Stop();
    stopped.Notify();
  });
  const bool answered = result->Wait();
  *returned_early = stopped.HasBeenNotified();
  held.kept(absl::OkStatus(), std::move(late));
  *returned_after = stopped.WaitForNotificationWithTimeout(absl::Seconds(10));
  stopper.join();
  ASSERT_TRUE(answered);
}

}  // namespace bulk_test
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_TEST_UTIL_H_
