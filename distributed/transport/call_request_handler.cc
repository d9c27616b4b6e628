// BulkServer's handler of calls: a method's request bytes in, its answer's
// bytes out, through the handler a service registered (ServeCall).
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/rendezvous.h"
#include "core/platform/status.h"
#include "core/platform/timer.h"
#include "distributed/transport/server_state.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {

bool BulkServer::State::ServeCall(bulk::Incoming& in, absl::Time header_deadline) {
  const int fd = in.fd();
  char fixed_bytes[bulk::CallRequestFixed::kBytes];
  if (in.ReadFull(fixed_bytes, sizeof(fixed_bytes), header_deadline) != sizeof(fixed_bytes)) {
    return false;
  }
  const bulk::CallRequestFixed fixed = bulk::CallRequestFixed::Decode(fixed_bytes);
  std::string addressee, method;
  if (!ReadNames(in, fixed.token_bytes, fixed.addressee_bytes, fixed.method_bytes,
                 bulk::kMaxMethodBytes, header_deadline, "a call", &addressee, &method)) {
    return false;
  }
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
  } else if (refused.ok() && fixed.request_bytes > options.max_call_bytes) {
    refused =
        errors::ResourceExhausted(what, ": a request of ", fixed.request_bytes,
                                  " bytes is over this server's limit of ", options.max_call_bytes);
  }
  if (!refused.ok()) {
    bulk::Refuse(fd, refused);
    return false;
  }
  std::string request;
  const absl::Time request_deadline =
      absl::Now() + options.header_timeout +
      absl::Seconds(static_cast<double>(fixed.request_bytes) / bulk::kMinRequestBytesPerSecond);
  if (!in.ReadGrowing(fixed.request_bytes, &request, request_deadline)) return false;
  Answering answering(this, fd);  // before looking at `stopped`, as for tensor requests
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
    bulk::Refuse(fd, refused);
    return false;
  }
  auto pending = std::make_shared<Pending>();
  pending->await_handler = true;
  const absl::Duration wait = bulk::GrantedWait(fixed.wait_ms);
  const absl::Time deadline = absl::Now() + wait;
  fn(std::move(request), deadline, &pending->cancellation,
     [pending, self = shared_from_this()](absl::Status s, Answer answer) {
       if (!pending->Settle(std::move(s), std::move(answer))) return;
       absl::MutexLock lock(&self->mu);
       --self->unanswered;
     });
  absl::Status status = Await(*pending, fd, deadline, wait, what, bulk::kHandlerGrace);
  std::string bytes;
  if (status.ok() && pending->answer) {
    // No longer written by the handler: it has answered.
    absl::StatusOr<std::string> made = pending->answer();
    if (made.ok()) {
      bytes = *std::move(made);
    } else {
      status = made.status();
    }
  }
  const std::string header = status.ok()
                                 ? bulk::EncodeLengthAnswer(bulk::AnswerKind::kBytes, bytes.size())
                                 : bulk::EncodeError(status);
  iovec iov[2] = {{const_cast<char*>(header.data()), header.size()}, {bytes.data(), bytes.size()}};
  answering.Writing();
  return bulk::WriteFull(fd, iov, bytes.empty() ? 1 : 2);
}

namespace {
// Ends calls from this process whose handler did not answer by their
// deadline's grace, or by Stop's (made on first use, never destroyed).
Timer& LocalCallTimer() {
  static Timer* timer = new Timer();
  return *timer;
}
absl::Status ShuttingDown() { return errors::Aborted("the task is shutting down"); }
}  // namespace

void BulkServer::State::StopLocalCalls() {
  std::vector<std::pair<std::shared_ptr<Pending>, std::function<void(absl::Status)>>> calls;
  absl::Time answer_by;
  {
    absl::MutexLock lock(&mu);
    stopped = true;
    if (stop_began == absl::InfiniteFuture()) stop_began = absl::Now();
    answer_by = stop_began + options.stop_grace;
    calls.assign(local_calls.begin(), local_calls.end());
  }
  for (auto& [pending, answer_client] : calls) {
    pending->cancellation.StartCancel();
    LocalCallTimer().Schedule(answer_by,
                              [answer_client = answer_client] { answer_client(ShuttingDown()); });
  }
}

bulk::LocalCallWithdraw BulkServer::State::CallHere(const bulk::LocalCall& call,
                                                    bulk::LocalCallDone done) {
  CallFn fn;
  auto pending = std::make_shared<Pending>();
  pending->await_handler = true;
  const std::string what = absl::StrCat(call.method, " call");
  if (absl::Status s = CheckToken(call.token, what); !s.ok()) {
    done(std::move(s), nullptr);
    return [] {};
  }
  // The client's answer, once: the handler's, DeadlineExceeded when it is
  // late, or Aborted when Stop's grace ran out (it is cancelled then, and
  // Stop still waits for it).
  auto answered = std::make_shared<std::atomic<bool>>(false);
  auto answer_client = [answered, done = std::move(done)](absl::Status s, Answer answer) {
    if (!answered->exchange(true)) done(std::move(s), std::move(answer));
  };
  {
    absl::MutexLock lock(&mu);
    auto it = calls.find(call.method);
    if (stopped || !listening || it == calls.end() ||
        call.request->size() > options.max_call_bytes ||
        !CheckAddressee(call.addressee, what).ok()) {
      return nullptr;  // the socket says why
    }
    fn = it->second;
    ++calls_served;
    ++calls_in_process;
    ++unanswered;
    // In the same step as the count: Stop either refuses the call above or
    // finds it here.
    local_calls[pending] = [answer_client](absl::Status s) {
      answer_client(std::move(s), nullptr);
    };
  }
  // The socket's wait, capped as a request's (GrantedWait).
  const absl::Duration wait =
      std::clamp(call.deadline - absl::Now(), absl::ZeroDuration(), kBulkMaxWait);
  const absl::Time deadline = absl::Now() + wait;
  const Timer::Id timer = LocalCallTimer().Schedule(
      deadline + bulk::kHandlerGrace, [pending, answer_client, what, wait] {
        answer_client(
            errors::DeadlineExceeded(what, ": no answer within ", absl::FormatDuration(wait)),
            nullptr);
        pending->cancellation.StartCancel();
      });
  fn(std::move(*call.request), deadline, &pending->cancellation,
     [pending, self = shared_from_this(), answer_client, timer](absl::Status s, Answer answer) {
       if (!pending->Settle(s, nullptr)) return;  // the answer goes to the client, not held here
       LocalCallTimer().Cancel(timer);
       {
         absl::MutexLock lock(&self->mu);
         --self->unanswered;
         self->local_calls.erase(pending);
         // As on the socket: a call Stop cancelled says why in our words.
         if (self->stopped && (absl::IsCancelled(s) || absl::IsAborted(s))) {
           s = IsDerivedError(s) ? MarkDerived(ShuttingDown()) : ShuttingDown();
         }
       }
       if (!s.ok()) answer = nullptr;
       answer_client(std::move(s), std::move(answer));
     });
  return [weak = std::weak_ptr<Pending>(pending)] {
    if (auto pending = weak.lock()) pending->cancellation.StartCancel();
  };
}

}  // namespace tensorgrid
