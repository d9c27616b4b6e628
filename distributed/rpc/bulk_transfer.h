// Bulk transfer: the bytes of large RecvTensor and RecvBuf answers over a
// plain TCP connection instead of inside the gRPC response.
//
// gRPC copies a received message out of its own buffers before we can
// decode it, and on a machine with few cores that copy caps a 64 MiB
// RecvTensor at about 65% of what a TCP stream moves. Here the receiver
// reads the bytes straight from the socket into the tensor's buffer and the
// sender writes them straight from its tensor: one copy each way, as in a
// plain TCP transfer (docs/bulk_transfer.md has the picture and numbers).
//
//   server side (one per task, beside gRPC)   client side (one per peer)
//   auto bulk = *BulkServer::Start("127.0.0.1");
//   id = bulk->Offer(tensor)  ──gRPC answer: BulkTicket{id, port, bytes}──►
//                             ◄──TCP: "TGB1" id────────── BulkClient::FetchAsync
//                             ──TCP: code, length, bytes─► into the tensor
//
// For a ticket, gRPC stays in charge of everything but the bytes: the
// request, the wait for the tensor, deadlines, cancellation and
// authentication. A ticket is 16 random bytes handed out only in an
// (authenticated) gRPC answer, valid for one fetch and at most
// Options::ticket_ttl, so a ticket needs no token of its own.
//
// Collective chunks and a step's tensors can also be asked for on the port
// directly (BulkClient::RecvBufAsync and RecvTensorAsync,
// BulkServer::ServeRecvBuf and ServeRecvTensor): the request carries the
// cluster's token and the server waits for the tensor, saving a gRPC round
// trip (and a ticket's second one). A requester that hangs up ends the
// wait. So can whole calls, bytes in and bytes out (BulkClient::CallAsync,
// BulkServer::ServeCall): the worker service serves RunGraph there, and the
// master service a session's RunStep and RunCallable, so a step and its
// partitions start with plain TCP round trips instead of gRPC calls.
//
// The bytes travel unencrypted: servers and clients using TLS open no bulk
// port and use none. A connection carries one request at a time and goes
// back to the client's pool after it; the server serves each connection on
// a thread of its own.
#ifndef TENSORGRID_DISTRIBUTED_RPC_BULK_TRANSFER_H_
#define TENSORGRID_DISTRIBUTED_RPC_BULK_TRANSFER_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "core/framework/tensor.h"
#include "core/platform/blocking.h"
#include "core/platform/env.h"

namespace tensorgrid {

// Tensors of at least this many bytes go by ticket when both ends allow it;
// below it the extra round trip costs more than the copy it saves.
constexpr size_t kBulkMinBytes = size_t{1} << 20;

// The bytes of a ticket id.
constexpr size_t kBulkTicketBytes = 16;

// The longest a bulk port's server waits for a call's or a chunk's answer.
constexpr absl::Duration kBulkMaxWait = absl::Hours(1);

// The call the worker service serves RunGraph under on its bulk port
// (GrpcWorkerService, GrpcRemoteWorker): a serialized RunGraphRequest in, a
// RunGraphResponse out.
inline constexpr char kBulkRunGraph[] = "RunGraph";
// The calls the master service serves a session's steps under on the same
// port (GrpcMasterService, GrpcSession): a serialized RunStepRequest or
// RunCallableRequest in, its response out.
inline constexpr char kBulkRunStep[] = "RunStep";
inline constexpr char kBulkRunCallable[] = "RunCallable";

// Whether `tensor` can travel by ticket: a plain-old-data dtype of at least
// kBulkMinBytes (string and resource tensors are C++ objects, not bytes).
bool WantsBulk(const Tensor& tensor);

class BulkServer {
 public:
  struct Options {
    // How long an offered tensor waits for its fetch before it is dropped
    // (within a few seconds of expiring).
    absl::Duration ticket_ttl = absl::Seconds(60);
    // Connections beyond this are closed as soon as they are accepted.
    int max_connections = 1024;
    // When not empty, every direct RecvBuf and call must carry this token
    // (compared in constant time) or is Unauthenticated, and the server hangs
    // up. Tickets need none: they are handed out only in authenticated
    // answers.
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
    // direct RecvBuf or call meant for another task is refused unread (see
    // BulkClient's `addressee`).
    std::string task;
  };

