#include "distributed/rpc/bulk_transfer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/framework/rendezvous.h"
#include "core/framework/tensor_codec.h"
#include "core/framework/types.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// A request: the magic, then the ticket id.
constexpr char kMagic[4] = {'T', 'G', 'B', '1'};
constexpr size_t kRequestBytes = sizeof(kMagic) + kBulkTicketBytes;
// A direct RecvBuf: the magic, then token length (4 bytes), addressee
// length (4), key length (4), flags (4), how long to wait in ms (8), all
// little-endian, then the token, the addressee and the key. The answer:
// kTensorAnswer, dtype (4), rank (4), each dimension (8), the content's
// length (8), the content; or an error (ErrorAnswer); or, when the request
// says kMayReadInPlace, kInPlaceAnswer: the same header without the
// content, then where the content lies in the server's memory (pid,
// address: 8 bytes each) and a proof of which process that is (the address
// of a 16-byte nonce made for this answer, 8, and the nonce). The client
// copies the content with process_vm_readv and says 'D' (done), which the
// server acknowledges with 'A' before it lets go of the chunk: only then
// does the client trust its copy. Or it says 'S' (send it after all: the
// content follows on the connection).
constexpr char kRecvBufMagic[4] = {'T', 'G', 'R', '4'};
constexpr size_t kRecvBufFixedBytes = 4 + 4 + 4 + 4 + 8;
// A direct RecvTensor: as a RecvBuf, with the step id (8) after the fixed
// part and the rendezvous key for the key. Its answer may also be
// kProtoAnswer, the length (8) and a serialized TensorProto: for a tensor
// of strings (or another dtype that is not plain bytes).
constexpr char kRecvTensorMagic[4] = {'T', 'G', 'V', '1'};
constexpr size_t kRecvTensorFixedBytes = kRecvBufFixedBytes + 8;
constexpr uint32_t kMayReadInPlace = 1;
// Chunks from this size on are read in place when the client may.
constexpr size_t kInPlaceMinBytes = 64 << 10;
constexpr size_t kNonceBytes = 16;
// A call: the magic, then token length (4), addressee length (4), method
// length (4), how long to wait in ms (8), the request's length (8), then the
// token, the addressee, the method and the request. The answer:
// kBytesAnswer, the length (8), the bytes; or an error.
//
// The addressee is the task the client means (empty: any). A server of
// another task refuses the request unread, so that a port a restarted task
// gave up and another task took is never served by the wrong one.
constexpr char kCallMagic[4] = {'T', 'G', 'C', '2'};
constexpr size_t kCallFixedBytes = 4 + 4 + 4 + 8 + 8;
constexpr uint32_t kMaxTokenBytes = 4096;
constexpr uint32_t kMaxKeyBytes = 4096;
constexpr uint32_t kMaxMethodBytes = 256;
constexpr uint32_t kMaxRank = 64;
// kNotServed is an error for a request the server refused unread (no such
// method, another task's port, at its limit): the client may send it over
// gRPC instead. kErrorAnswer is final: the request may have run.
enum : uint8_t {
  kTensorAnswer = 0,
  kErrorAnswer = 2,
  kBytesAnswer = 3,
  kNotServed = 4,
  kInPlaceAnswer = 5,
  kProtoAnswer = 6,
  // Not an answer: the server still works on the request. Sent every
  // kBeatInterval while a handler runs, so that a client can tell a task
  // that froze (a stopped process, whose kernel still answers TCP
  // keepalive) from one that is busy.
  kStillWorking = 7,
};

// The largest call answer a client accepts.
constexpr uint64_t kMaxAnswerBytes = (uint64_t{1} << 31) - 1;
// Answers up to this size that have fully arrived are read by the watcher
// itself; larger ones on the pool.
constexpr int kInlineAnswerBytes = 256 << 10;
// Requests up to this size go out on the caller's thread when a pooled
// connection takes them at once.
constexpr size_t kInlineRequestBytes = 64 << 10;

// An answer: a code, then the payload's length (little-endian), then the
// payload.
enum : uint8_t { kOk = 0, kUnknownTicket = 1 };
constexpr size_t kHeaderBytes = 1 + 8;
// Idle connections a client keeps per port, and its fetching threads.
constexpr size_t kMaxIdlePerPort = 8;
constexpr int kClientThreads = 8;
// How long a server's write may stall on a client that stopped reading.
constexpr int kServerSendTimeoutSeconds = 60;
// How often a server drops expired tickets when nothing else happens.
constexpr absl::Duration kSweepInterval = absl::Seconds(5);
// How long a server keeps a connection that sends no request.
constexpr absl::Duration kServerIdleTimeout = absl::Seconds(120);
// How long the rest of a request's header may take once its magic came: a
// peer that trickles bytes cannot hold a connection thread for long.
constexpr absl::Duration kHeaderTimeout = absl::Seconds(10);
// Past a direct RecvBuf's deadline, for the server's own DeadlineExceeded
// (naming the key) to arrive before the client gives up.
constexpr absl::Duration kRecvBufGrace = absl::Milliseconds(200);
// How long a server holds a chunk for a client copying it in place.
constexpr absl::Duration kInPlaceVerdictTimeout = absl::Seconds(60);
// The longest a connect may take, whatever the deadline.
constexpr absl::Duration kConnectTimeout = absl::Seconds(3);
// How long past a request's deadline the server waits for a handler that
// answers by that deadline itself (with its own DeadlineExceeded).
constexpr absl::Duration kHandlerGrace = absl::Seconds(2);

void PutLength(uint64_t n, char* out, int bytes = 8) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

uint64_t GetLength(const char* in, int bytes = 8) {
  uint64_t n = 0;
  for (int i = 0; i < bytes; ++i) {
    n |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  }
  return n;
}

void Append(std::string* out, uint64_t n, int bytes) {
  char buf[8];
  PutLength(n, buf, bytes);
  out->append(buf, bytes);
}

// Equal strings, in a time that does not depend on where they differ.
bool SameToken(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

void SetTimeout(int fd, int option, absl::Duration d) {
  d = std::max(d, absl::Milliseconds(1));
  const timeval tv = absl::ToTimeval(d);
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

// Reads exactly `n` bytes, each read waiting at most until `deadline` (none
// when infinite). Returns how many arrived before EOF or an error (errno
// tells which: 0 for EOF, EAGAIN for the deadline).
size_t ReadFull(int fd, char* buf, size_t n, absl::Time deadline = absl::InfiniteFuture()) {
  size_t got = 0;
  while (got < n) {
    ssize_t r;
    if (deadline == absl::InfiniteFuture()) {
      r = recv(fd, buf + got, n - got, 0);
    } else {
      // What is already here first, with no timeout to set (and past the
      // deadline too: an answer may have arrived in time while its reader
      // was busy); then wait, until the deadline.
      r = recv(fd, buf + got, n - got, MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const absl::Duration left = deadline - absl::Now();
        if (left <= absl::ZeroDuration()) break;  // errno stays EAGAIN
        pollfd p{fd, POLLIN, 0};
        const int ms = static_cast<int>(
            std::min(absl::ToInt64Milliseconds(left) + 1, absl::ToInt64Milliseconds(kBulkMaxWait)));
        if (poll(&p, 1, ms) < 0 && errno != EINTR) break;
        continue;  // read what came, or find the deadline passed
      }
    }
    if (r > 0) {
      got += static_cast<size_t>(r);
    } else if (r == 0) {
      errno = 0;
      break;
    } else if (errno != EINTR) {
      break;
    }
  }
  return got;
}

// Writes every byte of `iov` (it is consumed). False on an error (errno).
bool WriteFull(int fd, iovec* iov, int count) {
  while (count > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    while (count > 0 && static_cast<size_t>(w) >= iov->iov_len) {
      w -= static_cast<ssize_t>(iov->iov_len);
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + w;
      iov->iov_len -= static_cast<size_t>(w);
    }
  }
  return true;
}

void NoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// A peer whose host vanishes (no FIN) is noticed within about 20 s, as
// gRPC's keepalive does, instead of at the request's deadline.
void KeepAlive(int fd) {
  const int one = 1, idle = 10, interval = 5, count = 2, unacked_ms = 20000;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &unacked_ms, sizeof(unacked_ms));
}

// The error answer for `status`: `kind` (kErrorAnswer or kNotServed), its
// code (4 bytes), the body's length (4), the body: the message's length (4)
// and the message, then each payload (what marks an error as derived from
// another, say) as its URL's length (4), the URL, the value's length (4),
// the value.
constexpr uint64_t kMaxErrorBytes = 1 << 16;
std::string ErrorAnswer(const absl::Status& status, uint8_t kind = kErrorAnswer) {
  std::string body;
  const absl::string_view message = status.message().substr(0, kMaxErrorBytes / 2);
  Append(&body, message.size(), 4);
  body.append(message.data(), message.size());
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& value) {
    const std::string bytes(value);
    if (body.size() + url.size() + bytes.size() + 8 > kMaxErrorBytes) return;
    Append(&body, url.size(), 4);
    body.append(url.data(), url.size());
    Append(&body, bytes.size(), 4);
    body += bytes;
  });
  std::string answer(1, static_cast<char>(kind));
  Append(&answer, static_cast<uint64_t>(status.code()), 4);
  Append(&answer, body.size(), 4);
  return answer + body;
}

