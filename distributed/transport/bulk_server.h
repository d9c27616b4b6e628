// BulkServer: a task's bulk port, a plain TCP port beside gRPC.
//
// gRPC copies a received message out of its own buffers before it can be
// decoded, and a call costs four times a TCP round trip. The bulk port
// serves what is hot instead (docs/bulk_transfer.md has the picture and the
// numbers):
//   - tickets: the bytes of a large RecvTensor or RecvBuf answer, which gRPC
//     answered with a one-time ticket (Offer); the receiver reads them
//     straight from the socket into the tensor;
//   - direct tensor requests: a collective chunk (ServeRecvBuf) or a step's
//     tensor (ServeRecvTensor), waited for and sent, read in place between
//     tasks on one machine (in_place.h);
//   - calls: bytes in, bytes out (ServeCall): RunGraph, a session's RunStep
//     and RunCallable.
//
//   auto bulk = *BulkServer::Start("127.0.0.1", options);
//   bulk->ServeCall("RunGraph", handler);
//   id = bulk->Offer(tensor)  ──gRPC answer: BulkTicket{id, port, bytes}──►
//
// A ticket is 16 random bytes handed out only in an (authenticated) gRPC
// answer, valid for one fetch and at most Options::ticket_ttl, so it needs
// no token of its own; direct requests carry the cluster's token. The bytes
// travel unencrypted: servers and clients using TLS open no bulk port. A
// connection carries one request at a time; each connection is served on a
// thread of its own. Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_SERVER_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "core/framework/tensor.h"
#include "core/platform/blocking.h"
#include "distributed/transport/frames.h"

namespace tensorgrid {

// Tensors of at least this many bytes go by ticket when both ends allow it;
// below it the extra round trip costs more than the copy it saves.
constexpr size_t kBulkMinBytes = size_t{1} << 20;

// Whether `tensor` can travel by ticket: a plain-old-data dtype of at least
// kBulkMinBytes (string and resource tensors are C++ objects, not bytes).
bool WantsBulk(const Tensor& tensor);

class BulkServer {
 public:
  struct Options {
    // How long an offered tensor waits for its fetch before it is dropped
    // (within a few seconds of expiring).
    absl::Duration ticket_ttl = absl::Seconds(60);
    // Connections beyond this, in all or from one peer address, are closed
    // as soon as they are accepted (one peer cannot hold the port at its cap).
    int max_connections = 1024;
    int max_connections_per_peer = 256;
    // How long a request's header may take once its first byte came.
    absl::Duration header_timeout = absl::Seconds(10);
    // When not empty, every direct request must carry this token (compared
    // in constant time) or is Unauthenticated, and the server hangs up.
    // Tickets need none: they are handed out only in authenticated answers.
    std::string token;
    // A call's request beyond this is ResourceExhausted (and the server
    // hangs up rather than read it).
    size_t max_call_bytes = size_t{1} << 30;
    // While a request's handler runs, the server tells its client every
    // this long that it still works on it, so that a client can tell a
    // frozen task (a stopped process, whose kernel still answers TCP
    // keepalive) from a busy one (BulkClient::set_peer_silence).
    absl::Duration beat_interval = absl::Seconds(10);
    // How long Stop lets a cancelled call's handler answer before answering
    // its client Aborted anyway (Stop itself still waits for the handler).
    absl::Duration stop_grace = absl::Seconds(10);
    // The task this port serves ("/job:ps/replica:0/task:0"). When set, a
    // direct request meant for another task is refused unread (see
    // BulkClient's `addressee`).
    std::string task;
    // The port to listen on; 0: one the kernel picks.
    int port = 0;
    // The name peers reach this task by (its cluster entry's host), when it
    // binds another ("0.0.0.0"): clients of this process dialing it call
    // straight in too (below).
    std::string advertised_host;
    // Clients of this process call its handlers directly (local_ports.h:
    // no socket, the handler on the caller's thread; a blocking Call makes
    // the answer on the caller's thread too, an asynchronous one on the
    // thread that answers). False: only over the socket, as from another
    // process (for tests of the socket itself).
    bool serve_in_process = true;
  };

  // Listens on `host` ("127.0.0.1", "0.0.0.0", a name), on Options::port or
  // a port the kernel picks. Unavailable naming the host when it cannot.
  static absl::StatusOr<std::unique_ptr<BulkServer>> Start(const std::string& host) {
    return Start(host, Options());
  }
  static absl::StatusOr<std::unique_ptr<BulkServer>> Start(const std::string& host,
                                                           const Options& options);
  // Stop().
  ~BulkServer();
  BulkServer(const BulkServer&) = delete;
  BulkServer& operator=(const BulkServer&) = delete;

  int port() const { return port_; }

