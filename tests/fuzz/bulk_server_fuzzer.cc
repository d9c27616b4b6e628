// The bulk port's server side (distributed/transport/bulk_server.h): a
// BulkServer with a handler for every kind of direct request reads a fuzzed
// byte stream over a socketpair, as from a connection to its port (every
// frame parser on the way: request magics, TensorRequest and CallRequest
// headers, token, addressee, key and method, a call's bytes, an in-place
// verdict). Whatever comes, the server answers or hangs up within the
// input's time limit: no crash, no hang, no leaked memory, descriptor or
// thread.
//
// Input: one byte (bit 0: the server requires the token "fuzz-token"), then
// what the client sends; then the client stops sending and reads until the
// server hangs up.
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "core/framework/tensor.h"
#include "distributed/transport/bulk_server.h"
#include "distributed/transport/in_place.h"
#include "distributed/transport/socket.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

constexpr char kTask[] = "/job:worker/replica:0/task:0";
// Well inside libFuzzer's -timeout (scripts/fuzz.sh: 10 s).
constexpr absl::Duration kExchangeLimit = absl::Seconds(8);

// The tensor a key names: small, large enough to be read in place, strings,
// none (a handler that answers OK without a tensor), or an error.
absl::Status Lookup(const std::string& key, Tensor* out) {
  if (absl::StartsWith(key, "chunk")) {
    *out = Tensor(DT_FLOAT, TensorShape({4}));
    for (int i = 0; i < 4; ++i) out->data<float>()[i] = static_cast<float>(i);
  } else if (absl::StartsWith(key, "big")) {
    *out = Tensor(DT_UINT8, TensorShape({static_cast<int64_t>(bulk::kInPlaceMinBytes)}));
    std::memset(out->raw_data(), 7, out->TotalBytes());
  } else if (absl::StartsWith(key, "strings")) {
    *out = Tensor(DT_STRING, TensorShape({2}));
    out->data<std::string>()[0] = "a";
    out->data<std::string>()[1] = key;
  } else if (absl::StartsWith(key, "none")) {
    *out = Tensor();
  } else if (absl::StartsWith(key, "fail")) {
    return absl::FailedPreconditionError(absl::StrCat("no tensor for '", key, "'"));
  } else {
    return absl::NotFoundError(absl::StrCat("unknown key '", key, "'"));
  }
  return absl::OkStatus();
}

// A server whose handlers all answer at once.
std::unique_ptr<BulkServer> StartServer(const std::string& token) {
  BulkServer::Options options;
  options.token = token;
  options.task = kTask;
  options.max_call_bytes = 1 << 20;
  auto server = BulkServer::Start("127.0.0.1", options);
  if (!server.ok()) fuzz::Fail(server.status().ToString());
  (*server)->ServeRecvBuf(
      [](const std::string& key, absl::Time, Tensor* out, CancellationManager*,
         StatusCallback done) {
        done(Lookup(key, out));
      });
  (*server)->ServeRecvTensor(
      [](int64_t step_id, const std::string& key, absl::Time, Tensor* out, CancellationManager*,
         StatusCallback done) {
        done(step_id < 0 ? absl::AbortedError("step is over") : Lookup(key, out));
      });
  (*server)->ServeCall("Echo", [](std::string request, absl::Time, CancellationManager*,
                                  BulkServer::CallDone done) {
    done(absl::OkStatus(), BulkServer::Bytes(std::move(request)));
  });
  (*server)->ServeCall("Fail", [](std::string, absl::Time, CancellationManager*,
                                  BulkServer::CallDone done) {
    done(absl::InvalidArgumentError("the request is wrong"), nullptr);
  });
  (*server)->ServeCall("Unencodable", [](std::string, absl::Time, CancellationManager*,
                                         BulkServer::CallDone done) {
    done(absl::OkStatus(), [] { return absl::StatusOr<std::string>(absl::InternalError("no")); });
  });
  return std::move(server).value();
}

BulkServer* servers[2];