// Answers `answer` to a request refused unread, then stops sending and
// reads (a little, briefly) what the client still sends: closing with its
// bytes unread would reset the connection, and the reset can overtake the
// answer. The caller then hangs up.
void AnswerAndHangUp(int fd, std::string answer) {
  iovec iov{answer.data(), answer.size()};
  if (!WriteFull(fd, &iov, 1)) return;
  shutdown(fd, SHUT_WR);
  char sink[64 << 10];
  const absl::Time until = absl::Now() + absl::Milliseconds(200);
  size_t drained = 0;
  while (drained < (size_t{4} << 20)) {
    const size_t got = ReadFull(fd, sink, sizeof(sink), until);
    drained += got;
    if (got < sizeof(sink)) break;
  }
}

// A refusal that lets the client send the request elsewhere (kNotServed).
void Refuse(int fd, const absl::Status& why) { AnswerAndHangUp(fd, ErrorAnswer(why, kNotServed)); }

// Reads `n` bytes into `out`, growing it as they arrive rather than all at
// once (a header may promise more than ever comes). False when the
// connection ends first or memory runs out.
bool ReadGrowing(int fd, uint64_t n, std::string* out) {
  constexpr uint64_t kStep = uint64_t{1} << 20;
  try {
    while (out->size() < n) {
      const size_t have = out->size();
      const size_t more = static_cast<size_t>(std::min(kStep, n - have));
      out->resize(have + more);
      if (ReadFull(fd, out->data() + have, more) != more) return false;
    }
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

// The status an error answer's `code` and `body` describe; DataLoss naming
// `what` when the body does not parse.
absl::Status ParseError(uint64_t code, absl::string_view body, absl::string_view what) {
  auto take = [&body](absl::string_view* out) {
    if (body.size() < 4) return false;
    const uint64_t n = GetLength(body.data(), 4);
    if (body.size() - 4 < n) return false;
    *out = body.substr(4, n);
    body.remove_prefix(4 + n);
    return true;
  };
  absl::string_view message;
  if (!take(&message)) return errors::DataLoss(what, ": an error answer that does not parse");
  const absl::StatusCode status_code =
      code == 0 || code > 16 ? absl::StatusCode::kUnknown : static_cast<absl::StatusCode>(code);
  absl::Status status(status_code, message);
  absl::string_view url, value;
  while (!body.empty()) {
    if (!take(&url) || !take(&value)) {
      return errors::DataLoss(what, ": an error answer that does not parse");
    }
    status.SetPayload(url, absl::Cord(value));
  }
  return status;
}

// The wait a request asks for, capped.
absl::Duration ServerWait(uint64_t wait_ms) {
  return std::min(kBulkMaxWait, absl::Milliseconds(static_cast<int64_t>(
                                      std::min<uint64_t>(wait_ms, INT64_MAX / 2))));
}

std::string RandomId() {
  std::string id(kBulkTicketBytes, '\0');
  size_t got = 0;
  while (got < id.size()) {
    const ssize_t r = getrandom(id.data() + got, id.size() - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return "";
    }
    got += static_cast<size_t>(r);
  }
  return id;
}

std::string Errno() { return errno == 0 ? "the connection was closed" : std::strerror(errno); }

// Closes `fd`, whose read or write failed (errno says how), and says why:
// DeadlineExceeded when the deadline's timeout fired, else Unavailable (the
// peer stopped or died).
absl::Status Broken(int fd, absl::string_view what) {
  const bool late = errno == EAGAIN || errno == EWOULDBLOCK;
  const std::string why = Errno();
  close(fd);
  if (late) return errors::DeadlineExceeded(what, ": the deadline passed");
  return errors::Unavailable(what, ": ", why);
}

// What ends a request while its client closes.
absl::Status Closing(absl::string_view what) {
  return errors::Cancelled(what, ": the bulk client is closing");
}

// A fallback is not taken from a client being destroyed (its owner may be
// going too): the request ends Cancelled instead.
void NoFallbackWhileClosing(const std::atomic<bool>& closing, absl::string_view what,
                            absl::Status* status, BulkClient::Fallback* fallback) {
  if (*fallback == BulkClient::Fallback::kNone || !closing.load()) return;
  *status = Closing(what);
  *fallback = BulkClient::Fallback::kNone;
}

// How long the server is asked to wait: until `deadline`.
// Whether the peer on `fd`, which sends nothing while it waits for an
// answer, has closed its end (or the connection broke).
bool PeerHungUp(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
  char c;
  return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

uint64_t WaitMs(absl::Time deadline) {
  return static_cast<uint64_t>(
      std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

}  // namespace

bool WantsBulk(const Tensor& tensor) {
  return tensor.IsInitialized() && !DataTypeIsObject(tensor.dtype()) &&
         tensor.TotalBytes() >= kBulkMinBytes;
}

std::string HostOf(absl::string_view address) {
  const size_t colon = address.rfind(':');
  absl::string_view host = colon == absl::string_view::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::string(host);
}

// ---- server ------------------------------------------------------------------

struct BulkServer::State : std::enable_shared_from_this<BulkServer::State> {
  State(int listener, const Options& options)
      : options(options), pid(getpid()), listener(listener) {}
  void AcceptLoop(const std::shared_ptr<State>& self);
  void SweepExpired() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const absl::Time now = absl::Now();
    for (auto it = tickets.begin(); it != tickets.end();) {
      it = it->second.expires < now ? tickets.erase(it) : std::next(it);
    }
  }
  void Serve(int fd);
  // Serves one direct RecvBuf or call whose magic was read; false to hang
  // up.
  // (A RecvTensor's too, when `rendezvous`.)
  bool ServeRecvBuf(int fd, bool rendezvous);
  bool ServeCall(int fd);
  // What a handler answers, possibly after we stopped waiting.
  struct Pending {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
    Tensor tensor;  // a RecvBuf's, written by the worker before it calls back
    Answer answer;  // a call's, set under mu
    // A call's: cancelled when the client hangs up, at Stop, or when the
    // wait ends unanswered. (RecvBufs have none.)
    std::optional<CancellationManager> cancellation;
    // The handler's answer: ends Await. False when it had answered before
    // (ignored).
    bool Settle(absl::Status s, Answer a = nullptr) {
      absl::MutexLock lock(&mu);
      if (done) return false;
      status = std::move(s);
      answer = std::move(a);
      done = true;
      return true;
    }
  };
  // While alive, Stop leaves `fd`'s connection open (until its grace is
  // over): its thread waits for a handler, or writes that handler's answer,
  // which the client must get rather than a hang-up it would take for a
  // request never run.
  class Answering {
   public:
    Answering(State* state, int fd) : state_(state), fd_(fd) {
      absl::MutexLock lock(&state_->mu);
      state_->awaiting.insert(fd_);
    }
    ~Answering() {
      absl::MutexLock lock(&state_->mu);
      state_->awaiting.erase(fd_);
      state_->writing.erase(fd_);
    }
    // The answer starts going out. Past Stop's grace such a connection is
    // closed too (a client that stopped reading blocks the write): the
    // client then sees a broken answer, never a request left unread.
    void Writing() {
      absl::MutexLock lock(&state_->mu);
      state_->writing.insert(fd_);
    }
    Answering(const Answering&) = delete;
    Answering& operator=(const Answering&) = delete;

   private:
    State* const state_;
    const int fd_;
  };
  // Waits for `p` until it is done (its status), Stop (Aborted), or
  // `grace` past `deadline` (DeadlineExceeded saying `what` got no answer
  // within `wait`). With a cancellation, the client's hanging up on `fd`
  // cancels it, and Stop cancels it and waits up to stop_grace more.
  absl::Status Await(Pending& p, int fd, absl::Time deadline, absl::Duration wait,
                     absl::string_view what, absl::Duration grace = kHandlerGrace);
  // Unauthenticated unless `given` is the token (or none is set).
  absl::Status CheckToken(absl::string_view given, absl::string_view what) const;
  // Reads a direct request's header (within kHeaderTimeout): `fixed_bytes`
  // into `fixed`, whose first three 4-byte lengths are the token's, the
  // addressee's and the name's (a key, a method); then the token, checked
  // before anything else is read (a refusal is answered); then the
  // addressee and the name. False to hang up.
  bool ReadHeader(int fd, char* fixed, size_t fixed_bytes, uint64_t max_name,
                  absl::string_view what, std::string* addressee, std::string* name);
  // FailedPrecondition when the request means another task than ours.
  absl::Status CheckAddressee(absl::string_view addressee, absl::string_view what) const;
  std::optional<Tensor> Take(absl::string_view id);

  const Options options;
  const pid_t pid;  // for clients that read chunks in place
  absl::Mutex mu;
  int listener ABSL_GUARDED_BY(mu);
  bool listening ABSL_GUARDED_BY(mu) = true;  // false once StopListening or Stop ran
  bool stopped ABSL_GUARDED_BY(mu) = false;
  struct Held {
    Tensor tensor;
    absl::Time expires;
  };
  std::map<std::string, Held> tickets ABSL_GUARDED_BY(mu);
  std::set<int> connections ABSL_GUARDED_BY(mu);
  int threads ABSL_GUARDED_BY(mu) = 0;  // the accept loop + one per connection
  int64_t fetches ABSL_GUARDED_BY(mu) = 0;
  int64_t calls_served ABSL_GUARDED_BY(mu) = 0;
  // Calls served whose handler has not answered yet: Stop waits for them.
  int64_t unanswered ABSL_GUARDED_BY(mu) = 0;
  // The connections whose thread waits for a handler: Stop leaves them open
  // for the answer.
  std::set<int> awaiting ABSL_GUARDED_BY(mu);
  std::set<int> writing ABSL_GUARDED_BY(mu);  // of those, the ones whose answer goes out
  absl::Time stop_began ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
  int64_t in_place_reads ABSL_GUARDED_BY(mu) = 0;
  RecvBufFn recv_buf ABSL_GUARDED_BY(mu);
  RecvTensorFn recv_tensor ABSL_GUARDED_BY(mu);
  std::map<std::string, CallFn> calls ABSL_GUARDED_BY(mu);
};

absl::StatusOr<std::unique_ptr<BulkServer>> BulkServer::Start(const std::string& host,
                                                              const Options& options) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string name = HostOf(absl::StrCat(host, ":0"));
  if (const int rc = getaddrinfo(name.c_str(), "0", &hints, &found); rc != 0) {
    return errors::Unavailable("bulk port: cannot resolve '", host, "': ", gai_strerror(rc));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      why = std::strerror(errno);
      close(fd);
      continue;
    }
    freeaddrinfo(found);
    const int port = ntohs(bound.ss_family == AF_INET6
                               ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    auto state = std::make_shared<State>(fd, options);
    {
      absl::MutexLock lock(&state->mu);
      ++state->threads;
    }
    try {
      std::thread([state] { state->AcceptLoop(state); }).detach();
    } catch (const std::system_error& e) {
      close(fd);
      return errors::Unavailable("bulk port: cannot start its thread: ", e.what());
    }
    return std::unique_ptr<BulkServer>(new BulkServer(std::move(state), port));
  }
  freeaddrinfo(found);
  return errors::Unavailable("bulk port: cannot listen on ", host, ": ", why);
}

BulkServer::BulkServer(std::shared_ptr<State> state, int port)
    : state_(std::move(state)), port_(port) {}

BulkServer::~BulkServer() { Stop(); }

std::string BulkServer::Offer(const Tensor& tensor) {
  std::string id = RandomId();
  if (id.empty()) return id;
  absl::MutexLock lock(&state_->mu);
  if (state_->stopped) return "";
  state_->SweepExpired();
  state_->tickets[id] = State::Held{tensor, absl::Now() + state_->options.ticket_ttl};
  return id;
}

std::optional<Tensor> BulkServer::Take(absl::string_view id) { return state_->Take(id); }

void BulkServer::ServeRecvBuf(RecvBufFn fn) {
  absl::MutexLock lock(&state_->mu);
  state_->recv_buf = std::move(fn);
}

BulkServer::Answer BulkServer::Bytes(std::string bytes) {
  return [bytes = std::move(bytes)]() mutable -> absl::StatusOr<std::string> {
    return std::move(bytes);
  };
}

void BulkServer::ServeRecvTensor(RecvTensorFn fn) {
  absl::MutexLock lock(&state_->mu);
  state_->recv_tensor = std::move(fn);
}

void BulkServer::ServeCall(const std::string& method, CallFn fn) {
  absl::MutexLock lock(&state_->mu);
  state_->calls[method] = std::move(fn);
}

absl::Status BulkServer::State::CheckToken(absl::string_view given,
                                           absl::string_view what) const {
  if (options.token.empty() || SameToken(given, options.token)) return absl::OkStatus();
  return errors::Unauthenticated(what, " on the bulk port: the auth token ",
                                 given.empty() ? "is missing" : "does not match");
}

bool BulkServer::State::ReadHeader(int fd, char* fixed, size_t fixed_bytes, uint64_t max_name,
                                   absl::string_view what, std::string* addressee,
                                   std::string* name) {
  const absl::Time deadline = absl::Now() + kHeaderTimeout;
  if (ReadFull(fd, fixed, fixed_bytes, deadline) != fixed_bytes) return false;
  const uint64_t token_bytes = GetLength(fixed, 4);
  const uint64_t addressee_bytes = GetLength(fixed + 4, 4);
  const uint64_t name_bytes = GetLength(fixed + 8, 4);
  if (token_bytes > kMaxTokenBytes || addressee_bytes > kMaxKeyBytes || name_bytes == 0 ||
      name_bytes > max_name) {
    return false;
  }
  std::string given(token_bytes, '\0');
  if (ReadFull(fd, given.data(), given.size(), deadline) != given.size()) return false;
  if (absl::Status denied = CheckToken(given, what); !denied.ok()) {
    AnswerAndHangUp(fd, ErrorAnswer(denied));  // final: no guessing at wire speed
    return false;
  }
  addressee->resize(addressee_bytes);
  name->resize(name_bytes);
  return ReadFull(fd, addressee->data(), addressee->size(), deadline) == addressee->size() &&
         ReadFull(fd, name->data(), name->size(), deadline) == name->size();
}

absl::Status BulkServer::State::CheckAddressee(absl::string_view addressee,
                                               absl::string_view what) const {
  if (addressee.empty() || options.task.empty() || addressee == options.task) {
    return absl::OkStatus();
  }
  return errors::FailedPrecondition(what, " for ", addressee, " reached the bulk port of ",
                                    options.task);
}

absl::Status BulkServer::State::Await(Pending& p, int fd, absl::Time deadline, absl::Duration wait,
                                      absl::string_view what, absl::Duration grace) {
  // The handler answers by `deadline` (DeadlineExceeded naming what it
  // waited for); a little grace beyond, and Stop, end the wait in any case.
  const absl::Time give_up = deadline + grace;
  const absl::Status shutting_down = errors::Aborted("the task is shutting down");
  absl::Time stop_until = absl::InfiniteFuture();  // set once Stop was seen
  bool cancelled = false;
  absl::Time next_beat = absl::Now() + options.beat_interval;
  // Not under p.mu: a cancelled handler may answer on this thread.
  auto cancel = [&] {
    if (cancelled || !p.cancellation) return;
    cancelled = true;
    p.mu.Unlock();
    p.cancellation->StartCancel();
    p.mu.Lock();
  };
  absl::MutexLock lock(&p.mu);
  for (;;) {
    // Every 100 ms (for Stop and a hang-up), and at the end of the wait.
    const absl::Time next = stop_until != absl::InfiniteFuture() ? stop_until : give_up;
    const absl::Duration tick =
        std::clamp(next - absl::Now(), absl::Milliseconds(1), absl::Milliseconds(100));
    if (p.mu.AwaitWithTimeout(absl::Condition(&p.done), tick)) {
      // A call that Stop cancelled (or the hang-up Stop looks like) says
      // why in its own words; ours are clearer.
      if (absl::IsCancelled(p.status) || absl::IsAborted(p.status)) {
        absl::MutexLock state_lock(&mu);
        if (stopped) return IsDerivedError(p.status) ? MarkDerived(shutting_down) : shutting_down;
      }
      return p.status;
    }
    bool stopping;
    absl::Time began;
    {
      absl::MutexLock state_lock(&mu);
      stopping = stopped;
      began = stop_began;
    }
    const absl::Time now = absl::Now();
    if (now >= next_beat) {  // still working: see kStillWorking
      const char beat = static_cast<char>(kStillWorking);
      (void)!send(fd, &beat, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      next_beat = now + options.beat_interval;
    }
    if (stopping) {
      if (!p.cancellation) return shutting_down;
      // From when Stop began, as Stop counts it.
      if (stop_until == absl::InfiniteFuture()) stop_until = began + options.stop_grace;
      cancel();
      if (now >= stop_until) return shutting_down;
      continue;
    }
    if (now >= give_up) {
      cancel();
      return errors::DeadlineExceeded(what, ": no answer within ", absl::FormatDuration(wait));
    }

    if (!cancelled && PeerHungUp(fd)) {
      // A call then waits for its cancelled handler's answer; a RecvBuf or
      // RecvTensor, which cannot be cancelled, waits no more.
      if (!p.cancellation) {
        absl::MutexLock state_lock(&mu);  // or Stop, which looks the same
        return stopped ? shutting_down : errors::Cancelled(what, ": the client hung up");
      }
      cancel();
    }
  }
}

bool BulkServer::State::ServeRecvBuf(int fd, bool rendezvous) {
  char fixed[kRecvTensorFixedBytes];
  std::string addressee, key;
  const char* const kind = rendezvous ? "RecvTensor" : "RecvBuf";
  if (!ReadHeader(fd, fixed, rendezvous ? kRecvTensorFixedBytes : kRecvBufFixedBytes, kMaxKeyBytes,
                  kind, &addressee, &key)) {
    return false;
  }
  const uint64_t flags = GetLength(fixed + 12, 4);
  const uint64_t wait_ms = GetLength(fixed + 16);
  const int64_t step_id = rendezvous ? static_cast<int64_t>(GetLength(fixed + 24)) : 0;
  RecvBufFn recv_buf_fn;
  RecvTensorFn recv_tensor_fn;
  // Before looking at `stopped`: either Stop began (refused below, unread)
  // or Stop will leave this connection open for the answer.
  Answering answering(this, fd);
  bool stopping;
  {
    absl::MutexLock lock(&mu);
    if (rendezvous) {
      recv_tensor_fn = recv_tensor;
    } else {
      recv_buf_fn = recv_buf;
    }
    stopping = stopped;
  }
  absl::Status refused = CheckAddressee(addressee, kind);
  if (refused.ok() && !recv_buf_fn && !recv_tensor_fn) {
    refused = errors::Unimplemented("this bulk port serves no ", kind);
  }
  if (refused.ok() && stopping) refused = errors::Unavailable("the bulk port is stopping");
  if (!refused.ok()) {
    Refuse(fd, refused);
    return false;
  }
  auto pending = std::make_shared<Pending>();
  const absl::Duration wait = ServerWait(wait_ms);
  // A rendezvous has no deadline of its own: the wait's end is the answer,
  // a little before the client's (as gRPC's RecvTensor answers), so that
  // ours, which names the key and step, arrives first.
  const absl::Time deadline =
      absl::Now() + wait -
      (rendezvous ? std::min(absl::Milliseconds(100), wait / 10) : absl::ZeroDuration());
  auto settle = [pending](absl::Status s) { pending->Settle(std::move(s)); };
  if (rendezvous) {
    recv_tensor_fn(step_id, key, deadline, &pending->tensor, std::move(settle));
  } else {
    recv_buf_fn(key, deadline, &pending->tensor, std::move(settle));
  }
  const std::string what = rendezvous ? absl::StrCat("RecvTensor of '", key, "' for step ", step_id)
                                      : absl::StrCat("RecvBuf of '", key, "'");
  absl::Status status =
      Await(*pending, fd, deadline, wait, what, rendezvous ? absl::ZeroDuration() : kHandlerGrace);
  Tensor tensor;
  if (status.ok()) tensor = pending->tensor;
  if (status.ok() && rendezvous && tensor.IsInitialized() && DataTypeIsObject(tensor.dtype())) {
    // Strings and the like are not bytes: they cross as a TensorProto.
    TensorProto proto;
    TensorToProto(tensor, &proto);
    std::string answer;
    answer.push_back(static_cast<char>(kProtoAnswer));
    const size_t bytes = proto.ByteSizeLong();
    Append(&answer, bytes, 8);
    if (bytes <= kMaxAnswerBytes && proto.AppendToString(&answer)) {
      absl::MutexLock lock(&mu);
      ++fetches;
    } else {
      answer = ErrorAnswer(errors::ResourceExhausted(
          what, ": ", DataTypeString(tensor.dtype()), " ", tensor.shape().DebugString(),
          " makes an answer of ", bytes, " bytes, over the limit of ", kMaxAnswerBytes));
    }
    iovec iov{answer.data(), answer.size()};
    answering.Writing();
    return WriteFull(fd, &iov, 1);
  }
  if (status.ok() && (!tensor.IsInitialized() || DataTypeIsObject(tensor.dtype()) ||
                      tensor.dims() > static_cast<int>(kMaxRank))) {
    status = errors::Internal(what, ": the answer is not a plain tensor");
  }
  std::string header;
  absl::string_view bytes;
  // A nonce of this answer's own proves to the client that the process it
  // reads is this one (process ids are per namespace; a process forked from
  // this one earlier does not have it).
  const std::string nonce = (flags & kMayReadInPlace) != 0 ? RandomId() : "";
  const bool in_place = status.ok() && nonce.size() == kNonceBytes &&
                        tensor.TotalBytes() >= kInPlaceMinBytes;
  if (status.ok()) {
    header.push_back(static_cast<char>(in_place ? kInPlaceAnswer : kTensorAnswer));
    Append(&header, static_cast<uint64_t>(tensor.dtype()), 4);
    Append(&header, static_cast<uint64_t>(tensor.dims()), 4);
    for (int d = 0; d < tensor.dims(); ++d) {
      Append(&header, static_cast<uint64_t>(tensor.dim_size(d)), 8);
    }
    Append(&header, tensor.TotalBytes(), 8);
    bytes = absl::string_view(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
    if (in_place) {
      Append(&header, static_cast<uint64_t>(pid), 8);
      Append(&header, reinterpret_cast<uintptr_t>(bytes.data()), 8);
      Append(&header, reinterpret_cast<uintptr_t>(nonce.data()), 8);
      header += nonce;
    }
    absl::MutexLock lock(&mu);  // counted before the client can see the bytes
    ++fetches;
  } else {
    header = ErrorAnswer(status);
  }
  if (in_place) {
    // `tensor` holds the chunk until the client says it has copied it.
    iovec iov{header.data(), header.size()};
    char verdict = 0;
    answering.Writing();
    if (!WriteFull(fd, &iov, 1) ||
        ReadFull(fd, &verdict, 1, absl::Now() + kInPlaceVerdictTimeout) != 1) {
      return false;
    }
    if (verdict == 'D') {
      {
        absl::MutexLock lock(&mu);  // counted before the client can go on
        ++in_place_reads;
      }
      // Still holding the chunk: the client's copy was whole.
      const char ack = 'A';
      iov = {const_cast<char*>(&ack), 1};
      return WriteFull(fd, &iov, 1);
    }
    if (verdict != 'S') return false;
    iov = {const_cast<char*>(bytes.data()), bytes.size()};  // it could not: the bytes after all
    return WriteFull(fd, &iov, 1);
  }
  iovec iov[2] = {{header.data(), header.size()}, {const_cast<char*>(bytes.data()), bytes.size()}};
  answering.Writing();
  return WriteFull(fd, iov, bytes.empty() ? 1 : 2);
}

bool BulkServer::State::ServeCall(int fd) {
  char fixed[kCallFixedBytes];
  std::string addressee, method;
  if (!ReadHeader(fd, fixed, sizeof(fixed), kMaxMethodBytes, "a call", &addressee, &method)) {
    return false;
  }
  const uint64_t wait_ms = GetLength(fixed + 12);
  const uint64_t request_bytes = GetLength(fixed + 20);
  const std::string what = absl::StrCat(method, " call");
  CallFn fn;
  {
    absl::MutexLock lock(&mu);
    auto it = calls.find(method);
    if (it != calls.end()) fn = it->second;
  }
  // Refused before its request is read: answered, then hung up on (the
  // request's bytes are still on the way).
  absl::Status refused = CheckAddressee(addressee, what);
  if (refused.ok() && !fn) {
    refused = errors::Unimplemented("this bulk port serves no ", what);
  } else if (refused.ok() && request_bytes > options.max_call_bytes) {
    refused = errors::ResourceExhausted(what, ": a request of ", request_bytes,
                                        " bytes is over this server's limit of ",
                                        options.max_call_bytes);
  }
  if (!refused.ok()) {
    Refuse(fd, refused);
    return false;
  }
  std::string request;
  if (!ReadGrowing(fd, request_bytes, &request)) return false;
  Answering answering(this, fd);  // before looking at `stopped`, as in ServeRecvBuf
  {
    absl::MutexLock lock(&mu);
    if (stopped) {
      // Read after Stop began (it was already queued): not run, so the
      // client may send it elsewhere.
      refused = errors::Unavailable(what, ": the bulk port is stopping");
    } else {
      ++calls_served;
      ++unanswered;
    }
  }
  if (!refused.ok()) {
    Refuse(fd, refused);
    return false;
  }
  auto pending = std::make_shared<Pending>();
  pending->cancellation.emplace();
  const absl::Duration wait = ServerWait(wait_ms);
  const absl::Time deadline = absl::Now() + wait;
  fn(std::move(request), deadline, &*pending->cancellation,
     [pending, self = shared_from_this()](absl::Status s, Answer answer) {
       if (!pending->Settle(std::move(s), std::move(answer))) return;
       absl::MutexLock lock(&self->mu);
       --self->unanswered;
     });
  absl::Status status = Await(*pending, fd, deadline, wait, what);
  std::string header, bytes;
  if (status.ok() && pending->answer) {
    // No longer written by the handler: it has answered.
    absl::StatusOr<std::string> made = pending->answer();
    if (made.ok()) {
      bytes = *std::move(made);
    } else {
      status = made.status();
    }
  }
  if (status.ok()) {
    header.push_back(static_cast<char>(kBytesAnswer));
    Append(&header, bytes.size(), 8);
  } else {
    header = ErrorAnswer(status);
  }
  iovec iov[2] = {{header.data(), header.size()}, {bytes.data(), bytes.size()}};
  answering.Writing();
  return WriteFull(fd, iov, bytes.empty() ? 1 : 2);
}

std::optional<Tensor> BulkServer::State::Take(absl::string_view id) {
  absl::MutexLock lock(&mu);
  auto it = tickets.find(std::string(id));
  if (it == tickets.end()) return std::nullopt;
  Held held = std::move(it->second);
  tickets.erase(it);
  if (held.expires < absl::Now()) return std::nullopt;
  return std::move(held.tensor);
}

void BulkServer::StopListening() {
  absl::MutexLock lock(&state_->mu);
  state_->listening = false;
  if (state_->listener >= 0) shutdown(state_->listener, SHUT_RDWR);  // the loop closes it
}

void BulkServer::Stop() {
  absl::MutexLock lock(&state_->mu);
  state_->stopped = true;
  state_->listening = false;
  state_->tickets.clear();
  if (state_->listener >= 0) shutdown(state_->listener, SHUT_RDWR);
  // Reading ends first, on every connection but those answering a request
  // (waiting for its handler, or writing its answer): those keep their
  // connection until the answer is out, so that no client mistakes a
  // request that ran for one never read. Then writing ends too, for
  // threads stuck sending to a client that stopped reading: at once on the
  // others, past the grace on those. Each thread closes its own connection.
  // Await cancels a call and answers it by Options::stop_grace; Stop also
  // waits for every handler to answer, so that none still runs once it
  // returns.
  const auto all_done = absl::Condition(
      +[](State* state)
           ABSL_NO_THREAD_SAFETY_ANALYSIS { return state->threads == 0 && state->unanswered == 0; },
      state_.get());
  if (state_->stop_began == absl::InfiniteFuture()) state_->stop_began = absl::Now();
  const absl::Time close_writing =
      state_->stop_began + state_->options.stop_grace + absl::Seconds(1);
  for (int fd : state_->connections) {
    if (state_->awaiting.count(fd) == 0) shutdown(fd, SHUT_RD);
  }
  if (state_->mu.AwaitWithTimeout(all_done, absl::Milliseconds(500))) return;
  // (A handler waiting on a frozen task answers once its own request there
  // fails: BulkClient's peer silence.)
  do {
    const absl::Time now = absl::Now();
    for (int fd : state_->connections) {
      if (state_->awaiting.count(fd) == 0 ||
          (now >= close_writing && state_->writing.count(fd) != 0)) {
        shutdown(fd, SHUT_RDWR);
      }
    }
  } while (!state_->mu.AwaitWithTimeout(all_done, absl::Milliseconds(100)));
}

int64_t BulkServer::fetches() const {
  absl::MutexLock lock(&state_->mu);
  return state_->fetches;
}

int64_t BulkServer::calls() const {
  absl::MutexLock lock(&state_->mu);
  return state_->calls_served;
}

int64_t BulkServer::calls_waiting() const {
  absl::MutexLock lock(&state_->mu);
  return state_->unanswered;
}

int64_t BulkServer::in_place_reads() const {
  absl::MutexLock lock(&state_->mu);
  return state_->in_place_reads;
}

void BulkServer::State::AcceptLoop(const std::shared_ptr<State>& self) {
  int fd_listening;
  {
    absl::MutexLock lock(&mu);
    fd_listening = listener;
  }
  for (;;) {
    // Wakes at least every kSweepInterval to drop expired tickets, so an
    // idle server does not keep their tensors.
    pollfd p{fd_listening, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kSweepInterval)));
    if (ready == 0 || (ready < 0 && errno == EINTR)) {
      absl::MutexLock lock(&mu);
      SweepExpired();
      if (listening) continue;
    }
    const int fd = accept4(fd_listening, nullptr, nullptr, SOCK_CLOEXEC);
    const int error = fd < 0 ? errno : 0;
    const bool exhausted =
        error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
    if (exhausted) absl::SleepFor(absl::Milliseconds(50));  // out of descriptors: try again
    absl::MutexLock lock(&mu);
    if (fd < 0) {
      if ((exhausted || error == EINTR || error == ECONNABORTED) && listening) continue;
      close(fd_listening);  // shut down by Stop or StopListening
      listener = -1;
      --threads;
      return;
    }
    if (stopped || static_cast<int>(connections.size()) >= options.max_connections) {
      close(fd);
      continue;
    }
    try {
      std::thread([self, fd] { self->Serve(fd); }).detach();
    } catch (const std::system_error&) {  // out of threads: as over the limit
      close(fd);
      continue;
    }
    connections.insert(fd);
    ++threads;
  }
}

void BulkServer::State::Serve(int fd) {
  // AcceptLoop holds `mu` until it has counted this thread, so the
  // bookkeeping at the end always balances.
  NoDelay(fd);
  SetTimeout(fd, SO_SNDTIMEO, absl::Seconds(kServerSendTimeoutSeconds));
  // A pooled connection left idle this long is closed; its client retries
  // on a new one. (Reads with a deadline poll instead.)
  SetTimeout(fd, SO_RCVTIMEO, kServerIdleTimeout);
  char request[kRequestBytes];
  // One request after another until the client goes or sends garbage.
  for (;;) {
    if (ReadFull(fd, request, sizeof(kMagic)) != sizeof(kMagic)) break;
    if (std::memcmp(request, kCallMagic, sizeof(kCallMagic)) == 0) {
      if (ServeCall(fd)) continue;
      break;
    }
    if (std::memcmp(request, kRecvBufMagic, sizeof(kRecvBufMagic)) == 0) {
      if (ServeRecvBuf(fd, /*rendezvous=*/false)) continue;
      break;
    }
    if (std::memcmp(request, kRecvTensorMagic, sizeof(kRecvTensorMagic)) == 0) {
      if (ServeRecvBuf(fd, /*rendezvous=*/true)) continue;
      break;
    }
    if (std::memcmp(request, kMagic, sizeof(kMagic)) != 0 ||
        ReadFull(fd, request + sizeof(kMagic), kBulkTicketBytes) != kBulkTicketBytes) {
      break;
    }
    std::optional<Tensor> tensor =
        Take(absl::string_view(request + sizeof(kMagic), kBulkTicketBytes));
    if (tensor) {  // counted before the client can see the bytes
      absl::MutexLock lock(&mu);
      ++fetches;
    }
    char header[kHeaderBytes];
    header[0] = static_cast<char>(tensor ? kOk : kUnknownTicket);
    const absl::string_view bytes =
        tensor ? absl::string_view(static_cast<const char*>(tensor->raw_data()),
                                   tensor->TotalBytes())
               : absl::string_view();
    PutLength(bytes.size(), header + 1);
    iovec iov[2] = {{header, kHeaderBytes}, {const_cast<char*>(bytes.data()), bytes.size()}};
    if (!WriteFull(fd, iov, bytes.empty() ? 1 : 2)) break;
  }
  absl::MutexLock lock(&mu);
  connections.erase(fd);
  close(fd);
  --threads;
}

// ---- client ------------------------------------------------------------------

namespace {
// Whether `host` is this machine's loopback: its servers' memory can be
// read in place (process_vm_readv), unless TG_BULK_IN_PLACE=0.
bool InPlaceAllowed(const std::string& host) {
  const char* env = std::getenv("TG_BULK_IN_PLACE");
  if (env != nullptr && (std::string(env) == "0" || std::string(env) == "false")) return false;
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}
}  // namespace

BulkClient::BulkClient(std::string host, std::string addressee)
    : host_(std::move(host)), addressee_(std::move(addressee)), in_place_(InPlaceAllowed(host_)) {}

BulkClient::~BulkClient() {
  std::thread watcher;
  closing_.store(true);  // what still ends from here on ends Cancelled, with no fallback
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // new calls fail Cancelled from here on
    // A send that started before may still be handing work to the pool.
    mu_.Await(absl::Condition(
        +[](int* sending) { return *sending == 0; }, &sending_));
    watcher = std::move(watcher_);
  }
  if (watcher.joinable()) {
    Wake();
    watcher.join();  // fails what still waits
  }
  std::unique_ptr<ThreadPool> pool;
  {
    absl::MutexLock lock(&mu_);
    pool = std::move(pool_);
  }
  pool.reset();  // waits for the fetches, sends and answers in flight
  FailWaiting();  // sent after the watcher left
  absl::MutexLock lock(&mu_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  for (auto& [port, fds] : idle_) {
    for (int fd : fds) close(fd);
  }
}

void BulkClient::Waiting::Finish(absl::Status status, Fallback fallback, std::string answer) {
  if (closing != nullptr) NoFallbackWhileClosing(*closing, what, &status, &fallback);
  if (call_done) {
    call_done(std::move(status), std::move(answer), fallback);
  } else {
    done(std::move(status), fallback);
  }
}

void BulkClient::FailWaiting() {
  std::map<int, Waiting> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(waiting_);
  }
  for (auto& [fd, w] : left) {
    close(fd);
    w.Finish(Closing(w.what), Fallback::kNone);
  }
}

void BulkClient::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof(one));
}