  // Holds `tensor` (see WantsBulk; a reference, not a copy) for one fetch and
  // returns its ticket id. Empty once stopped.
  std::string Offer(const Tensor& tensor);
  // The tensor of ticket `id`, removed from the table: for a client that
  // asks for a ticket's bytes over gRPC instead. Nullopt when unknown,
  // already fetched or expired.
  std::optional<Tensor> Take(absl::string_view id);

  // Direct RecvBuf requests (BulkClient::RecvBufAsync): `fn` fetches a
  // collective chunk by key, as WorkerInterface::RecvBufAsync does. Call
  // before peers can know the port (the worker service does, as the server
  // starts). The server cancels `cancellation` when the client hangs up,
  // when the wait ends, and at Stop, and does not wait for `done` then: the
  // handler withdraws the request (it must not touch `out` after `done`).
  using RecvBufFn = std::function<void(const std::string& key, absl::Time deadline, Tensor* out,
                                       CancellationManager* cancellation, StatusCallback done)>;
  void ServeRecvBuf(RecvBufFn fn);
  // Direct RecvTensor requests (BulkClient::RecvTensorAsync): `fn` takes
  // the tensor sent under rendezvous key `key` in step `step_id`, as
  // WorkerInterface::RecvTensorAsync does. A tensor of strings (or another
  // dtype that is not plain bytes) is answered as a TensorProto. Cancelled
  // as a RecvBuf's is.
  using RecvTensorFn =
      std::function<void(int64_t step_id, const std::string& key, absl::Time deadline, Tensor* out,
                         CancellationManager* cancellation, StatusCallback done)>;
  void ServeRecvTensor(RecvTensorFn fn);
  // Calls of `method` (BulkClient::CallAsync): `fn` gets the request's bytes,
  // the caller's deadline and a cancellation, and answers once, from any
  // thread, with a status and, when OK, `answer`: a function that makes the
  // answer's bytes (or fails), run on the connection's own thread so that
  // encoding a large answer never holds whichever thread finished the work.
  // `fn` itself runs on that thread too; it should not block long, since
  // nothing watches the client meanwhile.
  //
  // The server waits for the answer until a little past the deadline. It
  // cancels `cancellation` when the client hangs up (within ~100 ms), when
  // it gives up waiting, and at Stop. Stopping, it answers the client
  // Aborted once the handler has answered or Options::stop_grace has
  // passed, and Stop waits for every handler to answer.
  // `cancellation` lives until `done` has run. A method nobody serves is
  // Unimplemented.
  using Answer = std::function<absl::StatusOr<std::string>()>;
  using CallDone = std::function<void(absl::Status status, Answer answer)>;
  using CallFn = std::function<void(std::string request, absl::Time deadline,
                                    CancellationManager* cancellation, CallDone done)>;
  void ServeCall(const std::string& method, CallFn fn);
  // An Answer of bytes already made.
  static Answer Bytes(std::string bytes);

  // Serves `fd`, a connected stream socket accepted elsewhere, exactly as a
  // connection accepted on the port (the same limit, the same thread per
  // connection, the same limits), and closes it when done; takes it over even
  // when it fails. For tests and the fuzzer (tests/fuzz/bulk_server_fuzzer.cc),
  // which feed the server over a socketpair (whose ends count as one peer).
  // Unavailable once stopped, ResourceExhausted at Options::max_connections
  // or Options::max_connections_per_peer.
  absl::Status ServeConnection(int fd);

  // Refuses new connections; tickets and open connections stay. (Lets a
  // test see what a client does when the port cannot be reached.)
  void StopListening();
  // Closes the port and every connection (a fetch in flight fails on the
  // client) and drops all tickets. Calls in flight are cancelled and
  // answered Aborted (see ServeCall). Returns once no thread of ours runs
  // and every call's handler has answered, as gRPC's Server::Wait does (a
  // handler waiting on a frozen task answers once its own request there
  // fails: BulkClient::set_peer_silence).
  void Stop();

  // How many tensors were sent (tickets taken, chunks and RecvTensors
  // answered), and calls served, over the bulk port (for tests and stats).
  int64_t fetches() const;
  int64_t calls() const;
  // Of those calls, the ones made from this process with no socket.
  int64_t calls_in_process() const;
  // Calls served whose handler has not answered yet.
  int64_t calls_waiting() const;
  // Connections being served now: a connection stops counting once its
  // thread has closed it and freed what it held.
  int64_t connections() const;
  // How many chunks clients copied straight out of this process's memory.
  int64_t in_place_reads() const;
  // How many RecvTensors (several tensors of a step in one request) it
  // served; each of their tensors counts in fetches() too.
  int64_t tensor_batches() const;

 private:
  // What the server's threads share (server_state.h). They hold it by
  // shared_ptr, so that a thread still leaving (unlocking the mutex) never
  // touches freed memory once Stop has seen it finish.
  struct State;
  BulkServer(std::shared_ptr<State> state, int port);

  const std::shared_ptr<State> state_;
  const int port_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_SERVER_H_