// The sockets this process holds (the servers' two listeners, and any
// connection not yet closed), listed for a report. (Other descriptors come
// and go with the sanitizers' own helpers.)
std::vector<std::string> OpenSockets() {
  std::vector<std::string> sockets;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (const dirent* entry = readdir(dir)) {
      char target[256] = {0};
      const std::string link = absl::StrCat("/proc/self/fd/", entry->d_name);
      if (readlink(link.c_str(), target, sizeof(target) - 1) > 0 &&
          absl::StartsWith(target, "socket:")) {
        sockets.push_back(absl::StrCat(entry->d_name, "->", target));
      }
    }
    closedir(dir);
  }
  return sockets;
}

int CountThreads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Threads:")) return std::atoi(line.c_str() + 8);
  }
  return 0;
}

// Every so many inputs: once their connections are done, the process holds
// no more sockets or threads than after the first input (when libFuzzer has
// started its own threads).
void CheckNothingLeaks() {
  static int inputs = 0;
  static size_t baseline_sockets = 0;
  static int baseline_threads = 0;
  if (inputs++ == 0) {
    absl::SleepFor(absl::Milliseconds(200));  // the first connection's thread ends
    baseline_sockets = OpenSockets().size();
    baseline_threads = CountThreads();
  }
  if (inputs % 512 != 0) return;
  const absl::Time until = absl::Now() + absl::Seconds(5);
  while (OpenSockets().size() > baseline_sockets || CountThreads() > baseline_threads) {
    if (absl::Now() > until) {
      fuzz::Fail(absl::StrCat("leak: sockets ", absl::StrJoin(OpenSockets(), " "), " (",
                              baseline_sockets, " at first), ", CountThreads(), " threads (",
                              baseline_threads, ")"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

// Once the server has hung up, waits until its connection thread is done
// with everything it allocated, so that no buffer of a thread still ending
// is counted as leaked by the leak check that follows the input.
void AwaitConnectionsServed(const BulkServer& server) {
  const absl::Time until = absl::Now() + kExchangeLimit;
  while (server.connections() > 0) {
    if (absl::Now() > until) fuzz::Fail("a connection thread did not end after the hang-up");
    absl::SleepFor(absl::Microseconds(20));
  }
}

// Sends `stream` and reads whatever comes back until the server hangs up.
void Exchange(BulkServer& server, absl::string_view stream) {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, ends) != 0) {
    fuzz::Fail("socketpair");
  }
  bulk::UniqueFd client(ends[0]);
  if (absl::Status s = server.ServeConnection(ends[1]); !s.ok()) fuzz::Fail(s.ToString());
  const absl::Time limit = absl::Now() + kExchangeLimit;
  bool sending = true;
  char sink[1 << 16];
  for (;;) {
    if (sending && stream.empty()) {
      shutdown(client.get(), SHUT_WR);
      sending = false;
    }
    pollfd p{client.get(), static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(limit - absl::Now()));
    if (ms <= 0 || poll(&p, 1, ms) == 0) {
      fuzz::Fail("the bulk server neither answered nor hung up in time");
    }
    if (p.revents & POLLIN || p.revents & POLLHUP) {
      const ssize_t got = recv(client.get(), sink, sizeof(sink), 0);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) break;  // hung up
    }
    if (sending && (p.revents & POLLOUT)) {
      const ssize_t sent = send(client.get(), stream.data(), stream.size(), MSG_NOSIGNAL);
      if (sent > 0) {
        stream.remove_prefix(static_cast<size_t>(sent));
      } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
        sending = false;  // the server stopped reading: what it says next is all
      }
    }
  }
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace tensorgrid;
  fuzz::Init();
  servers[0] = StartServer("").release();
  servers[1] = StartServer("fuzz-token").release();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensorgrid;
  fuzz::Input in(data, size);
  const uint8_t flags = in.Byte();
  Exchange(*servers[flags & 1], in.Rest());
  AwaitConnectionsServed(*servers[flags & 1]);
  CheckNothingLeaks();
  return 0;
}