absl::Status BulkClient::StartWatching() {
  if (stopping_) return errors::Cancelled("the bulk client is closing");
  if (pool_ == nullptr) pool_ = std::make_unique<ThreadPool>(kClientThreads);
  if (wake_fd_ < 0) wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0) epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (wake_fd_ < 0 || epoll_fd_ < 0) {
    return errors::Unavailable("the bulk port's watcher: ", std::strerror(errno));
  }
  if (!watcher_.joinable()) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = wake_fd_;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &e) != 0 && errno != EEXIST) {
      return errors::Unavailable("the bulk port's watcher: ", std::strerror(errno));
    }
    try {
      watcher_ = std::thread([this] { WatchLoop(); });
    } catch (const std::system_error& e) {
      return errors::Unavailable("the bulk port's watcher thread: ", e.what());
    }
  }
  return absl::OkStatus();
}

void BulkClient::RecvBufAsync(int port, const std::string& token, const std::string& key,
                              absl::Time deadline, const Tensor* into, Tensor* out,
                              FetchCallback done) {
  AskForTensor(port, token, std::nullopt, key, deadline, into, out, std::move(done));
}

void BulkClient::RecvTensorAsync(int port, const std::string& token, int64_t step_id,
                                 const std::string& key, absl::Time deadline, Tensor* out,
                                 FetchCallback done) {
  AskForTensor(port, token, step_id, key, deadline, nullptr, out, std::move(done));
}

