// BulkClient: one host's bulk ports (bulk_server.h), as seen from a client:
// ticket fetches, direct tensor requests and calls. Which requests go here
// rather than over gRPC is BulkRoute's business (bulk_route.h).
//
//   BulkClient client("127.0.0.1", "/job:ps/replica:0/task:0");
//   client.CallAsync(port, token, "RunGraph", request_bytes, deadline,
//                    [](absl::Status s, std::string answer, BulkClient::Fallback f) {...});
//
// No thread waits for an answer: one watcher per client (epoll) waits on
// every sent request, reads a small answer that has fully arrived (or makes
// a small in-place copy) itself, and hands larger ones to the client's
// pool. A small request goes out on the caller's thread over a pooled
// connection. A call to a port of this very process runs its handler
// directly, with no socket (local_ports.h). Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_CLIENT_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_CLIENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/framework/tensor.h"
#include "core/platform/env.h"
#include "distributed/transport/connection_pool.h"
#include "distributed/transport/frames.h"
#include "distributed/transport/local_ports.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {

class BulkClient {
 public:
  // Fetches from the server at `host` (the host part of the peer's gRPC
  // address; the port comes with each request). Direct requests name
  // `addressee`, the peer's task: a server of another task (one that took
  // the port after the peer restarted) refuses them unread, and they go
  // over gRPC instead. Empty: any server will do.
  explicit BulkClient(std::string host, std::string addressee = "");
  // Closes the pooled connections; waits for fetches in flight.
  ~BulkClient();
  BulkClient(const BulkClient&) = delete;
  BulkClient& operator=(const BulkClient&) = delete;

  const std::string& host() const { return pool_.host(); }

  // A direct request (RecvBuf, RecvTensor, call) whose server sends nothing
  // for this long, not even a beat (BulkServer::Options::beat_interval),
  // fails Unavailable, final: the task froze or its host is gone. Default
  // 40 s, about what gRPC's keepalive allows. Set before the first request.
  void set_peer_silence(absl::Duration silence) { peer_silence_ = silence; }

  // What a failed request leaves to do.
  enum class Fallback {
    kNone,  // the status is final
    // The ticket was not taken, or the request not served (the server was
    // at its connection limit or stopping, or refused it unread): its bytes
    // can still be asked for over gRPC (RecvTensorRequest.bulk_ticket), the
    // request sent there.
    kOverGrpc,
    // As kOverGrpc, and the port cannot be reached at all (connect failed):
    // better not to use this port again.
    kPortUnreachable,
    // As kOverGrpc, and nothing listens on the port (connection refused):
    // the server may have restarted on another port.
    kPortRefused,
    // As kOverGrpc, and nothing was sent: this process could not open a
    // socket (out of file descriptors). Says nothing about the port.
    kNotSent,
  };

  // Reads the `bytes` bytes of ticket `id` from `port` into `dst`. Statuses:
  //   Unavailable      the port cannot be reached or the connection broke
  //                    (the sender stopped or died); see `*fallback`;
  //   NotFound         the server no longer holds the ticket;
  //   DataLoss         the server answered with another size;
  //   DeadlineExceeded `deadline` passed (every wait is bounded by it).
  absl::Status Fetch(int port, const std::string& id, char* dst, size_t bytes, absl::Time deadline,
                     Fallback* fallback = nullptr);
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
  // here means: the request was not served, ask over gRPC). `into` and
  // `out` must stay valid until `done` runs, and `done` must not destroy
  // this client.
  void RecvBufAsync(int port, const std::string& token, const std::string& key, absl::Time deadline,
                    const Tensor* into, Tensor* out, FetchCallback done);

  // Asks the server at `port` for the tensor sent under rendezvous key `key`
  // in step `step_id` (BulkServer::ServeRecvTensor), as RecvBufAsync asks
  // for a chunk: into a fresh tensor, `*out`, of any dtype; the same
  // statuses and fallbacks.
  void RecvTensorAsync(int port, const std::string& token, int64_t step_id, const std::string& key,
                       absl::Time deadline, Tensor* out, FetchCallback done);

  // Asks the server at `port` for several tensors of step `step_id` in one
  // request (RecvTensors): the server sends each key's tensor as soon as it
  // has it, all on one connection. `received(i, status)` runs once for each
  // key answered (its tensor in `(*outs)[i]` when OK), in the order they
  // come, on this client's threads; it must not block. Then `done(status,
  // fallback)` runs once: OK when every key was answered, else why the
  // others were not, with a fallback (as for RecvTensorAsync) only when
  // none was. `outs` must hold a tensor per key and stay valid until
  // `done` runs.
  using ItemCallback = std::function<void(int index, absl::Status status)>;
  void RecvTensorsAsync(int port, const std::string& token, int64_t step_id,
                        const std::vector<std::string>& keys, absl::Time deadline,
                        std::vector<Tensor>* outs, ItemCallback received, FetchCallback done);

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
  // `done` runs on the watcher thread for a small answer: it must not
  // block, nor destroy this client. While the client is being destroyed,
  // what ends ends Cancelled with no fallback.
  using CallCallback =
      std::function<void(absl::Status status, std::string answer, Fallback fallback)>;
  void CallAsync(int port, const std::string& token, const std::string& method, std::string request,
                 absl::Time deadline, CallCallback done);
  // CallAsync for a caller that blocks until `done` has run: when the
  // request goes out at once, the answer is read, and `done` run, on the
  // caller's thread before Call returns (saving two thread hand-offs);
  // otherwise as CallAsync.
  void Call(int port, const std::string& token, const std::string& method, std::string request,
            absl::Time deadline, CallCallback done);