  // Listens on `host` ("127.0.0.1", "0.0.0.0", a name), on a port the kernel
  // picks. Unavailable naming the host when it cannot.
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
  // starts).
  using RecvBufFn = std::function<void(const std::string& key, absl::Time deadline, Tensor* out,
                                       StatusCallback done)>;
  void ServeRecvBuf(RecvBufFn fn);
  // Direct RecvTensor requests (BulkClient::RecvTensorAsync): `fn` takes
  // the tensor sent under rendezvous key `key` in step `step_id`, as
  // WorkerInterface::RecvTensorAsync does. A tensor of strings (or another
  // dtype that is not plain bytes) is answered as a TensorProto.
  using RecvTensorFn = std::function<void(int64_t step_id, const std::string& key,
                                          absl::Time deadline, Tensor* out, StatusCallback done)>;
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
  // Calls served whose handler has not answered yet.
  int64_t calls_waiting() const;
  // How many chunks clients copied straight out of this process's memory.
  int64_t in_place_reads() const;

 private:
  // What the server's threads share. They hold it by shared_ptr, so that a
  // thread still leaving (unlocking the mutex) never touches freed memory
  // once Stop has seen it finish.
  struct State;
  BulkServer(std::shared_ptr<State> state, int port);

  const std::shared_ptr<State> state_;
  const int port_;
};

class BulkClient {
 public:
  // Fetches from the server at `host` (the host part of the peer's gRPC
  // address; the port comes with each ticket). Direct RecvBufs and calls
  // name `addressee`, the peer's task: a server of another task (one that
  // took the port after the peer restarted) refuses them unread, and they
  // go over gRPC instead. Empty: any server will do.
  explicit BulkClient(std::string host, std::string addressee = "");
  // Closes the pooled connections; waits for fetches in flight.
  ~BulkClient();
  BulkClient(const BulkClient&) = delete;
  BulkClient& operator=(const BulkClient&) = delete;

  // A direct request (RecvBuf, RecvTensor, call) whose server sends nothing
  // for this long, not even a beat (BulkServer::Options::beat_interval),
  // fails Unavailable, final: the task froze or its host is gone. Default
  // 40 s, about what gRPC's keepalive allows. Set before the first request.
  void set_peer_silence(absl::Duration silence) { peer_silence_ = silence; }

  // What a failed fetch leaves to do.
  enum class Fallback {
    kNone,  // the status is final
    // The ticket was not taken, or the request not served (the server was
    // at its connection limit or stopping): its bytes can still be asked
    // for over gRPC (RecvTensorRequest.bulk_ticket), the request sent there.
    kOverGrpc,
    // As kOverGrpc, and the port cannot be reached at all (connect failed):
    // better not to ask this server for tickets again.
    kPortUnreachable,
    // As kOverGrpc, and nothing listens on the port (connection refused):
    // the server may have restarted on another port.
    kPortRefused,
  };
  // Reads the `bytes` bytes of ticket `id` from `port` into `dst`. Statuses:
  //   Unavailable      the port cannot be reached or the connection broke
  //                    (the sender stopped or died); see `*fallback`;
  //   NotFound         the server no longer holds the ticket;
  //   DataLoss         the server answered with another size;
  //   DeadlineExceeded `deadline` passed (every wait is bounded by it).
  absl::Status Fetch(int port, const std::string& id, char* dst, size_t bytes,
                     absl::Time deadline, Fallback* fallback = nullptr);
  // Fetch on a thread of this client's; `done(status, fallback)` runs
  // there. `dst` must stay valid until then, and `done` must not destroy
  // this client.
  using FetchCallback = std::function<void(absl::Status status, Fallback fallback)>;
  void FetchAsync(int port, std::string id, char* dst, size_t bytes, absl::Time deadline,
                  FetchCallback done);