void BulkClient::AskForTensor(int port, const std::string& token, std::optional<int64_t> step_id,
                              const std::string& key, absl::Time deadline, const Tensor* into,
                              Tensor* out, FetchCallback done) {
  const char* const kind = step_id ? "RecvTensor" : "RecvBuf";
  if (token.size() > kMaxTokenBytes || key.empty() || key.size() > kMaxKeyBytes) {
    return done(
        errors::InvalidArgument(kind, " on the bulk port: a key of ", key.size(),
                                " bytes or a token of ", token.size(), " bytes is out of range"),
        Fallback::kNone);
  }
  std::string request(step_id ? kRecvTensorMagic : kRecvBufMagic, sizeof(kRecvBufMagic));
  Append(&request, token.size(), 4);
  Append(&request, addressee_.size(), 4);
  Append(&request, key.size(), 4);
  const bool may_read_in_place = in_place_ && !in_place_failed_.load();
  Append(&request, may_read_in_place ? kMayReadInPlace : 0, 4);
  Append(&request, WaitMs(deadline), 8);
  if (step_id) Append(&request, static_cast<uint64_t>(*step_id), 8);
  request += token;
  request += addressee_;
  request += key;
  Waiting w;
  w.closing = &closing_;
  w.port = port;
  // The server answers DeadlineExceeded (naming the key) by `deadline`.
  w.deadline = deadline + kRecvBufGrace;
  w.what = step_id ? absl::StrCat("RecvTensor of '", key, "' for step ", *step_id)
                   : absl::StrCat("RecvBuf of '", key, "'");
  w.into = into;
  w.out = out;
  w.done = std::move(done);
  w.may_read_in_place = may_read_in_place;
  w.may_take_proto = step_id.has_value();  // strings come as a TensorProto
  Send(std::move(w), std::move(request));
}

