#include "distributed/transport/bulk_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>
#include <utility>

#include "core/framework/types.h"
#include "core/platform/status.h"
#include "distributed/transport/server_state.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {
namespace {

// How long a server's write may stall on a client that stopped reading.
constexpr absl::Duration kSendTimeout = absl::Seconds(60);
// How often a server drops expired tickets when nothing else happens.
constexpr absl::Duration kSweepInterval = absl::Seconds(5);
// How long a server keeps a connection that sends no request.
constexpr absl::Duration kIdleTimeout = absl::Seconds(120);

// The peer's address without its port ("127.0.0.1", "::1"): connections
// are counted per peer.
std::string PeerAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
              sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, text,
              sizeof(text));
  }
  return text;
}

}  // namespace

bool WantsBulk(const Tensor& tensor) {
  return tensor.IsInitialized() && !DataTypeIsObject(tensor.dtype()) &&
         tensor.TotalBytes() >= kBulkMinBytes;
}

absl::StatusOr<std::unique_ptr<BulkServer>> BulkServer::Start(const std::string& host,
                                                              const Options& options) {
  TG_ASSIGN_OR_RETURN(bulk::Listener listener, bulk::Listen(host, options.port));
  auto state = std::make_shared<State>(options);
  const int fd = listener.fd.get();
  {
    absl::MutexLock lock(&state->mu);
    state->listener = fd;
    ++state->threads;
  }
  try {
    std::thread([state, fd] { state->AcceptLoop(fd); }).detach();
  } catch (const std::system_error& e) {
    return errors::Unavailable("bulk port: cannot start its thread: ", e.what());
  }
  listener.fd.release();  // the accept loop closes it
  // Clients of this process call straight in (local_ports.h).
  if (options.serve_in_process) {
    state->local_id = bulk::RegisterLocalPort(
        listener.port, host, options.advertised_host,
        [weak = std::weak_ptr<State>(state)](const bulk::LocalCall& call,
                                             bulk::LocalCallDone done) -> bulk::LocalCallWithdraw {
          std::shared_ptr<State> state = weak.lock();
          return state == nullptr ? nullptr : state->CallHere(call, std::move(done));
        });
  }
  return std::unique_ptr<BulkServer>(new BulkServer(std::move(state), listener.port));
}

BulkServer::BulkServer(std::shared_ptr<State> state, int port)
    : state_(std::move(state)), port_(port) {}

BulkServer::~BulkServer() { Stop(); }

std::string BulkServer::Offer(const Tensor& tensor) {
  std::string id = bulk::RandomBytes(kBulkTicketBytes);
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

void BulkServer::ServeRecvTensor(RecvTensorFn fn) {
  absl::MutexLock lock(&state_->mu);
  state_->recv_tensor = std::move(fn);
}

void BulkServer::ServeCall(const std::string& method, CallFn fn) {
  absl::MutexLock lock(&state_->mu);
  state_->calls[method] = std::move(fn);
}

BulkServer::Answer BulkServer::Bytes(std::string bytes) {
  return [bytes = std::move(bytes)]() mutable -> absl::StatusOr<std::string> {
    return std::move(bytes);
  };
}

void BulkServer::StopListening() {
  absl::MutexLock lock(&state_->mu);
  state_->listening = false;
  if (state_->listener >= 0) shutdown(state_->listener, SHUT_RDWR);  // the loop closes it
}

void BulkServer::Stop() {
  bulk::UnregisterLocalPort(port_, state_->local_id);
  state_->StopLocalCalls();  // sets `stopped`; calls from this process have no connection to close
  absl::MutexLock lock(&state_->mu);
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

int64_t BulkServer::tensor_batches() const {
  absl::MutexLock lock(&state_->mu);
  return state_->tensor_batches;
}

int64_t BulkServer::fetches() const {
  absl::MutexLock lock(&state_->mu);
  return state_->fetches;
}

int64_t BulkServer::calls() const {
  absl::MutexLock lock(&state_->mu);
  return state_->calls_served;
}

int64_t BulkServer::calls_in_process() const {
  absl::MutexLock lock(&state_->mu);
  return state_->calls_in_process;
}

int64_t BulkServer::calls_waiting() const {
  absl::MutexLock lock(&state_->mu);
  return state_->unanswered;
}

int64_t BulkServer::connections() const {
  absl::MutexLock lock(&state_->mu);
  return static_cast<int64_t>(state_->connections.size());
}

int64_t BulkServer::in_place_reads() const {
  absl::MutexLock lock(&state_->mu);
  return state_->in_place_reads;
}

void BulkServer::State::SweepExpired() {
  const absl::Time now = absl::Now();
  for (auto it = tickets.begin(); it != tickets.end();) {
    it = it->second.expires < now ? tickets.erase(it) : std::next(it);
  }
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

void BulkServer::State::AcceptLoop(int fd_listening) {
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
    sockaddr_storage address{};
    socklen_t address_size = sizeof(address);
    bulk::UniqueFd fd(
        accept4(fd_listening, reinterpret_cast<sockaddr*>(&address), &address_size, SOCK_CLOEXEC));
    const int error = fd.valid() ? 0 : errno;
    const bool exhausted =
        error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
    if (exhausted) absl::SleepFor(absl::Milliseconds(50));  // out of descriptors: try again
    absl::MutexLock lock(&mu);
    if (!fd.valid()) {
      if ((exhausted || error == EINTR || error == ECONNABORTED) && listening) continue;
      close(fd_listening);  // shut down by Stop or StopListening
      listener = -1;
      --threads;
      return;
    }
    if (StartServing(fd.get(), PeerAddress(address)).ok()) fd.release();  // Serve closes it
  }
}

absl::Status BulkServer::State::StartServing(int fd, std::string peer) {
  if (stopped) return errors::Unavailable("the bulk port is stopped");
  if (static_cast<int>(connections.size()) >= options.max_connections) {
    return errors::ResourceExhausted("the bulk port serves ", connections.size(),
                                     " connections, its limit");
  }
  if (per_peer[peer] >= options.max_connections_per_peer) {
    return errors::ResourceExhausted("the bulk port serves ", per_peer[peer], " connections from ",
                                     peer, ", its limit per peer");
  }
  std::shared_ptr<State> self = shared_from_this();
  try {
    std::thread([self, fd] { self->Serve(fd); }).detach();
  } catch (const std::system_error&) {  // out of threads: as over the limit
    return errors::ResourceExhausted("the bulk port cannot start a thread for a connection");
  }
  connections.insert(fd);
  ++per_peer[peer];
  peer_of[fd] = std::move(peer);
  ++threads;
  return absl::OkStatus();
}

absl::Status BulkServer::ServeConnection(int fd) {
  bulk::UniqueFd connection(fd);
  sockaddr_storage address{};
  socklen_t address_size = sizeof(address);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &address_size) != 0) {
    address.ss_family = AF_UNSPEC;  // counted as the peer "?", as a socketpair's end is
  }
  absl::MutexLock lock(&state_->mu);
  TG_RETURN_IF_ERROR(state_->StartServing(fd, PeerAddress(address)));
  connection.release();  // Serve closes it
  return absl::OkStatus();
}

