#include "distributed/transport/server_state.h"

#include <sys/socket.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/framework/rendezvous.h"
#include "core/platform/status.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {
namespace {

// Equal strings, in a time that does not depend on where they differ.
bool SameToken(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

}  // namespace

namespace bulk {

void AnswerAndHangUp(int fd, const std::string& answer) {
  if (!WriteFull(fd, answer)) return;
  shutdown(fd, SHUT_WR);
  char sink[64 << 10];
  const absl::Time until = absl::Now() + absl::Milliseconds(200);
  size_t drained = 0;
  while (drained < (size_t{4} << 20)) {
    const size_t got = ReadFull(fd, sink, sizeof(sink), until);
    drained += got;
    if (got < sizeof(sink)) break;
  }
}

void Refuse(int fd, const absl::Status& why) {
  AnswerAndHangUp(fd, EncodeError(why, AnswerKind::kNotServed));
}

}  // namespace bulk

bool BulkServer::State::Pending::Settle(absl::Status s, Answer a) {
  absl::MutexLock lock(&mu);
  if (done) return false;
  status = std::move(s);
  answer = std::move(a);
  done = true;
  return true;
}

void BulkServer::State::Pending::SettleItem(int index, absl::Status s) {
  absl::MutexLock lock(&mu);
  items[index].status = std::move(s);
  settled.push_back(index);
  done = true;
}

BulkServer::State::Answering::Answering(State* state, int fd) : state_(state), fd_(fd) {
  absl::MutexLock lock(&state_->mu);
  state_->awaiting.insert(fd_);
}

BulkServer::State::Answering::~Answering() {
  absl::MutexLock lock(&state_->mu);
  state_->awaiting.erase(fd_);
  state_->writing.erase(fd_);
}

void BulkServer::State::Answering::Writing() {
  absl::MutexLock lock(&state_->mu);
  state_->writing.insert(fd_);
}

absl::Status BulkServer::State::CheckToken(absl::string_view given, absl::string_view what) const {
  if (options.token.empty() || SameToken(given, options.token)) return absl::OkStatus();
  return errors::Unauthenticated(what, " on the bulk port: the auth token ",
                                 given.empty() ? "is missing" : "does not match");
}

absl::Status BulkServer::State::CheckAddressee(absl::string_view addressee,
                                               absl::string_view what) const {
  if (addressee.empty() || options.task.empty() || addressee == options.task) {
    return absl::OkStatus();
  }
  return errors::FailedPrecondition(what, " for ", addressee, " reached the bulk port of ",
                                    options.task);
}

bool BulkServer::State::ReadNames(bulk::Incoming& in, uint32_t token_bytes,
                                  uint32_t addressee_bytes, uint32_t name_bytes, uint32_t max_name,
                                  absl::Time deadline, absl::string_view what,
                                  std::string* addressee, std::string* name) {
  const int fd = in.fd();
  if (token_bytes > bulk::kMaxTokenBytes || addressee_bytes > bulk::kMaxKeyBytes ||
      name_bytes == 0 || name_bytes > max_name) {
    return false;
  }
  std::string given(token_bytes, '\0');
  if (in.ReadFull(given.data(), given.size(), deadline) != given.size()) return false;
  if (absl::Status denied = CheckToken(given, what); !denied.ok()) {
    bulk::AnswerAndHangUp(fd, bulk::EncodeError(denied));  // final: no guessing at wire speed
    return false;
  }
  addressee->resize(addressee_bytes);
  name->resize(name_bytes);
  return in.ReadFull(addressee->data(), addressee->size(), deadline) == addressee->size() &&
         in.ReadFull(name->data(), name->size(), deadline) == name->size();
}

absl::Status BulkServer::State::Await(Pending& p, int fd, absl::Time deadline, absl::Duration wait,
                                      absl::string_view what, absl::Duration grace) {
  // The handler answers by `deadline` (DeadlineExceeded naming what it
  // waited for); a little grace beyond, and Stop, end the wait in any case.
  const absl::Time give_up = deadline + grace;
  const absl::Status shutting_down = errors::Aborted("the task is shutting down");
  absl::Time stop_until = absl::InfiniteFuture();  // set once Stop was seen
  bool cancelled = false;
  absl::Time next_beat = absl::Now() + options.beat_interval;
  // Not under p.mu: a cancelled handler may answer on this thread.
  auto cancel = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(p.mu) {
    if (cancelled) return;
    cancelled = true;
    p.mu.Unlock();
    p.cancellation.StartCancel();
    p.mu.Lock();
  };
  absl::MutexLock lock(&p.mu);
  for (;;) {
    // Every 100 ms (for Stop and a hang-up), and at the end of the wait.
    const absl::Time next = stop_until != absl::InfiniteFuture() ? stop_until : give_up;
    const absl::Duration tick =
        std::clamp(next - absl::Now(), absl::Milliseconds(1), absl::Milliseconds(100));
    if (p.mu.AwaitWithTimeout(absl::Condition(&p.done), tick)) {
      // A call that Stop cancelled (or the hang-up Stop looks like) says
      // why in its own words; ours are clearer. A handler that failed
      // before this wait cancelled it keeps its own reason (a worker shut
      // down names its task), even if Stop has begun since.
      if (cancelled && (absl::IsCancelled(p.status) || absl::IsAborted(p.status))) {
        absl::MutexLock state_lock(&mu);
        if (stopped) return IsDerivedError(p.status) ? MarkDerived(shutting_down) : shutting_down;
      }
      return p.status;
    }
    bool stopping;
    absl::Time began;
    {
      absl::MutexLock state_lock(&mu);
      stopping = stopped;
      began = stop_began;
    }
    const absl::Time now = absl::Now();
    if (now >= next_beat) {  // still working: see AnswerKind::kStillWorking
      const char beat = static_cast<char>(bulk::AnswerKind::kStillWorking);
      (void)!send(fd, &beat, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      next_beat = now + options.beat_interval;
    }
    if (stopping) {
      if (!p.await_handler) {
        cancel();
        return shutting_down;
      }
      // From when Stop began, as Stop counts it.
      if (stop_until == absl::InfiniteFuture()) stop_until = began + options.stop_grace;
      cancel();
      if (now >= stop_until) return shutting_down;
      continue;
    }
    if (now >= give_up) {
      cancel();
      return errors::DeadlineExceeded(what, ": no answer within ", absl::FormatDuration(wait));
    }
    if (!cancelled && bulk::PeerHungUp(fd)) {
      // Withdrawn at once. A call then waits for its cancelled handler's
      // answer; a tensor request waits no more.
      cancel();
      if (!p.await_handler) {
        absl::MutexLock state_lock(&mu);  // or Stop, which looks the same
        return stopped ? shutting_down : errors::Cancelled(what, ": the client hung up");
      }
    }
  }
}

}  // namespace tensorgrid