void BulkClient::CallAsync(int port, const std::string& token, const std::string& method,
                           std::string request, absl::Time deadline, CallCallback done) {
  StartCall(port, token, method, std::move(request), deadline, /*read_here=*/false,
            std::move(done));
}

void BulkClient::Call(int port, const std::string& token, const std::string& method,
                      std::string request, absl::Time deadline, CallCallback done) {
  StartCall(port, token, method, std::move(request), deadline, /*read_here=*/true, std::move(done));
}

void BulkClient::StartCall(int port, const std::string& token, const std::string& method,
                           std::string request, absl::Time deadline, bool read_here,
                           CallCallback done) {
  if (token.size() > kMaxTokenBytes || method.empty() || method.size() > kMaxMethodBytes) {
    return done(errors::InvalidArgument("a call on the bulk port: a method name of ",
                                        method.size(), " bytes or a token of ", token.size(),
                                        " bytes is out of range"),
                "", Fallback::kNone);
  }
  std::string framed(kCallMagic, sizeof(kCallMagic));
  framed.reserve(sizeof(kCallMagic) + kCallFixedBytes + token.size() + addressee_.size() +
                 method.size() + request.size());
  Append(&framed, token.size(), 4);
  Append(&framed, addressee_.size(), 4);
  Append(&framed, method.size(), 4);
  Append(&framed, WaitMs(deadline), 8);
  Append(&framed, request.size(), 8);
  framed += token;
  framed += addressee_;
  framed += method;
  framed += request;
  Waiting w;
  w.closing = &closing_;
  w.port = port;
  w.deadline = deadline;
  w.what = absl::StrCat(method, " call");
  w.call_done = std::move(done);
  w.read_here = read_here;
  Send(std::move(w), std::move(framed));
}