 private:
  // A direct request, sent and waiting for its answer.
  struct Waiting {
    bulk::UniqueFd fd;
    bulk::Incoming::Ahead ahead;  // received on `fd`, not yet read
    int port = 0;
    absl::Time deadline;
    std::string what;  // "RecvBuf of 'k'", "RunGraph call": for errors
    bool pooled = false;
    // A tensor request: where its tensor goes, and its callback.
    const Tensor* into = nullptr;
    Tensor* out = nullptr;
    FetchCallback done;
    // A call: its callback (set instead of `done`).
    CallCallback call_done;
    // A RecvTensors: where each key's tensor goes, its callback, which keys
    // were answered, and how many are left.
    std::vector<Tensor>* outs = nullptr;
    ItemCallback received;
    std::vector<bool> answered;
    int left = 0;
    // The client's closing_: once set, a fallback ends Cancelled instead.
    const std::atomic<bool>* closing = nullptr;
    // A tensor request that asked for an in-place answer (none other may
    // get one).
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

  // A call made in process (local_ports.h), until it ends: the client's
  // destructor ends it Cancelled and withdraws it, as it hangs up on a
  // socket's.
  struct LocalWaiting {
    std::string what;  // "RunStep call": for errors
    absl::Mutex mu;
    bool ended ABSL_GUARDED_BY(mu) = false;  // `done` ran, or runs
    CallCallback done ABSL_GUARDED_BY(mu);
    bulk::LocalCallWithdraw withdraw ABSL_GUARDED_BY(mu);
    // A caller that blocks (Call) makes the answer and runs `done` itself:
    // the handler's answer waits here for it.
    bool answered ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
    bulk::LocalAnswer answer ABSL_GUARDED_BY(mu);
    std::atomic<bool> finished{false};  // `done` ran: the client may forget it
    // Makes the answer's bytes and runs `done`, unless that happened; true
    // if this call did.
    bool End(absl::Status status, bulk::LocalAnswer answer);
  };
  // Runs the call on a port of this process when `port` is one (true),
  // with no socket; `read_here` as for StartCall.
  bool CallInProcess(int port, const std::string& token, const std::string& method,
                     std::string* request, absl::Time deadline, bool read_here, CallCallback* done);

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
  // Sends `request` and hands `w` to the watcher: on this thread when a
  // pooled connection takes all of it at once, else (connecting, or a large
  // request) on the pool, from byte `sent` on.
  void Send(Waiting w, std::string request);
  void SendOnPool(Waiting w, std::string request, size_t sent);
  // Runs `fn` on the pool unless the client is closing (false); the
  // destructor keeps the pool until `fn` is queued.
  bool Schedule(std::function<void()> fn);
  // Registers the sent request with the watcher; one whose answer has
  // begun to arrive (bytes ahead) is read on the pool instead.
  void Watch(Waiting w);
  void WatchLoop();
  // Fails every waiting request with Cancelled (the client is closing).
  void FailWaiting();
  // Reads the answer on `w.fd` (readable) and completes `w`.
  void ReadAnswer(Waiting w);
  // ReadAnswer for a RecvTensors whose answer opened with `kind`: reads
  // an item, then waits for the next or completes `w`.
  void ReadItem(Waiting w, bulk::AnswerKind kind);
  // Whether `w`'s whole answer has arrived and is small, or its connection
  // ended: then the watcher reads it itself instead of handing it to the
  // pool. Takes what has arrived first when the bytes ahead are not that.
  static bool AnswerIsHere(Waiting* w);
  // Takes what has arrived for `w` (one recv, into `w->ahead`) and the
  // beats at its front (the server still works on the request), noting
  // them in `*w`. True when that was all: `w` waits on.
  static bool TakeBeats(Waiting* w);
  // Unavailable: `w`'s server was silent too long.
  absl::Status Silent(const Waiting& w) const;
  // Cancelled: what ends a request while its client closes.
  static absl::Status Closing(absl::string_view what);
  // Fallback for a failed connect.
  static Fallback FallbackFor(bulk::ConnectFailure failure);
  void Wake();
  // Makes the watcher wake by `when` (for a deadline) without waking it now.
  void WakeBy(absl::Time when) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string addressee_;
  bulk::ConnectionPool pool_;
  // Chunks from a server on this machine may be copied straight out of its
  // memory (process_vm_readv): one copy instead of TCP's two. Off after a
  // copy was refused (no permission, another pid namespace).
  const bool in_place_;
  std::atomic<bool> in_place_refused_{false};
  absl::Duration peer_silence_ = absl::Seconds(40);
  absl::Mutex mu_;
  std::unique_ptr<ThreadPool> threads_ ABSL_GUARDED_BY(mu_);            // made on first use
  std::map<int, Waiting> waiting_ ABSL_GUARDED_BY(mu_);                 // by fd
  std::set<std::shared_ptr<LocalWaiting>> local_ ABSL_GUARDED_BY(mu_);  // calls in process
  // When the watcher wakes next if nothing happens (for deadlines).
  absl::Time watcher_wakes_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  int sending_ ABSL_GUARDED_BY(mu_) = 0;  // SendOnPool calls scheduling work
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> closing_{false};  // set first thing by the destructor
  bulk::UniqueFd wake_fd_;            // an eventfd; set under mu_ on first use
  bulk::UniqueFd timer_fd_;           // a timerfd, for deadlines; the same
  bulk::UniqueFd epoll_fd_;           // the watcher's; set under mu_ on first use
  std::thread watcher_;               // started on the first direct request
};

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_BULK_CLIENT_H_
