// BulkServer's handler of calls: a method's request bytes in, its answer's
// bytes out, through the handler a service registered (ServeCall).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "distributed/transport/server_state.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {

bool BulkServer::State::ServeCall(int fd, absl::Time header_deadline) {
  char fixed_bytes[bulk::CallRequestFixed::kBytes];
  if (bulk::ReadFull(fd, fixed_bytes, sizeof(fixed_bytes), header_deadline) !=
      sizeof(fixed_bytes)) {
    return false;
  }
  const bulk::CallRequestFixed fixed = bulk::CallRequestFixed::Decode(fixed_bytes);
  std::string addressee, method;
  if (!ReadNames(fd, fixed.token_bytes, fixed.addressee_bytes, fixed.method_bytes,
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
  if (!bulk::ReadGrowing(fd, fixed.request_bytes, &request, request_deadline)) return false;
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

}  // namespace tensorgrid