void BulkClient::Send(Waiting w, std::string request) {
  absl::Status started;
  {
    absl::MutexLock lock(&mu_);
    started = StartWatching();
  }
  if (absl::IsCancelled(started)) return w.Finish(Closing(w.what), Fallback::kNone);
  if (!started.ok()) {  // callbacks never run under mu_: they may call us again
    return w.Finish(WithContext(started, w.what), Fallback::kOverGrpc);
  }
  // The common case costs no thread hop: a pooled connection whose socket
  // buffer takes the whole (small) request at once.
  size_t sent = 0;
  if (request.size() <= kInlineRequestBytes) {
    w.fd = TakeIdle(w.port);
    if (w.fd >= 0) {
      w.pooled = true;
      const ssize_t n = send(w.fd, request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n == static_cast<ssize_t>(request.size())) {
        // A caller that blocks anyway reads its answer itself: no hop to the
        // watcher and back.
        return w.read_here ? ReadAnswer(std::move(w)) : Watch(std::move(w));
      }
      if (n > 0) {
        sent = static_cast<size_t>(n);
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        close(w.fd);  // closed by the server meanwhile: a new one on the pool
        DropIdle(w.port);
        w.fd = -1;
        w.pooled = false;
      }
    }
  }
  SendOnPool(std::move(w), std::move(request), sent);
}

bool BulkClient::Schedule(std::function<void()> fn) {
  ThreadPool* pool;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    if (pool_ == nullptr) pool_ = std::make_unique<ThreadPool>(kClientThreads);
    pool = pool_.get();
    ++sending_;  // the destructor keeps the pool until `fn` is queued
  }
  pool->Schedule(std::move(fn));
  absl::MutexLock lock(&mu_);
  --sending_;
  return true;
}

void BulkClient::SendOnPool(Waiting w, std::string request, size_t sent) {
  // Connecting may take a moment: not on the caller's thread.
  auto send = std::make_shared<std::pair<Waiting, std::string>>(std::move(w), std::move(request));
  const bool queued = Schedule([this, send, sent]() mutable {
    Waiting& w = send->first;
    std::string& request = send->second;
    for (;;) {
      if (w.fd < 0 && absl::Now() >= w.deadline) {
        return w.Finish(errors::DeadlineExceeded(w.what, ": the deadline passed before it was "
                                                 "sent to the bulk port"),
                        Fallback::kNone);
      }
      if (w.fd < 0) {
        absl::Status status;
        Fallback fallback = Fallback::kNone;
        w.fd = Connect(w.port, w.deadline, &w.pooled, &status, &fallback);
        if (w.fd < 0) return w.Finish(WithContext(status, w.what), fallback);
      }
      SetTimeout(w.fd, SO_SNDTIMEO, std::max(absl::Milliseconds(1), w.deadline - absl::Now()));
      iovec iov{request.data() + sent, request.size() - sent};
      if (WriteFull(w.fd, &iov, 1)) break;
      const std::string why = Errno();
      close(w.fd);
      w.fd = -1;
      if (w.pooled && sent == 0) {  // a connection the server had closed: the others too, likely
        DropIdle(w.port);
        continue;
      }
      return w.Finish(errors::Unavailable("sending ", w.what, " to the bulk port ", host_, ":",
                                          w.port, ": ", why),
                      Fallback::kOverGrpc);
    }
    Watch(std::move(w));
  });
  if (!queued) {
    Waiting& w = send->first;
    if (w.fd >= 0) close(w.fd);
    w.Finish(Closing(w.what), Fallback::kNone);
  }
}

void BulkClient::Watch(Waiting w) {
  const int fd = w.fd;
  absl::Status failed;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      failed = Closing(w.what);
    } else {
      epoll_event e{};
      e.events = EPOLLIN | EPOLLRDHUP;
      e.data.fd = fd;
      w.heard = absl::Now();
      if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &e) == 0) {
        // The watcher sleeps until the earliest deadline it knows: wake it
        // when this one comes sooner.
        if (std::min(w.deadline, w.heard + peer_silence_) < watcher_wakes_) Wake();
        const bool inserted = waiting_.emplace(fd, std::move(w)).second;
        assert(inserted);  // an open fd waits once
        (void)inserted;
        return;
      }
      failed = errors::Unavailable(w.what, ": cannot watch its connection: ",
                                   std::strerror(errno));
    }
  }
  close(fd);
  w.Finish(failed, Fallback::kNone);
}

bool BulkClient::TakeBeats(int fd, Waiting* w) {
  // One byte at a time, each looked at before it is taken: an answer's
  // first byte (or the end) is never consumed here.
  bool beat = false;
  for (;;) {
    char next;
    const ssize_t n = recv(fd, &next, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return beat;  // beats only: wait on
    if (n != 1 || static_cast<uint8_t>(next) != kStillWorking)
      return false;  // the answer, or the end
    (void)!recv(fd, &next, 1, MSG_DONTWAIT);
    w->heard = absl::Now();
    w->beaten = true;
    beat = true;
  }
}

absl::Status BulkClient::Silent(const Waiting& w) const {
  return errors::Unavailable(w.what, " from the bulk port ", host_, ":", w.port,
                             ": nothing heard for ", absl::FormatDuration(peer_silence_),
                             " (the task may be frozen, or its host gone)");
}

bool BulkClient::AnswerIsHere(int fd) {
  // The longest header: a tensor answer of the highest rank.
  char head[1 + 4 + 4 + 8 * kMaxRank + 8];
  const ssize_t n = recv(fd, head, sizeof(head), MSG_PEEK | MSG_DONTWAIT);
  if (n <= 0) return n == 0;  // a hang-up is quick to read; nothing yet is not
  const size_t got = static_cast<size_t>(n);
  size_t header = 1 + 8;
  if (got < header) return false;
  uint64_t length;
  switch (static_cast<uint8_t>(head[0])) {
    case kBytesAnswer:
    case kProtoAnswer:
      length = GetLength(head + 1);
      break;
    case kErrorAnswer:
    case kNotServed:
      length = GetLength(head + 5, 4);
      break;
    case kInPlaceAnswer:
      return false;  // its copy is large: on the pool
    case kStillWorking:
      return false;  // a beat that came meanwhile: the answer may take long
    case kTensorAnswer: {
      const uint64_t rank = GetLength(head + 5, 4);
      if (rank > kMaxRank) return true;  // garbage: quick to refuse
      header = 1 + 4 + 4 + 8 * rank + 8;
      if (got < header) return false;
      length = GetLength(head + header - 8);
      break;
    }
    default:
      return true;  // garbage: quick to refuse
  }
  int available = 0;
  if (ioctl(fd, FIONREAD, &available) != 0) return false;
  return length <= kInlineAnswerBytes && static_cast<uint64_t>(available) >= header + length;
}

void BulkClient::WatchLoop() {
  epoll_event events[64];
  for (;;) {
    int timeout_ms = -1;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
      watcher_wakes_ = absl::InfiniteFuture();
      for (const auto& [fd, w] : waiting_) {
        watcher_wakes_ = std::min({watcher_wakes_, w.deadline, w.heard + peer_silence_});
      }
      if (watcher_wakes_ != absl::InfiniteFuture()) {
        timeout_ms = static_cast<int>(std::clamp<int64_t>(
            absl::ToInt64Milliseconds(watcher_wakes_ - absl::Now()) + 1, 0,
            absl::ToInt64Milliseconds(kBulkMaxWait)));
      }
    }
    const int n = epoll_wait(epoll_fd_, events, 64, timeout_ms);
    if (n < 0 && errno != EINTR) absl::SleepFor(absl::Milliseconds(10));
    std::vector<Waiting> ready, expired;
    {
      absl::MutexLock lock(&mu_);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_fd_) {
          uint64_t drained;
          (void)!read(wake_fd_, &drained, sizeof(drained));
          continue;
        }
        auto it = waiting_.find(fd);
        if (it == waiting_.end()) continue;
        // Beats only (the server still works on it): heard, and still waiting.
        if (TakeBeats(fd, &it->second)) continue;
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);  // the fd may go back to the pool
        ready.push_back(std::move(it->second));
        waiting_.erase(it);
      }
      const absl::Time now = absl::Now();
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        if (it->second.deadline > now && it->second.heard + peer_silence_ > now) {
          ++it;
          continue;
        }
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
        expired.push_back(std::move(it->second));
        it = waiting_.erase(it);
      }
    }
    for (Waiting& w : expired) {
      close(w.fd);
      w.Finish(w.deadline <= absl::Now()
                   ? errors::DeadlineExceeded(w.what, " from the bulk port ", host_, ":", w.port,
                                              ": no answer before the deadline")
                   : Silent(w),
               Fallback::kNone);
    }
    // Small answers that are all here are read at once; the others on the
    // pool, so that a slow one does not hold up the rest.
    ThreadPool* pool;
    {
      absl::MutexLock lock(&mu_);
      pool = pool_.get();  // reset only after this thread has left
    }
    for (Waiting& w : ready) {
      if (AnswerIsHere(w.fd)) {
        ReadAnswer(std::move(w));
      } else {
        pool->Schedule([this, w = std::move(w)]() mutable { ReadAnswer(std::move(w)); });
      }
    }
  }
  FailWaiting();
}

