#include "distributed/rpc/bulk_transfer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/framework/types.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// A request: the magic, then the ticket id.
constexpr char kMagic[4] = {'T', 'G', 'B', '1'};
constexpr size_t kRequestBytes = sizeof(kMagic) + kBulkTicketBytes;
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
// The longest a connect may take, whatever the deadline.
constexpr absl::Duration kConnectTimeout = absl::Seconds(10);

void PutLength(uint64_t n, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

uint64_t GetLength(const char* in) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return n;
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
    if (deadline != absl::InfiniteFuture()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        errno = EAGAIN;
        break;
      }
      SetTimeout(fd, SO_RCVTIMEO, left);
    }
    const ssize_t r = recv(fd, buf + got, n - got, 0);
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

}  // namespace

bool WantsBulk(const Tensor& tensor) {
  return tensor.IsInitialized() && tensor.dtype() != DT_STRING && tensor.dtype() != DT_RESOURCE &&
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

struct BulkServer::State {
  State(int listener, const Options& options) : options(options), listener(listener) {}
  void AcceptLoop(const std::shared_ptr<State>& self);
  void SweepExpired() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const absl::Time now = absl::Now();
    for (auto it = tickets.begin(); it != tickets.end();) {
      it = it->second.expires < now ? tickets.erase(it) : std::next(it);
    }
  }
  void Serve(int fd);
  std::optional<Tensor> Take(absl::string_view id);

  const Options options;
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
  for (int fd : state_->connections) shutdown(fd, SHUT_RDWR);  // each thread closes its own
  state_->mu.Await(absl::Condition(
      +[](int* threads) { return *threads == 0; }, &state_->threads));
}

int64_t BulkServer::fetches() const {
  absl::MutexLock lock(&state_->mu);
  return state_->fetches;
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
  // on a new one.
  SetTimeout(fd, SO_RCVTIMEO, kServerIdleTimeout);
  char request[kRequestBytes];
  // One fetch after another until the client goes or sends garbage.
  while (ReadFull(fd, request, kRequestBytes) == kRequestBytes &&
         std::memcmp(request, kMagic, sizeof(kMagic)) == 0) {
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

BulkClient::BulkClient(std::string host) : host_(std::move(host)) {}

BulkClient::~BulkClient() {
  std::unique_ptr<ThreadPool> pool;
  {
    absl::MutexLock lock(&mu_);
    pool = std::move(pool_);
  }
  pool.reset();  // waits for the fetches in flight
  absl::MutexLock lock(&mu_);
  for (auto& [port, fds] : idle_) {
    for (int fd : fds) close(fd);
  }
}

void BulkClient::FetchAsync(int port, std::string id, char* dst, size_t bytes,
                            absl::Time deadline, FetchCallback done) {
  ThreadPool* pool;
  {
    absl::MutexLock lock(&mu_);
    if (pool_ == nullptr) pool_ = std::make_unique<ThreadPool>(kClientThreads);
    pool = pool_.get();
  }
  pool->Schedule([this, port, id = std::move(id), dst, bytes, deadline, done = std::move(done)] {
    Fallback fallback = Fallback::kNone;
    absl::Status s = Fetch(port, id, dst, bytes, deadline, &fallback);
    done(std::move(s), fallback);
  });
}

int BulkClient::Connect(int port, absl::Time deadline, bool* pooled, absl::Status* status) {
  {
    absl::MutexLock lock(&mu_);
    std::vector<int>& idle = idle_[port];
    *pooled = !idle.empty();
    if (*pooled) {
      const int fd = idle.back();
      idle.pop_back();
      return fd;
    }
  }
  const std::string where = absl::StrCat(host_, ":", port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host_.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    *status = errors::Unavailable("cannot resolve the bulk port's host ", where, ": ",
                                  gai_strerror(rc));
    return -1;
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                          a->ai_protocol);
    if (fd < 0) continue;
    int error = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        const absl::Time until = std::min(deadline, absl::Now() + kConnectTimeout);
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
      freeaddrinfo(found);
      return fd;
    }
    why = std::strerror(error);
    close(fd);
  }
  freeaddrinfo(found);
  *status = errors::Unavailable("cannot connect to the bulk port ", where, ": ", why);
  return -1;
}

void BulkClient::DropIdle(int port) {
  absl::MutexLock lock(&mu_);
  for (int fd : idle_[port]) close(fd);
  idle_[port].clear();
}

void BulkClient::Release(int port, int fd) {
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
    const int fd = Connect(port, deadline, &pooled, &status);
    if (fd < 0) {
      if (status.code() == absl::StatusCode::kUnavailable) *fallback = Fallback::kPortUnreachable;
      return status;
    }
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
    const bool late = errno == EAGAIN || errno == EWOULDBLOCK;
    const std::string broke = Errno();
    close(fd);
    const char* what = got == kHeaderBytes ? "reading the tensor" : "reading the answer";
    if (late) return errors::DeadlineExceeded(what, " from the ", where, ": the deadline passed");
    return errors::Unavailable(what, " from the ", where, ": ", broke);
  }
}

}  // namespace tensorgrid