  // Asks the server at `port` for collective chunk `key` straight away, with
  // no gRPC call (BulkServer::ServeRecvBuf): the server waits for the chunk
  // until `deadline` and sends it. The bytes land in `into`'s buffer when it
  // has the chunk's dtype and element count, else in a fresh tensor;
  // `*out` is set before `done(OK, kNone)`. Other statuses: the worker's own
  // (DeadlineExceeded naming the key, Aborted, ...), Unauthenticated for a
  // wrong `token`, and, with a fallback, Unavailable as for Fetch (kOverGrpc
  // here means: the request was not served, ask over gRPC). No thread waits
  // meanwhile: one watcher per client polls the connections. `into` and
  // `out` must stay valid until `done` runs, and `done` must not destroy
  // this client.
  void RecvBufAsync(int port, const std::string& token, const std::string& key,
                    absl::Time deadline, const Tensor* into, Tensor* out, FetchCallback done);

  // Asks the server at `port` for the tensor sent under rendezvous key `key`
  // in step `step_id` (BulkServer::ServeRecvTensor), as RecvBufAsync asks
  // for a chunk: into a fresh tensor, `*out`, of any dtype; the same
  // statuses and fallbacks.
  void RecvTensorAsync(int port, const std::string& token, int64_t step_id, const std::string& key,
                       absl::Time deadline, Tensor* out, FetchCallback done);

  // Calls `method` on the server at `port` (BulkServer::ServeCall) with
  // `request`'s bytes; `done(OK, answer, kNone)` with the answer's bytes, or
  // the handler's status (final, whatever its code), or
  // Unavailable/DeadlineExceeded/Unauthenticated as for RecvBufAsync.
  // `deadline` bounds every wait; the server learns it too.
  //
  // A fallback other than kNone means the request never ran: the server
  // refused it unread (no such method, another task's port, too large), hung
  // up without reading it (at its limit), or could not be reached. So a
  // caller may send it over gRPC instead. (A server stopping answers the
  // calls it runs before it closes their connections; only a crash leaves
  // one unanswered, and then gRPC cannot reach it either.)
  //
  // The request goes out on the caller's thread when a pooled connection
  // takes it at once, and a small answer is read and `done` run on the
  // watcher thread: `done` must not block, nor destroy this client. While
  // the client is being destroyed, what ends ends Cancelled with no
  // fallback.
  using CallCallback = std::function<void(absl::Status status, std::string answer,
                                          Fallback fallback)>;
  void CallAsync(int port, const std::string& token, const std::string& method,
                 std::string request, absl::Time deadline, CallCallback done);
  // CallAsync for a caller that blocks until `done` has run: when the
  // request goes out at once, the answer is read, and `done` run, on the
  // caller's thread before Call returns (saving two thread hand-offs);
  // otherwise as CallAsync.
  void Call(int port, const std::string& token, const std::string& method, std::string request,
            absl::Time deadline, CallCallback done);