void BulkClient::ReadAnswer(Waiting w) {
  // For errors only: not built on the way of an answer that arrives whole.
  auto what = [&] { return absl::StrCat(w.what, " from the bulk port ", host_, ":", w.port); };
  auto broken = [&](absl::string_view reading) {
    return Broken(w.fd, absl::StrCat(what(), ": ", reading));
  };
  // `length` bytes of an error or bytes answer into `*out`, at most `max`
  // (DataLoss beyond: the connection is closed). `of` names it in errors.
  auto read_body = [&](uint64_t length, uint64_t max, absl::string_view of,
                       std::string* out) -> absl::Status {
    if (length > max) {
      close(w.fd);
      return errors::DataLoss(what(), ": ", of, " of ", length, " bytes");
    }
    out->resize(length);
    if (ReadFull(w.fd, out->data(), out->size(), w.deadline) != out->size()) {
      return broken(absl::StrCat("reading ", of));
    }
    return absl::OkStatus();
  };
  char kind;
  if (w.heard == absl::InfinitePast()) w.heard = absl::Now();  // read on the caller's thread
  for (;;) {
    const absl::Time until = std::min(w.deadline, w.heard + peer_silence_);
    if (ReadFull(w.fd, &kind, 1, until) == 1) {
      if (static_cast<uint8_t>(kind) != kStillWorking) break;
      w.heard = absl::Now();
      w.beaten = true;
      continue;
    }
    if ((errno == 0 || errno == ECONNRESET) && !w.beaten) {
      // Hung up unanswered (at its limit, or stopping): never run.
      close(w.fd);
      if (w.pooled) DropIdle(w.port);
      return w.Finish(errors::Unavailable(what(), ": the server hung up before answering"),
                      Fallback::kOverGrpc);
    }
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && until < w.deadline) {
      close(w.fd);
      DropIdle(w.port);  // its other connections would be as silent
      return w.Finish(Silent(w), Fallback::kNone);
    }
    // Past the deadline, or a server that had said it worked on it broke.
    return w.Finish(broken("waiting for the answer"), Fallback::kNone);
  }
  if (static_cast<uint8_t>(kind) == kErrorAnswer || static_cast<uint8_t>(kind) == kNotServed) {
    char fixed[8];
    if (ReadFull(w.fd, fixed, sizeof(fixed), w.deadline) != sizeof(fixed)) {
      return w.Finish(broken("reading the error"), Fallback::kNone);
    }
    std::string body;
    if (absl::Status s = read_body(GetLength(fixed + 4, 4), kMaxErrorBytes, "an error answer",
                                   &body);
        !s.ok()) {
      return w.Finish(s, Fallback::kNone);
    }
    const absl::Status error = ParseError(GetLength(fixed, 4), body, what());
    // Refused unread (no handler, another task's port, too large): gRPC may
    // serve it. The server hangs up after refusing, as after a wrong token.
    const bool not_served = static_cast<uint8_t>(kind) == kNotServed;
    if (not_served || absl::IsUnauthenticated(error) || absl::IsDataLoss(error)) {
      close(w.fd);
    } else {
      Release(w.port, w.fd);
    }
    return w.Finish(error, not_served ? Fallback::kOverGrpc : Fallback::kNone);
  }
  if (w.call_done) {
    char fixed[8];
    if (static_cast<uint8_t>(kind) != kBytesAnswer ||
        ReadFull(w.fd, fixed, sizeof(fixed), w.deadline) != sizeof(fixed)) {
      return w.Finish(broken("reading the answer"), Fallback::kNone);
    }
    std::string answer;
    if (absl::Status s = read_body(GetLength(fixed), kMaxAnswerBytes, "an answer", &answer);
        !s.ok()) {
      return w.Finish(s, Fallback::kNone);
    }
    Release(w.port, w.fd);
    return w.Finish(absl::OkStatus(), Fallback::kNone, std::move(answer));
  }
  if (static_cast<uint8_t>(kind) == kProtoAnswer) {
    // A RecvTensor's tensor of strings: only such a request may get one.
    char fixed[8];
    std::string body;
    TensorProto proto;
    if (!w.may_take_proto) {
      close(w.fd);
      return w.Finish(errors::DataLoss(what(), ": a TensorProto answer to a RecvBuf"),
                      Fallback::kNone);
    }
    if (ReadFull(w.fd, fixed, sizeof(fixed), w.deadline) != sizeof(fixed)) {
      return w.Finish(broken("reading the answer"), Fallback::kNone);
    }
    if (absl::Status s = read_body(GetLength(fixed), kMaxAnswerBytes, "an answer", &body);
        !s.ok()) {
      return w.Finish(s, Fallback::kNone);
    }
    Release(w.port, w.fd);
    const bool parsed = proto.ParseFromString(body);
    std::string().swap(body);  // not held beside the proto and the tensor
    absl::StatusOr<Tensor> tensor =
        parsed ? TensorFromProto(proto)
               : absl::StatusOr<Tensor>(errors::DataLoss("the answer is not a TensorProto"));
    if (!tensor.ok()) return w.Finish(WithContext(tensor.status(), what()), Fallback::kNone);
    *w.out = *std::move(tensor);
    return w.Finish(absl::OkStatus(), Fallback::kNone);
  }
  char fixed[8];
  const bool in_place = static_cast<uint8_t>(kind) == kInPlaceAnswer;
  if (in_place && !w.may_read_in_place) {  // never asked: no memory of ours is read for it
    close(w.fd);
    return w.Finish(errors::DataLoss(what(), ": an in-place answer to a request that did not "
                                     "ask for one"),
                    Fallback::kNone);
  }
  if ((static_cast<uint8_t>(kind) != kTensorAnswer && !in_place) ||
      ReadFull(w.fd, fixed, sizeof(fixed), w.deadline) != sizeof(fixed)) {
    return w.Finish(broken("reading the answer"), Fallback::kNone);
  }
  const DataType dtype = static_cast<DataType>(GetLength(fixed, 4));
  const uint64_t rank = GetLength(fixed + 4, 4);
  std::vector<int64_t> dims(std::min<uint64_t>(rank, kMaxRank));
  std::vector<char> packed(dims.size() * 8 + 8);
  if (rank > kMaxRank ||
      ReadFull(w.fd, packed.data(), packed.size(), w.deadline) != packed.size()) {
    return w.Finish(broken("reading the answer"), Fallback::kNone);
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    dims[d] = static_cast<int64_t>(GetLength(packed.data() + 8 * d));
  }
  const uint64_t length = GetLength(packed.data() + 8 * dims.size());
  absl::StatusOr<TensorShape> shape = BuildTensorShape(dims);
  absl::Status bad;
  if (!DataTypeIsSupported(dtype) || IsRefType(dtype) || DataTypeIsObject(dtype)) {
    bad = errors::DataLoss(what(), ": an answer of dtype ", static_cast<int>(dtype));
  } else if (!shape.ok()) {
    bad = errors::DataLoss(what(), ": an answer of an invalid shape: ", shape.status().message());
  } else {
    const uint64_t elements = static_cast<uint64_t>(shape->num_elements());
    const uint64_t size = static_cast<uint64_t>(DataTypeSize(dtype));
    if ((size != 0 && elements > UINT64_MAX / size) || elements * size != length) {
      bad = errors::DataLoss(what(), ": ", length, " bytes for ", DataTypeString(dtype), " ",
                             shape->DebugString());
    }
  }
  const bool given = w.into != nullptr && w.into->IsInitialized();
  if (bad.ok() && given &&
      (w.into->dtype() != dtype || w.into->NumElements() != shape->num_elements())) {
    bad = errors::DataLoss(what(), ": ", DataTypeString(dtype), " ", shape->DebugString(),
                           " where ", DataTypeString(w.into->dtype()), " [",
                           w.into->NumElements(), "] was expected");
  }
  if (!bad.ok()) {
    close(w.fd);
    return w.Finish(bad, Fallback::kNone);
  }
  absl::StatusOr<Tensor> tensor =
      given ? absl::StatusOr<Tensor>(w.into->Reshaped(*shape)) : Tensor::Allocate(dtype, *shape);
  if (!tensor.ok()) {
    close(w.fd);
    return w.Finish(WithContext(tensor.status(), what()), Fallback::kNone);
  }
  char* dst = static_cast<char*>(tensor->raw_data());
  bool copied = false;
  if (in_place) {
    char where[8 * 3 + kNonceBytes];
    if (ReadFull(w.fd, where, sizeof(where), w.deadline) != sizeof(where)) {
      return w.Finish(broken("reading the answer"), Fallback::kNone);
    }
    const InPlace result =
        CopyInPlace(static_cast<pid_t>(GetLength(where)), GetLength(where + 8),
                    GetLength(where + 16), absl::string_view(where + 24, kNonceBytes), dst, length);
    // Not allowed, or not that process: from now on the bytes come on the
    // connection. (A copy that failed otherwise falls back just this once.)
    if (result == InPlace::kRefused) in_place_failed_.store(true);
    copied = result == InPlace::kCopied;
    const char verdict = copied ? 'D' : 'S';
    iovec iov{const_cast<char*>(&verdict), 1};
    if (!WriteFull(w.fd, &iov, 1)) return w.Finish(broken("answering the server"), Fallback::kNone);
    // The server still held the chunk when it saw 'D' only if it says so:
    // a server that gave up (its wait ran out, it is stopping) may have
    // freed what we copied.
    char ack = 0;
    if (copied && (ReadFull(w.fd, &ack, 1, w.deadline) != 1 || ack != 'A')) {
      return w.Finish(ack == 0 ? broken("waiting for the server to confirm the copy")
                               : errors::DataLoss(what(), ": the server confirmed no copy"),
                      Fallback::kNone);
    }
  }
  if (!copied && ReadFull(w.fd, dst, length, w.deadline) != length) {
    return w.Finish(broken("reading the chunk"), Fallback::kNone);
  }
  Release(w.port, w.fd);
  *w.out = *std::move(tensor);
  w.Finish(absl::OkStatus(), Fallback::kNone);
}

