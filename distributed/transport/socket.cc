#include "distributed/transport/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "distributed/transport/frames.h"

namespace tensorgrid {
namespace bulk {
namespace {

// The longest a connect may take, whatever the deadline.
constexpr absl::Duration kConnectTimeout = absl::Seconds(3);

// getaddrinfo's answer, freed with it.
using AddressList = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

// getaddrinfo's addresses; Unavailable with its reason alone.
absl::StatusOr<AddressList> Resolve(const std::string& host, const std::string& port,
                                    bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return errors::Unavailable(gai_strerror(rc));
  }
  return AddressList(found, &freeaddrinfo);
}

// Waits until the non-blocking connect on `fd` is done or `until`; its
// error (0 once connected), or ETIMEDOUT.
int FinishConnect(int fd, absl::Time until) {
  pollfd p{fd, POLLOUT, 0};
  int ready;
  do {
    const absl::Duration wait = std::max(absl::ZeroDuration(), until - absl::Now());
    ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(wait)));
  } while (ready < 0 && errno == EINTR);
  if (ready != 1) return ETIMEDOUT;
  int error = 0;
  socklen_t len = sizeof(error);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
  return error;
}

}  // namespace

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

namespace {

// After a recv found nothing (EAGAIN): waits until `fd` is readable or
// `deadline` passes. False when it passed (errno stays EAGAIN) or poll
// failed; true means "recv again" (bytes came, or the deadline is near).
bool WaitReadable(int fd, absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return false;
  pollfd p{fd, POLLIN, 0};
  const int ms = static_cast<int>(
      std::min(absl::ToInt64Milliseconds(left) + 1, absl::ToInt64Milliseconds(kBulkMaxWait)));
  return poll(&p, 1, ms) >= 0 || errno == EINTR;
}

}  // namespace

size_t ReadFull(int fd, char* buf, size_t n, absl::Time deadline) {
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
        if (!WaitReadable(fd, deadline)) break;
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

bool ReadGrowing(int fd, uint64_t n, std::string* out, absl::Time deadline) {
  // Read through a small buffer and appended: `out` never holds more room
  // than about twice what arrived, whatever `n` claims.
  char chunk[64 << 10];
  out->clear();
  try {
    while (out->size() < n) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(chunk), n - out->size()));
      const size_t got = ReadFull(fd, chunk, want, deadline);
      out->append(chunk, got);
      if (got != want) return false;
    }
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return false;
  }
  return true;
}

ssize_t Incoming::Receive(bool wait) {
  char chunk[kReadAhead];
  ssize_t r;
  do {
    r = recv(fd_, chunk, sizeof(chunk), wait ? 0 : MSG_DONTWAIT);
  } while (r < 0 && errno == EINTR);
  if (r == 0) errno = 0;
  if (r > 0) {
    // What was read goes first: the buffer holds at most what is ahead
    // and one recv, however long the stream.
    ahead_->bytes.erase(0, ahead_->taken);
    ahead_->taken = 0;
    ahead_->bytes.append(chunk, static_cast<size_t>(r));
  }
  return r;
}

void Incoming::Skip(size_t n) {
  ahead_->taken += std::min(n, ahead_->bytes.size() - ahead_->taken);
  if (ahead_->empty()) {
    ahead_->bytes.clear();
    ahead_->taken = 0;
  }
}

size_t Incoming::TakeAhead(char* buf, size_t n) {
  const size_t take = std::min(n, ahead_->bytes.size() - ahead_->taken);
  std::memcpy(buf, ahead_->bytes.data() + ahead_->taken, take);
  Skip(take);
  return take;
}

bool Incoming::Fill(absl::Time deadline) {
  const bool forever = deadline == absl::InfiniteFuture();
  for (;;) {
    // Blocking when there is no deadline (the socket's SO_RCVTIMEO may
    // still end it, EAGAIN); else what has arrived, then a wait.
    const ssize_t r = Receive(/*wait=*/forever);
    if (r > 0) return true;
    if (r == 0 || forever || (errno != EAGAIN && errno != EWOULDBLOCK)) return false;
    if (!WaitReadable(fd_, deadline)) return false;
  }
}

size_t Incoming::ReadFull(char* buf, size_t n, absl::Time deadline) {
  size_t got = TakeAhead(buf, n);
  // A short read takes whatever has arrived with its bytes (the rest of a
  // small answer, the next items); a long one goes straight to `buf`.
  while (got < n && n - got < kReadAhead) {
    if (!Fill(deadline)) return got;
    got += TakeAhead(buf + got, n - got);
  }
  if (got < n) got += bulk::ReadFull(fd_, buf + got, n - got, deadline);
  return got;
}