void BulkServer::State::Serve(int fd) {
  // StartServing's caller holds `mu` until it has counted this thread, so
  // the bookkeeping at the end always balances.
  ServeRequests(fd);
  absl::MutexLock lock(&mu);
  connections.erase(fd);
  if (auto it = peer_of.find(fd); it != peer_of.end()) {
    if (--per_peer[it->second] == 0) per_peer.erase(it->second);
    peer_of.erase(it);
  }
  close(fd);
  --threads;
}

void BulkServer::State::ServeRequests(int fd) {
  bulk::NoDelay(fd);
  bulk::SetTimeout(fd, SO_SNDTIMEO, kSendTimeout);
  // A pooled connection left idle this long is closed; its client retries
  // on a new one. (Reads with a deadline poll instead.)
  bulk::SetTimeout(fd, SO_RCVTIMEO, kIdleTimeout);
  // Every read of the connection goes through `in`: one recv takes a
  // request's header and names together.
  bulk::Incoming::Ahead ahead;
  bulk::Incoming in(fd, &ahead);
  for (;;) {
    // Between requests the connection may idle (kIdleTimeout); once a
    // request's first byte came, its whole header has Options::header_timeout.
    char magic[bulk::kMagicBytes];
    if (in.ReadFull(magic, 1) != 1) break;
    const absl::Time header_deadline = absl::Now() + options.header_timeout;
    if (in.ReadFull(magic + 1, sizeof(magic) - 1, header_deadline) != sizeof(magic) - 1) {
      break;
    }
    const std::optional<bulk::RequestKind> kind =
        bulk::RequestKindOf(absl::string_view(magic, sizeof(magic)));
    if (!kind) break;  // garbage
    bool served = false;
    switch (*kind) {
      case bulk::RequestKind::kTicket: served = ServeTicket(in, header_deadline); break;
      case bulk::RequestKind::kRecvBuf:
        served = ServeTensorRequest(in, /*rendezvous=*/false, header_deadline);
        break;
      case bulk::RequestKind::kRecvTensor:
        served = ServeTensorRequest(in, /*rendezvous=*/true, header_deadline);
        break;
      case bulk::RequestKind::kRecvTensors:
        served = ServeTensorsRequest(in, header_deadline);
        break;
      case bulk::RequestKind::kCall: served = ServeCall(in, header_deadline); break;
    }
    if (!served) break;
  }
}

bool BulkServer::State::ServeTicket(bulk::Incoming& in, absl::Time header_deadline) {
  const int fd = in.fd();
  char id[kBulkTicketBytes];
  if (in.ReadFull(id, sizeof(id), header_deadline) != sizeof(id)) return false;
  std::optional<Tensor> tensor = Take(absl::string_view(id, sizeof(id)));
  if (tensor) {  // counted before the client can see the bytes
    absl::MutexLock lock(&mu);
    ++fetches;
  }
  const absl::string_view bytes =
      tensor ? absl::string_view(static_cast<const char*>(tensor->raw_data()), tensor->TotalBytes())
             : absl::string_view();
  bulk::TicketAnswer answer;
  answer.code = tensor ? bulk::TicketAnswer::kOk : bulk::TicketAnswer::kUnknownTicket;
  answer.length = bytes.size();
  char header[bulk::TicketAnswer::kBytes];
  answer.EncodeTo(header);
  iovec iov[2] = {{header, sizeof(header)}, {const_cast<char*>(bytes.data()), bytes.size()}};
  return bulk::WriteFull(fd, iov, bytes.empty() ? 1 : 2);
}

}  // namespace tensorgrid
