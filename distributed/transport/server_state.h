// BulkServer's insides, shared by its files: the state its threads share
// (bulk_server.cc: the accept loop, a connection's request loop, tickets,
// Stop), what every direct request goes through (server_state.cc: the
// header, the token, the addressee, the wait for a handler), and one handler
// per request type (tensor_request_handler.cc, call_request_handler.cc).
// Not API.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_SERVER_STATE_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_SERVER_STATE_H_

#include <sys/types.h>
#include <unistd.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "distributed/transport/bulk_server.h"
#include "distributed/transport/local_ports.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {

struct BulkServer::State : std::enable_shared_from_this<BulkServer::State> {
  State(const Options& options) : options(options), pid(getpid()) {}

  // bulk_server.cc: accepts connections until Stop or StopListening, and
  // drops expired tickets.
  void AcceptLoop(int listener);
  void SweepExpired() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Starts a thread that serves `fd`, a connection from `peer` (its address
  // without the port), and counts it, or says why not: over a limit, or
  // stopped (then `fd` is still the caller's).
  absl::Status StartServing(int fd, std::string peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Serves the requests on `fd` (ServeRequests) until the client goes or
  // sends garbage; then closes it and stops counting it, once every buffer
  // of its own is freed.
  void Serve(int fd);
  void ServeRequests(int fd);
  bool ServeTicket(bulk::Incoming& in, absl::Time header_deadline);
  std::optional<Tensor> Take(absl::string_view id);

  // The handlers of direct requests whose magic was read; false to hang up.
  // The rest of the header must arrive by `header_deadline`: a peer that
  // trickles bytes cannot hold a connection thread for long.
  bool ServeTensorRequest(bulk::Incoming& in, bool rendezvous,
                          absl::Time header_deadline);  // tensor_request_handler.cc
  class Answering;
  struct OpenedTensorRequest;
  // What every tensor request (`kind`: RecvBuf, RecvTensor, RecvTensors)
  // starts with, into `*opened`: its fixed part, token, addressee and name
  // by `header_deadline`, then its Answering, then its handler. False to
  // hang up: garbage, or a refusal answered (another task's port, no
  // handler, stopping).
  bool OpenTensorRequest(bulk::Incoming& in, bulk::RequestKind kind, absl::Time header_deadline,
                         OpenedTensorRequest* opened);  // tensor_request_handler.cc
  // RecvTensors: every key's tensor as an item, in the order they come.
  bool ServeTensorsRequest(bulk::Incoming& in,
                           absl::Time header_deadline);  // tensor_request_handler.cc
  // Writes the answer to a tensor request that came to `status` (its
  // tensor `tensor` when OK), after `prefix` (an item's head, or nothing):
  // in place when `may_read_in_place` and it is large, as a TensorProto
  // for strings (`rendezvous` only). With `gathered`, an answer under
  // kInPlaceMinBytes is appended there instead, for one write with others;
  // any answer written writes what was gathered first. False to hang up.
  bool WriteTensorAnswer(bulk::Incoming& in, absl::Status status, const Tensor& tensor,
                         bool rendezvous, bool may_read_in_place, const std::string& what,
                         absl::string_view prefix,
                         std::string* gathered);                   // tensor_request_handler.cc
  bool ServeCall(bulk::Incoming& in, absl::Time header_deadline);  // call_request_handler.cc
  // A call from this process (local_ports.h's LocalCallFn), with no socket:
  // as ServeCall, the handler's answer or DeadlineExceeded past the
  // deadline's grace (call_request_handler.cc).
  bulk::LocalCallWithdraw CallHere(const bulk::LocalCall& call, bulk::LocalCallDone done);
  // Stop's part for them: cancels each, and answers it Aborted by the
  // stop grace if its handler has not answered (call_request_handler.cc).
  void StopLocalCalls();

  // What a handler answers, possibly after we stopped waiting.
  struct Pending {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
    Tensor tensor;  // a tensor request's, written by the worker before it calls back
    Answer answer;  // a call's, set under mu
    // Cancelled when the client hangs up, at Stop, or when the wait ends
    // unanswered.
    CancellationManager cancellation;
    // A call's handler is waited for after it was cancelled (Stop counts on
    // it); a tensor request's withdrawal is not.
    bool await_handler = false;
    // The handler's answer: ends Await. False when it had answered before
    // (ignored).
    bool Settle(absl::Status s, Answer a = nullptr);
    // A RecvTensors: each key's tensor (written by the worker before it
    // settles the item) and status, and the items settled but not answered
    // yet, in the order they came; `done` while there are some.
    struct Item {
      Tensor tensor;
      absl::Status status;
    };
    std::vector<Item> items;  // sized before any handler runs
    std::deque<int> settled ABSL_GUARDED_BY(mu);
    void SettleItem(int index, absl::Status s);
  };
  // While alive, Stop leaves `fd`'s connection open (until its grace is
  // over): its thread waits for a handler, or writes that handler's answer,
  // which the client must get rather than a hang-up it would take for a
  // request never run.
  class Answering {
   public:
    Answering(State* state, int fd);
    ~Answering();
    // The answer starts going out. Past Stop's grace such a connection is
    // closed too (a client that stopped reading blocks the write): the
    // client then sees a broken answer, never a request left unread.
    void Writing();
    Answering(const Answering&) = delete;
    Answering& operator=(const Answering&) = delete;

   private:
    State* const state_;
    const int fd_;
  };

  // A tensor request as OpenTensorRequest opened it.
  struct OpenedTensorRequest {
    bulk::TensorRequestFixed fixed;
    std::string name;             // the key, or RecvTensors' block of keys
    RecvBufFn recv_buf_fn;        // RecvBuf's handler
    RecvTensorFn recv_tensor_fn;  // RecvTensor's and RecvTensors'
    std::optional<Answering> answering;
  };

  // server_state.cc.
  //
  // Waits for `p` until it is done (its status), Stop (Aborted), or
  // `grace` past `deadline` (DeadlineExceeded saying `what` got no answer
  // within `wait`). Beats to the client meanwhile. With a cancellation, the
  // client's hanging up on `fd` cancels it, and Stop cancels it and waits up
  // to stop_grace more.
  absl::Status Await(Pending& p, int fd, absl::Time deadline, absl::Duration wait,
                     absl::string_view what, absl::Duration grace);
  // Unauthenticated unless `given` is the token (or none is set).
  absl::Status CheckToken(absl::string_view given, absl::string_view what) const;
  // FailedPrecondition when the request means another task than ours.
  absl::Status CheckAddressee(absl::string_view addressee, absl::string_view what) const;
  // Reads a direct request's token, addressee and name (a key, a method)
  // of the lengths its fixed part gave, by `deadline`; the token is checked
  // before anything else is read (a refusal is answered). False to hang up,
  // also for a length out of range (a name of at most `max_name` bytes).
  bool ReadNames(bulk::Incoming& in, uint32_t token_bytes, uint32_t addressee_bytes,
                 uint32_t name_bytes, uint32_t max_name, absl::Time deadline,
                 absl::string_view what, std::string* addressee, std::string* name);

  const Options options;
  const pid_t pid;        // for clients that read chunks in place
  uint64_t local_id = 0;  // this port's registration in local_ports.h (0: none)
  absl::Mutex mu;
  int listener ABSL_GUARDED_BY(mu) = -1;
  bool listening ABSL_GUARDED_BY(mu) = true;  // false once StopListening or Stop ran
  bool stopped ABSL_GUARDED_BY(mu) = false;
  struct Held {
    Tensor tensor;
    absl::Time expires;
  };
  std::map<std::string, Held> tickets ABSL_GUARDED_BY(mu);
  std::set<int> connections ABSL_GUARDED_BY(mu);
  // Each connection's peer address, and how many connections each has.
  std::map<int, std::string> peer_of ABSL_GUARDED_BY(mu);
  std::map<std::string, int> per_peer ABSL_GUARDED_BY(mu);
  int threads ABSL_GUARDED_BY(mu) = 0;  // the accept loop + one per connection
  int64_t fetches ABSL_GUARDED_BY(mu) = 0;
  int64_t calls_served ABSL_GUARDED_BY(mu) = 0;
  int64_t calls_in_process ABSL_GUARDED_BY(mu) = 0;  // of those
  // Calls served whose handler has not answered yet: Stop waits for them.
  int64_t unanswered ABSL_GUARDED_BY(mu) = 0;
  // The connections whose thread waits for a handler: Stop leaves them open
  // for the answer.
  std::set<int> awaiting ABSL_GUARDED_BY(mu);
  std::set<int> writing ABSL_GUARDED_BY(mu);  // of those, the ones whose answer goes out
  // Calls from this process waiting for their handler, with what answers
  // their client: Stop cancels them.
  std::map<std::shared_ptr<Pending>, std::function<void(absl::Status)>> local_calls
      ABSL_GUARDED_BY(mu);
  absl::Time stop_began ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
  int64_t in_place_reads ABSL_GUARDED_BY(mu) = 0;
  int64_t tensor_batches ABSL_GUARDED_BY(mu) = 0;
  RecvBufFn recv_buf ABSL_GUARDED_BY(mu);
  RecvTensorFn recv_tensor ABSL_GUARDED_BY(mu);
  std::map<std::string, CallFn> calls ABSL_GUARDED_BY(mu);
};

namespace bulk {

// The slowest a call's request may arrive once its header did: a deadline
// for the whole request (Options::header_timeout plus its size at this
// rate), not an idle timer that any byte resets.
constexpr uint64_t kMinRequestBytesPerSecond = 1 << 20;
// How long past a request's deadline the server waits for a handler that
// answers by that deadline itself (with its own DeadlineExceeded).
constexpr absl::Duration kHandlerGrace = absl::Seconds(2);

// Answers `answer` to a request refused unread, then stops sending and
// reads (a little, briefly) what the client still sends: closing with its
// bytes unread would reset the connection, and the reset can overtake the
// answer. The caller then hangs up.
void AnswerAndHangUp(int fd, const std::string& answer);
// A refusal that lets the client send the request elsewhere (kNotServed).
void Refuse(int fd, const absl::Status& why);

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_SERVER_STATE_H_