BulkClient::InPlace BulkClient::CopyInPlace(pid_t pid, uint64_t address, uint64_t nonce_address,
                                            absl::string_view nonce, char* dst, size_t length) {
  // First that `pid` is the server (not another process of that number in
  // our namespace): it holds this answer's nonce at that address.
  char seen[kNonceBytes];
  iovec local{seen, kNonceBytes};
  iovec remote{reinterpret_cast<void*>(nonce_address), kNonceBytes};
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(kNonceBytes)) {
    return errno == EFAULT ? InPlace::kFailed : InPlace::kRefused;  // EPERM, ESRCH, ENOSYS
  }
  if (std::memcmp(seen, nonce.data(), kNonceBytes) != 0) return InPlace::kRefused;
  size_t done = 0;
  while (done < length) {
    local = {dst + done, length - done};
    remote = {reinterpret_cast<void*>(address + done), length - done};
    const ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) return InPlace::kFailed;
    done += static_cast<size_t>(n);
  }
  return InPlace::kCopied;
}

void BulkClient::FetchAsync(int port, std::string id, char* dst, size_t bytes,
                            absl::Time deadline, FetchCallback done) {
  auto fetch_done = std::make_shared<FetchCallback>(std::move(done));
  const bool queued = Schedule([this, port, id = std::move(id), dst, bytes, deadline,
                                fetch_done] {
    FetchCallback& done = *fetch_done;
    Fallback fallback = Fallback::kNone;
    absl::Status s = Fetch(port, id, dst, bytes, deadline, &fallback);
    NoFallbackWhileClosing(closing_, "a bulk fetch", &s, &fallback);
    done(std::move(s), fallback);
  });
  if (!queued) (*fetch_done)(Closing("a bulk fetch"), Fallback::kNone);
}

int BulkClient::TakeIdle(int port) {
  for (;;) {
    int fd;
    {
      absl::MutexLock lock(&mu_);
      std::vector<int>& idle = idle_[port];
      if (idle.empty()) return -1;
      fd = idle.back();
      idle.pop_back();
    }
    // Readable while idle means closed by the server (its idle timeout, a
    // refusal, a restart): try the next one.
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) == 0) return fd;
    close(fd);
  }
}

int BulkClient::Connect(int port, absl::Time deadline, bool* pooled, absl::Status* status,
                        Fallback* fallback) {
  if (const int fd = TakeIdle(port); fd >= 0) {
    *pooled = true;
    return fd;
  }
  *pooled = false;
  const std::string where = absl::StrCat(host_, ":", port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host_.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    *status = errors::Unavailable("cannot resolve the bulk port's host ", where, ": ",
                                  gai_strerror(rc));
    *fallback = Fallback::kPortUnreachable;
    return -1;
  }
  std::string why = "no address";
  bool refused = false;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                          a->ai_protocol);
    if (fd < 0) continue;
    int error = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        const absl::Time started = absl::Now();
        const absl::Time until = std::min(deadline, started + kConnectTimeout);
        pollfd p{fd, POLLOUT, 0};
        int ready;
        do {
          const absl::Duration wait = std::max(absl::ZeroDuration(), until - absl::Now());
          ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(wait)));
        } while (ready < 0 && errno == EINTR);
        socklen_t len = sizeof(error);
        if (ready == 1) {
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
        } else if (until == deadline) {
          close(fd);
          freeaddrinfo(found);
          *status = errors::DeadlineExceeded("the deadline passed connecting to the bulk port ",
                                             where);
          // Nothing was sent, so gRPC may still carry it. A port silent for
          // a second (a firewall that drops) is as good as unreachable; a
          // shorter deadline tells nothing about the port.
          *fallback = absl::Now() - started >= absl::Seconds(1) ? Fallback::kPortUnreachable
                                                                : Fallback::kOverGrpc;
          return -1;
        } else {
          error = ETIMEDOUT;
        }
      }
    }
    if (error == 0) {
      const int flags = fcntl(fd, F_GETFL);
      fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
      NoDelay(fd);
      KeepAlive(fd);
      freeaddrinfo(found);
      return fd;
    }
    why = std::strerror(error);
    refused = error == ECONNREFUSED;
    close(fd);
  }
  freeaddrinfo(found);
  *status = errors::Unavailable("cannot connect to the bulk port ", where, ": ", why);
  *fallback = refused ? Fallback::kPortRefused : Fallback::kPortUnreachable;
  return -1;
}

void BulkClient::DropIdle(int port) {
  absl::MutexLock lock(&mu_);
  for (int fd : idle_[port]) close(fd);
  idle_[port].clear();
}

void BulkClient::Release(int port, int fd) {
  // Reads poll until their deadline, and a request's blocking send sets its
  // own timeout first (a one-byte verdict cannot block): nothing to reset.
  absl::MutexLock lock(&mu_);
  std::vector<int>& idle = idle_[port];
  if (idle.size() < kMaxIdlePerPort) {
    idle.push_back(fd);
  } else {
    close(fd);
  }
}

absl::Status BulkClient::Fetch(int port, const std::string& id, char* dst, size_t bytes,
                               absl::Time deadline, Fallback* fallback) {
  Fallback ignored;
  if (fallback == nullptr) fallback = &ignored;
  *fallback = Fallback::kNone;
  if (id.size() != kBulkTicketBytes) {
    return errors::InvalidArgument("a bulk ticket has ", kBulkTicketBytes, " bytes, not ",
                                   id.size());
  }
  const std::string where = absl::StrCat("bulk port ", host_, ":", port);
  char request[kRequestBytes];
  std::memcpy(request, kMagic, sizeof(kMagic));
  std::memcpy(request + sizeof(kMagic), id.data(), kBulkTicketBytes);
  for (;;) {
    if (absl::Now() >= deadline) {
      return errors::DeadlineExceeded("the deadline passed before fetching from the ", where);
    }
    bool pooled = false;
    absl::Status status;
    const int fd = Connect(port, deadline, &pooled, &status, fallback);
    if (fd < 0) return status;
    SetTimeout(fd, SO_SNDTIMEO, deadline - absl::Now());
    iovec iov{request, kRequestBytes};
    char header[kHeaderBytes];
    size_t got = 0;
    if (WriteFull(fd, &iov, 1)) got = ReadFull(fd, header, kHeaderBytes, deadline);
    const bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
    const std::string why = Errno();
    if (got == 0 && !timed_out) {
      // Hung up before answering: the server never took the ticket.
      close(fd);
      if (pooled) {  // it had closed an idle connection: so, likely, the others
        DropIdle(port);
        continue;
      }
      *fallback = Fallback::kOverGrpc;  // at its connection limit, or stopping
      return errors::Unavailable("the ", where, " hung up before answering: ", why);
    }
    if (got == kHeaderBytes) {
      const uint8_t code = static_cast<uint8_t>(header[0]);
      const uint64_t length = GetLength(header + 1);
      if (code == kUnknownTicket) {
        Release(port, fd);
        return errors::NotFound("the ", where,
                                " no longer holds the ticket (fetched already, expired, or the "
                                "task restarted)");
      }
      if (code != kOk || length != bytes) {
        close(fd);
        return errors::DataLoss("the ", where, " answered code ", static_cast<int>(code),
                                " with ", length, " bytes; expected ", bytes);
      }
      if (ReadFull(fd, dst, bytes, deadline) == bytes) {
        Release(port, fd);
        return absl::OkStatus();
      }
    }
    return Broken(fd, absl::StrCat(got == kHeaderBytes ? "reading the tensor" : "reading the answer",
                                   " from the ", where));
  }
}

}  // namespace tensorgrid