bool Incoming::ReadGrowing(uint64_t n, std::string* out, absl::Time deadline) {
  out->clear();
  const size_t take = static_cast<size_t>(std::min<uint64_t>(n, ahead_->view().size()));
  try {
    out->append(ahead_->bytes.data() + ahead_->taken, take);
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return false;
  }
  Skip(take);
  if (take == n) return true;
  std::string rest;
  if (!bulk::ReadGrowing(fd_, n - take, &rest, deadline)) {
    out->append(rest);
    return false;
  }
  try {
    if (out->empty()) {
      out->swap(rest);
    } else {
      out->append(rest);
    }
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return false;
  }
  return true;
}

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

bool WriteFull(int fd, absl::string_view bytes) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  return WriteFull(fd, &iov, 1);
}

std::string Errno() { return errno == 0 ? "the connection was closed" : std::strerror(errno); }

absl::Status IoFailure(absl::string_view what) {
  if (errno == EAGAIN || errno == EWOULDBLOCK) {
    return errors::DeadlineExceeded(what, ": the deadline passed");
  }
  return errors::Unavailable(what, ": ", Errno());
}

void SetTimeout(int fd, int option, absl::Duration timeout) {
  timeout = std::max(timeout, absl::Milliseconds(1));
  const timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

void NoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void KeepAlive(int fd) {
  const int one = 1, idle = 10, interval = 5, count = 2, unacked_ms = 20000;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &unacked_ms, sizeof(unacked_ms));
}

bool PeerHungUp(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return true;
  char c;
  return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) != 0;
}

absl::StatusOr<Listener> Listen(const std::string& host, int port) {
  absl::StatusOr<AddressList> found =
      Resolve(HostOf(absl::StrCat(host, ":0")), std::to_string(port), true);
  if (!found.ok()) {
    return errors::Unavailable("bulk port: cannot resolve '", host,
                               "': ", found.status().message());
  }
  std::string why = "no address";
  for (addrinfo* a = found->get(); a != nullptr; a = a->ai_next) {
    UniqueFd fd(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    // A fixed port: free again as soon as a previous server's is closed.
    const int one = 1;
    if (port != 0) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || listen(fd.get(), 128) != 0 ||
        getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      why = std::strerror(errno);
      continue;
    }
    Listener listener;
    listener.port =
        ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    listener.fd = std::move(fd);
    return listener;
  }
  return errors::Unavailable("bulk port: cannot listen on ", host,
                             port != 0 ? absl::StrCat(" port ", port) : std::string(), ": ", why);
}

absl::StatusOr<UniqueFd> Connect(const std::string& host, int port, absl::Time deadline,
                                 ConnectFailure* failure) {
  const std::string where = absl::StrCat(host, ":", port);
  absl::StatusOr<AddressList> found = Resolve(host, std::to_string(port), false);
  if (!found.ok()) {
    *failure = ConnectFailure::kUnreachable;
    return errors::Unavailable("cannot resolve the bulk port's host ", where, ": ",
                               found.status().message());
  }
  std::string why = "no address";
  bool refused = false;
  for (addrinfo* a = found->get(); a != nullptr; a = a->ai_next) {
    UniqueFd fd(
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
    if (!fd.valid() &&
        (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      // Says nothing about the port: this request goes another way, and
      // the port stays in use.
      *failure = ConnectFailure::kNoSocket;
      return errors::Unavailable("cannot open a socket to the bulk port ", where, ": ",
                                 std::strerror(errno));
    }
    if (!fd.valid()) continue;
    int error = 0;
    if (connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        const absl::Time started = absl::Now();
        const absl::Time until = std::min(deadline, started + kConnectTimeout);
        error = FinishConnect(fd.get(), until);
        if (error == ETIMEDOUT && until == deadline) {
          // Nothing was sent, so another path may still carry it. A port
          // silent for a second (a firewall that drops) is as good as
          // unreachable; a shorter deadline tells nothing about the port.
          *failure = absl::Now() - started >= absl::Seconds(1) ? ConnectFailure::kUnreachable
                                                               : ConnectFailure::kDeadline;
          return errors::DeadlineExceeded("the deadline passed connecting to the bulk port ",
                                          where);
        }
      }
    }
    if (error == 0) {
      const int flags = fcntl(fd.get(), F_GETFL);
      fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
      NoDelay(fd.get());
      KeepAlive(fd.get());
      return fd;
    }
    why = std::strerror(error);
    refused = error == ECONNREFUSED;
  }
  *failure = refused ? ConnectFailure::kRefused : ConnectFailure::kUnreachable;
  return errors::Unavailable("cannot connect to the bulk port ", where, ": ", why);
}

std::string HostOf(absl::string_view address) {
  const size_t colon = address.rfind(':');
  absl::string_view host = colon == absl::string_view::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::string(host);
}

}  // namespace bulk
}  // namespace tensorgrid
