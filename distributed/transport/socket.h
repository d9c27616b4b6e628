// Sockets for the bulk port: an owning file descriptor, whole reads and
// writes with deadlines, listening and connecting with errors that say
// whether a caller may try another path.
//
//   TG_ASSIGN_OR_RETURN(bulk::Listener listener, bulk::Listen("127.0.0.1"));
//   bulk::ConnectFailure failure;
//   absl::StatusOr<bulk::UniqueFd> fd = bulk::Connect(host, port, deadline, &failure);
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_SOCKET_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_SOCKET_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tensorgrid {
namespace bulk {

// Owns a file descriptor: closes it when destroyed or reset. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor held, if any, and holds `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Reads exactly `n` bytes, each read waiting at most until `deadline` (none
// when infinite). Returns how many arrived before EOF or an error (errno
// tells which: 0 for EOF, EAGAIN for the deadline). What has already
// arrived is read even past the deadline.
size_t ReadFull(int fd, char* buf, size_t n, absl::Time deadline = absl::InfiniteFuture());
// Reads `n` bytes into `*out` (replacing what it held), growing it as they
// arrive rather than all at once: a header may promise more than ever comes,
// and memory is spent only on what came. False when the connection ends or
// the deadline passes first (errno as for ReadFull), or memory runs out
// (ENOMEM).
bool ReadGrowing(int fd, uint64_t n, std::string* out,
                 absl::Time deadline = absl::InfiniteFuture());

// A connection's incoming bytes, read through a buffer its owner keeps
// (`ahead`, which outlives any one Incoming): a read of a few bytes takes
// up to kReadAhead of whatever has arrived in the same system call, so a
// small answer's header and body (or several RecvTensors items) cost one
// recv, not one each. Once bytes are ahead, every read of the connection
// must go through an Incoming over the same buffer, or they would be
// skipped. Large reads go straight to the caller's memory.
class Incoming {
 public:
  static constexpr size_t kReadAhead = 16 << 10;
  // What was received and not yet read.
  struct Ahead {
    std::string bytes;
    size_t taken = 0;  // bytes[0, taken) were read
    bool empty() const { return taken == bytes.size(); }
    absl::string_view view() const { return absl::string_view(bytes).substr(taken); }
  };

  Incoming(int fd, Ahead* ahead) : fd_(fd), ahead_(ahead) {}
  int fd() const { return fd_; }
  absl::string_view ahead() const { return ahead_->view(); }

  // One recv of what has arrived (at most kReadAhead), appended to what
  // is ahead; without waiting unless `wait`. >0: the bytes received; 0:
  // the connection ended (errno 0); -1: errno (EAGAIN: nothing yet).
  ssize_t Receive(bool wait = false);
  // Drops `n` bytes that are ahead.
  void Skip(size_t n);
  // As ReadFull and ReadGrowing above, the bytes ahead first.
  size_t ReadFull(char* buf, size_t n, absl::Time deadline = absl::InfiniteFuture());
  bool ReadGrowing(uint64_t n, std::string* out, absl::Time deadline = absl::InfiniteFuture());

 private:
  size_t TakeAhead(char* buf, size_t n);
  // Receives at least a byte, waiting until `deadline`; false as ReadFull
  // ends short (errno 0: the end; EAGAIN: the deadline).
  bool Fill(absl::Time deadline);

  const int fd_;
  Ahead* const ahead_;
};

// Writes every byte of `iov` (it is consumed). False on an error (errno).
bool WriteFull(int fd, iovec* iov, int count);
bool WriteFull(int fd, absl::string_view bytes);

// The failure of a read or write that just failed (errno): DeadlineExceeded
// when a deadline's timeout fired, else Unavailable (the peer stopped or
// died); the message says `what`.
absl::Status IoFailure(absl::string_view what);
// errno as words; "the connection was closed" for 0 (EOF).
std::string Errno();

// SO_SNDTIMEO / SO_RCVTIMEO of at least a millisecond.
void SetTimeout(int fd, int option, absl::Duration timeout);
void NoDelay(int fd);
// A peer whose host vanishes (no FIN) is noticed within about 20 s, as
// gRPC's keepalive does, instead of at the request's deadline.
void KeepAlive(int fd);
// Whether the peer on `fd`, which sends nothing while it waits for an
// answer, has closed its end (or the connection broke).
bool PeerHungUp(int fd);
// Whether `fd` is readable now (for an idle connection: closed by the peer).
bool Readable(int fd);

// A listening socket and the port the kernel gave it.
struct Listener {
  UniqueFd fd;
  int port = 0;
};
// Listens on `host` ("127.0.0.1", "0.0.0.0", a name), on `port`, or on one
// the kernel picks (0). Unavailable naming the host (and the port) when it
// cannot.
absl::StatusOr<Listener> Listen(const std::string& host, int port = 0);

// Why a connect failed, for a caller deciding what to try next.
enum class ConnectFailure {
  kUnreachable,  // no route, no answer for a second or more, cannot resolve
  kRefused,      // nothing listens on the port
  kDeadline,     // the caller's deadline came first, too soon to tell
  kNoSocket,     // this process could not open a socket (out of file descriptors)
};
// A blocking, connected TCP socket to `host`:`port` (TCP_NODELAY,
// keepalive), within min(deadline, 3 s). Unavailable, or DeadlineExceeded
// when `deadline` came first, with `*failure` set.
absl::StatusOr<UniqueFd> Connect(const std::string& host, int port, absl::Time deadline,
                                 ConnectFailure* failure);

// The host part of "host:port" or "[v6]:port" (brackets removed).
std::string HostOf(absl::string_view address);

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_SOCKET_H_