 private:
  // A connected socket to `port`, pooled (`*pooled`) or new; -1 with
  // `*status` set (Unavailable, or DeadlineExceeded) and `*fallback`.
  int Connect(int port, absl::Time deadline, bool* pooled, absl::Status* status,
              Fallback* fallback);
  // A pooled connection to `port` that the server has not closed, or -1.
  int TakeIdle(int port);
  void Release(int port, int fd);
  // Closes the idle connections to `port` (after one proved stale).
  void DropIdle(int port);
  // Makes the pool, the eventfd and the watcher on first use; Unavailable
  // when one cannot be made.
  absl::Status StartWatching() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // CallAsync (read_here: false) and Call.
  void StartCall(int port, const std::string& token, const std::string& method, std::string request,
                 absl::Time deadline, bool read_here, CallCallback done);
  // RecvBufAsync (no step id) and RecvTensorAsync.
  void AskForTensor(int port, const std::string& token, std::optional<int64_t> step_id,
                    const std::string& key, absl::Time deadline, const Tensor* into, Tensor* out,
                    FetchCallback done);
  // A direct RecvBuf or a call, sent and waiting for its answer.
  struct Waiting {
    int fd = -1;
    int port = 0;
    absl::Time deadline;
    std::string what;  // "RecvBuf of 'k'", "RunGraph call": for errors
    bool pooled = false;
    // A RecvBuf: where its chunk goes, and its callback.
    const Tensor* into = nullptr;
    Tensor* out = nullptr;
    FetchCallback done;
    // A call: its callback (set instead of `done`).
    CallCallback call_done;
    // The client's closing_: once set, a fallback ends Cancelled instead.
    const std::atomic<bool>* closing = nullptr;
    // A RecvBuf that asked for an in-place answer (none other may get one).
    bool may_read_in_place = false;
    // A RecvTensor: it may be answered with a TensorProto.
    bool may_take_proto = false;
    // A Call sent on the caller's thread: its answer is read there too.
    bool read_here = false;
    // When the server was last heard from (the request sent, or a beat
    // saying it still works on it), and whether it ever beat: a request
    // the server said it worked on is never one to send elsewhere.
    absl::Time heard = absl::InfinitePast();
    bool beaten = false;
    // Runs the callback once.
    void Finish(absl::Status status, Fallback fallback, std::string answer = "");
  };
  // Sends `request` and hands `w` to the watcher: on this thread when a
  // pooled connection takes all of it at once, else (connecting, or a large
  // request) on the pool, from byte `sent` on.
  void Send(Waiting w, std::string request);
  void SendOnPool(Waiting w, std::string request, size_t sent);
  // Runs `fn` on the pool unless the client is closing (false); the
  // destructor keeps the pool until `fn` is queued.
  bool Schedule(std::function<void()> fn);
  // Registers the sent request with the watcher.
  void Watch(Waiting w);
  void WatchLoop();
  // Fails every waiting request with Cancelled (the client is closing).
  void FailWaiting();
  // Reads the answer on `w.fd` (readable) and completes `w`.
  void ReadAnswer(Waiting w);
  // Whether the whole answer on `fd` has arrived and is small: then the
  // watcher reads it itself instead of handing it to the pool.
  static bool AnswerIsHere(int fd);
  // Consumes the beats (the server still works on the request) at the head
  // of `fd`'s bytes, noting them in `*w`; false when there were none.
  static bool TakeBeats(int fd, Waiting* w);
  // Unavailable: `w`'s server was silent too long.
  absl::Status Silent(const Waiting& w) const;
  // Copies `length` bytes at `address` in process `pid` (a server on this
  // machine) to `dst`, after checking that `pid` holds `nonce` at
  // `nonce_address`. kRefused: not allowed, or not that process (ask no
  // more); kFailed: this copy failed.
  enum class InPlace { kCopied, kRefused, kFailed };
  static InPlace CopyInPlace(pid_t pid, uint64_t address, uint64_t nonce_address,
                             absl::string_view nonce, char* dst, size_t length);
  void Wake();

  const std::string host_;
  const std::string addressee_;
  // Chunks from a server on this machine may be copied straight out of its
  // memory (process_vm_readv): one copy instead of TCP's two. Off after a
  // copy fails (no permission, another pid namespace).
  const bool in_place_;
  std::atomic<bool> in_place_failed_{false};
  absl::Duration peer_silence_ = absl::Seconds(40);
  absl::Mutex mu_;
  std::map<int, std::vector<int>> idle_ ABSL_GUARDED_BY(mu_);  // by port
  std::unique_ptr<ThreadPool> pool_ ABSL_GUARDED_BY(mu_);      // made on first use
  std::map<int, Waiting> waiting_ ABSL_GUARDED_BY(mu_);        // by fd
  // When the watcher wakes next if nothing happens (for deadlines).
  absl::Time watcher_wakes_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  int sending_ ABSL_GUARDED_BY(mu_) = 0;  // SendOnPool calls scheduling work
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> closing_{false};  // set first thing by the destructor
  int wake_fd_ = -1;   // an eventfd; set under mu_ on first use
  int epoll_fd_ = -1;  // the watcher's; set under mu_ on first use
  std::thread watcher_;  // started on the first RecvBufAsync or CallAsync
};

// The host part of "host:port" or "[v6]:port" (brackets removed).
std::string HostOf(absl::string_view address);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_BULK_TRANSFER_H_
