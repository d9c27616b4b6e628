#include "distributed/transport/bulk_client.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "distributed/transport/answer_reader.h"
#include "distributed/transport/frames.h"
#include "distributed/transport/in_place.h"
#include "distributed/transport/local_ports.h"

namespace tensorgrid {
namespace {

// The client's threads: sending (connecting), and reading large answers.
constexpr int kClientThreads = 8;
// Answers with at most this much content (a 256 KiB chunk and its header,
// say) that have fully arrived are read by the watcher itself, and so are
// in-place answers whose copy is at most this large (their header here: the
// copy is a read of the server's memory, not a wait; when it is refused, the
// content the server then sends at once is read there too); larger ones on
// the pool.
constexpr uint64_t kInlineContentBytes = 256 << 10;
constexpr uint64_t kInlineAnswerBytes = kInlineContentBytes + bulk::kLongestAnswerHead;
// Requests up to this size go out on the caller's thread when a pooled
// connection takes them at once.
constexpr size_t kInlineRequestBytes = 64 << 10;
// Past a tensor request's deadline, for the server's own DeadlineExceeded
// (naming the key) to arrive before the client gives up.
constexpr absl::Duration kTensorRequestGrace = absl::Milliseconds(200);

}  // namespace

absl::Status BulkClient::Closing(absl::string_view what) {
  return errors::Cancelled(what, ": the bulk client is closing");
}

BulkClient::BulkClient(std::string host, std::string addressee)
    : addressee_(std::move(addressee)),
      pool_(std::move(host)),
      in_place_(bulk::InPlaceAllowed(pool_.host())) {}

BulkClient::~BulkClient() {
  std::thread watcher;
  closing_.store(true);  // what still ends from here on ends Cancelled, with no fallback
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // new calls fail Cancelled from here on
    // A send that started before may still be handing work to the pool.
    mu_.Await(absl::Condition(
        +[](int* sending) { return *sending == 0; }, &sending_));
    watcher = std::move(watcher_);
  }
  if (watcher.joinable()) {
    Wake();
    watcher.join();  // fails what still waits
  }
  std::unique_ptr<ThreadPool> threads;
  {
    absl::MutexLock lock(&mu_);
    threads = std::move(threads_);
  }
  threads.reset();  // waits for the fetches, sends and answers in flight
  FailWaiting();    // sent after the watcher left
}

void BulkClient::Waiting::Finish(absl::Status status, Fallback fallback, std::string answer) {
  // A fallback is not taken from a client being destroyed (its owner may be
  // going too): the request ends Cancelled instead.
  if (closing != nullptr && fallback != Fallback::kNone && closing->load()) {
    status = Closing(what);
    fallback = Fallback::kNone;
  }
  if (call_done) {
    call_done(std::move(status), std::move(answer), fallback);
  } else {
    done(std::move(status), fallback);
  }
}

BulkClient::Fallback BulkClient::FallbackFor(bulk::ConnectFailure failure) {
  switch (failure) {
    case bulk::ConnectFailure::kUnreachable: return Fallback::kPortUnreachable;
    case bulk::ConnectFailure::kRefused: return Fallback::kPortRefused;
    case bulk::ConnectFailure::kNoSocket: return Fallback::kNotSent;
    case bulk::ConnectFailure::kDeadline: break;
  }
  return Fallback::kOverGrpc;
}

void BulkClient::FailWaiting() {
  std::map<int, Waiting> left;
  std::set<std::shared_ptr<LocalWaiting>> local;
  {
    absl::MutexLock lock(&mu_);
    left.swap(waiting_);
    local.swap(local_);
  }
  for (auto& [fd, w] : left) {
    w.fd.reset();
    w.Finish(Closing(w.what), Fallback::kNone);
  }
  for (const auto& waiting : local) {
    bulk::LocalCallWithdraw withdraw;
    {
      absl::MutexLock lock(&waiting->mu);
      withdraw = std::move(waiting->withdraw);
    }
    if (waiting->End(Closing(waiting->what), nullptr) && withdraw) withdraw();
  }
}

void BulkClient::Wake() {
  const uint64_t one = 1;
  if (wake_fd_.valid()) (void)!write(wake_fd_.get(), &one, sizeof(one));
}

void BulkClient::WakeBy(absl::Time when) {
  // A timer, not the eventfd: arming it wakes nobody now, so a request sent
  // while the watcher sleeps costs the sender no switch to the watcher and
  // back.
  const int64_t ns = std::max<int64_t>(1, absl::ToInt64Nanoseconds(when - absl::Now()));
  itimerspec at{};
  at.it_value.tv_sec = ns / 1'000'000'000;
  at.it_value.tv_nsec = ns % 1'000'000'000;
  if (timerfd_settime(timer_fd_.get(), 0, &at, nullptr) != 0) Wake();
  watcher_wakes_ = when;
}

absl::Status BulkClient::StartWatching() {
  if (stopping_) return errors::Cancelled("the bulk client is closing");
  if (threads_ == nullptr) threads_ = std::make_unique<ThreadPool>(kClientThreads);
  if (!wake_fd_.valid()) wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!timer_fd_.valid()) {
    timer_fd_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  }
  if (!epoll_fd_.valid()) epoll_fd_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!wake_fd_.valid() || !timer_fd_.valid() || !epoll_fd_.valid()) {
    return errors::Unavailable("the bulk port's watcher: ", std::strerror(errno));
  }
  if (!watcher_.joinable()) {
    for (int fd : {wake_fd_.get(), timer_fd_.get()}) {
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = fd;
      if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &e) != 0 && errno != EEXIST) {
        return errors::Unavailable("the bulk port's watcher: ", std::strerror(errno));
      }
    }
    try {
      watcher_ = std::thread([this] { WatchLoop(); });
    } catch (const std::system_error& e) {
      return errors::Unavailable("the bulk port's watcher thread: ", e.what());
    }
  }
  return absl::OkStatus();
}

void BulkClient::RecvBufAsync(int port, const std::string& token, const std::string& key,
                              absl::Time deadline, const Tensor* into, Tensor* out,
                              FetchCallback done) {
  AskForTensor(port, token, std::nullopt, key, deadline, into, out, std::move(done));
}

void BulkClient::RecvTensorAsync(int port, const std::string& token, int64_t step_id,
                                 const std::string& key, absl::Time deadline, Tensor* out,
                                 FetchCallback done) {
  AskForTensor(port, token, step_id, key, deadline, nullptr, out, std::move(done));
}

void BulkClient::AskForTensor(int port, const std::string& token, std::optional<int64_t> step_id,
                              const std::string& key, absl::Time deadline, const Tensor* into,
                              Tensor* out, FetchCallback done) {
  const char* const kind = step_id ? "RecvTensor" : "RecvBuf";
  if (token.size() > bulk::kMaxTokenBytes || key.empty() || key.size() > bulk::kMaxKeyBytes) {
    return done(
        errors::InvalidArgument(kind, " on the bulk port: a key of ", key.size(),
                                " bytes or a token of ", token.size(), " bytes is out of range"),
        Fallback::kNone);
  }
  bulk::TensorRequest request;
  request.rendezvous = step_id.has_value();
  request.token = token;
  request.addressee = addressee_;
  request.key = key;
  request.may_read_in_place = in_place_ && !in_place_refused_.load();
  request.wait_ms = bulk::WaitMs(deadline);
  request.step_id = step_id.value_or(0);
  Waiting w;
  w.closing = &closing_;
  w.port = port;
  // The server answers DeadlineExceeded (naming the key) by `deadline`.
  w.deadline = deadline + kTensorRequestGrace;
  w.what = step_id ? absl::StrCat("RecvTensor of '", key, "' for step ", *step_id)
                   : absl::StrCat("RecvBuf of '", key, "'");
  w.into = into;
  w.out = out;
  w.done = std::move(done);
  w.may_read_in_place = request.may_read_in_place;
  w.may_take_proto = step_id.has_value();  // strings come as a TensorProto
  Send(std::move(w), request.Encode());
}

void BulkClient::RecvTensorsAsync(int port, const std::string& token, int64_t step_id,
                                  const std::vector<std::string>& keys, absl::Time deadline,
                                  std::vector<Tensor>* outs, ItemCallback received,
                                  FetchCallback done) {
  bulk::TensorRequest request;
  request.rendezvous = request.batch = true;
  request.key = bulk::EncodeKeys(keys);
  if (token.size() > bulk::kMaxTokenBytes || !bulk::DecodeKeys(request.key) || outs == nullptr ||
      outs->size() != keys.size()) {
    return done(
        errors::InvalidArgument("RecvTensors on the bulk port: ", keys.size(), " keys (a block of ",
                                request.key.size(), " bytes) or a token of ", token.size(),
                                " bytes is out of range"),
        Fallback::kNone);
  }
  request.token = token;
  request.addressee = addressee_;
  request.may_read_in_place = in_place_ && !in_place_refused_.load();
  request.wait_ms = bulk::WaitMs(deadline);
  request.step_id = step_id;
  Waiting w;
  w.closing = &closing_;
  w.port = port;
  w.deadline = deadline + kTensorRequestGrace;  // as a RecvTensor's
  w.what = absl::StrCat("RecvTensors of ", keys.size(), " tensors for step ", step_id);
  w.done = std::move(done);
  w.outs = outs;
  w.received = std::move(received);
  w.answered.assign(keys.size(), false);
  w.left = static_cast<int>(keys.size());
  w.may_read_in_place = request.may_read_in_place;
  w.may_take_proto = true;
  Send(std::move(w), request.Encode());
}

void BulkClient::CallAsync(int port, const std::string& token, const std::string& method,
                           std::string request, absl::Time deadline, CallCallback done) {
  StartCall(port, token, method, std::move(request), deadline, /*read_here=*/false,
            std::move(done));
}

void BulkClient::Call(int port, const std::string& token, const std::string& method,
                      std::string request, absl::Time deadline, CallCallback done) {
  StartCall(port, token, method, std::move(request), deadline, /*read_here=*/true, std::move(done));
}

void BulkClient::StartCall(int port, const std::string& token, const std::string& method,
                           std::string request, absl::Time deadline, bool read_here,
                           CallCallback done) {
  if (token.size() > bulk::kMaxTokenBytes || method.empty() ||
      method.size() > bulk::kMaxMethodBytes) {
    return done(
        errors::InvalidArgument("a call on the bulk port: a method name of ", method.size(),
                                " bytes or a token of ", token.size(), " bytes is out of range"),
        "", Fallback::kNone);
  }
  if (CallInProcess(port, token, method, &request, deadline, read_here, &done)) return;
  std::string framed =
      bulk::EncodeCallRequest(token, addressee_, method, bulk::WaitMs(deadline), request);
  std::string().swap(request);  // not held twice while it is sent
  Waiting w;
  w.closing = &closing_;
  w.port = port;
  w.deadline = deadline;
  w.what = absl::StrCat(method, " call");
  w.call_done = std::move(done);
  w.read_here = read_here;
  Send(std::move(w), std::move(framed));
}

bool BulkClient::LocalWaiting::End(absl::Status status, bulk::LocalAnswer answer) {
  absl::MutexLock lock(&mu);  // held while `done` runs: the destructor waits for it
  if (ended) return false;
  ended = true;
  withdraw = nullptr;
  std::string bytes;
  if (status.ok() && answer) {
    absl::StatusOr<std::string> made = answer();
    if (made.ok()) {
      bytes = *std::move(made);
    } else {
      status = made.status();
    }
  }
  CallCallback run = std::move(done);
  run(std::move(status), std::move(bytes), Fallback::kNone);
  finished.store(true);
  return true;
}

bool BulkClient::CallInProcess(int port, const std::string& token, const std::string& method,
                               std::string* request, absl::Time deadline, bool read_here,
                               CallCallback* done) {
  // A port of this process: its handler runs here, with no socket and no
  // thread of its own to wake.
  bulk::LocalCallFn local = bulk::FindLocalPort(host(), port);
  if (!local) return false;
  auto waiting = std::make_shared<LocalWaiting>();
  waiting->what = absl::StrCat(method, " call");
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;  // the socket's path says Cancelled
    for (auto it = local_.begin(); it != local_.end();) {
      it = (*it)->finished.load() ? local_.erase(it) : std::next(it);
    }
    local_.insert(waiting);
  }
  {
    absl::MutexLock lock(&waiting->mu);
    waiting->done = *done;
  }
  bulk::LocalCallWithdraw withdraw =
      local(bulk::LocalCall{addressee_, token, method, request, deadline},
            // Never touches the client, which may be gone by the time a withdrawn
            // call's handler answers; the next call forgets it.
            [waiting, read_here](absl::Status s, bulk::LocalAnswer answer) {
              if (!read_here) return (void)waiting->End(std::move(s), std::move(answer));
              absl::MutexLock lock(&waiting->mu);
              waiting->answered = true;
              waiting->status = std::move(s);
              waiting->answer = std::move(answer);
            });
  if (!withdraw) {  // not taken: the socket, as if never asked
    absl::MutexLock lock(&mu_);
    local_.erase(waiting);
    return false;
  }
  absl::Status status;
  bulk::LocalAnswer answer;
  {
    absl::MutexLock lock(&waiting->mu);
    if (!waiting->ended) waiting->withdraw = std::move(withdraw);
    if (!read_here) return true;
    // Bounded: the handler answers by the deadline's grace, the client's
    // destructor ends it, or the port's Stop does.
    waiting->mu.Await(absl::Condition(
        +[](LocalWaiting* w) ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->answered || w->ended; },
        waiting.get()));
    status = waiting->status;
    answer = std::move(waiting->answer);
  }
  waiting->End(std::move(status), std::move(answer));
  return true;
}

void BulkClient::Send(Waiting w, std::string request) {
  absl::Status started;
  {
    absl::MutexLock lock(&mu_);
    started = StartWatching();
  }
  if (absl::IsCancelled(started)) return w.Finish(Closing(w.what), Fallback::kNone);
  if (!started.ok()) {  // callbacks never run under mu_: they may call us again
    return w.Finish(WithContext(started, w.what), Fallback::kOverGrpc);
  }
  // The common case costs no thread hop: a pooled connection whose socket
  // buffer takes the whole (small) request at once.
  size_t sent = 0;
  if (request.size() <= kInlineRequestBytes) {
    w.fd = pool_.TakeIdle(w.port);
    if (w.fd.valid()) {
      w.pooled = true;
      const ssize_t n =
          send(w.fd.get(), request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n == static_cast<ssize_t>(request.size())) {
        // A caller that blocks anyway reads its answer itself: no hop to the
        // watcher and back.
        return w.read_here ? ReadAnswer(std::move(w)) : Watch(std::move(w));
      }
      if (n > 0) {
        sent = static_cast<size_t>(n);
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        w.fd.reset();  // closed by the server meanwhile: a new one on the pool
        pool_.DropIdle(w.port);
        w.pooled = false;
      }
    }
  }
  SendOnPool(std::move(w), std::move(request), sent);
}

bool BulkClient::Schedule(std::function<void()> fn) {
  ThreadPool* threads;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    if (threads_ == nullptr) threads_ = std::make_unique<ThreadPool>(kClientThreads);
    threads = threads_.get();
    ++sending_;  // the destructor keeps the pool until `fn` is queued
  }
  threads->Schedule(std::move(fn));
  absl::MutexLock lock(&mu_);
  --sending_;
  return true;
}

void BulkClient::SendOnPool(Waiting w, std::string request, size_t sent) {
  // Connecting may take a moment: not on the caller's thread.
  auto send = std::make_shared<std::pair<Waiting, std::string>>(std::move(w), std::move(request));
  const bool queued = Schedule([this, send, sent]() mutable {
    Waiting& w = send->first;
    std::string& request = send->second;
    for (;;) {
      if (!w.fd.valid() && absl::Now() >= w.deadline) {
        return w.Finish(errors::DeadlineExceeded(w.what,
                                                 ": the deadline passed before it was "
                                                 "sent to the bulk port"),
                        Fallback::kNone);
      }
      if (!w.fd.valid()) {
        bulk::ConnectFailure failure = bulk::ConnectFailure::kUnreachable;
        absl::StatusOr<bulk::UniqueFd> fd = pool_.Connect(w.port, w.deadline, &w.pooled, &failure);
        if (!fd.ok()) return w.Finish(WithContext(fd.status(), w.what), FallbackFor(failure));
        w.fd = *std::move(fd);
      }
      bulk::SetTimeout(w.fd.get(), SO_SNDTIMEO, w.deadline - absl::Now());
      iovec iov{request.data() + sent, request.size() - sent};
      if (bulk::WriteFull(w.fd.get(), &iov, 1)) break;
      const std::string why = bulk::Errno();
      w.fd.reset();
      if (w.pooled && sent == 0) {  // a connection the server had closed: the others too, likely
        pool_.DropIdle(w.port);
        continue;
      }
      return w.Finish(errors::Unavailable("sending ", w.what, " to the bulk port ", host(), ":",
                                          w.port, ": ", why),
                      Fallback::kOverGrpc);
    }
    Watch(std::move(w));
  });
  if (!queued) {
    Waiting& w = send->first;
    w.fd.reset();
    w.Finish(Closing(w.what), Fallback::kNone);
  }
}

void BulkClient::Watch(Waiting w) {
  if (!w.ahead.empty()) {
    // Part of the answer was taken off the socket already: the watcher
    // would wait for bytes that came. The rest is read where a read may
    // wait (an in-place answer waits for our verdict, say).
    auto moved = std::make_shared<Waiting>(std::move(w));
    if (Schedule([this, moved] { ReadAnswer(std::move(*moved)); })) return;
    moved->fd.reset();
    return moved->Finish(Closing(moved->what), Fallback::kNone);
  }
  const int fd = w.fd.get();
  absl::Status failed;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      failed = Closing(w.what);
    } else {
      epoll_event e{};
      e.events = EPOLLIN | EPOLLRDHUP;
      e.data.fd = fd;
      w.heard = absl::Now();
      if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &e) == 0) {
        // The watcher sleeps until the earliest deadline it knows: wake it
        // by this one when it comes sooner.
        const absl::Time wake = std::min(w.deadline, w.heard + peer_silence_);
        if (wake < watcher_wakes_) WakeBy(wake);
        const bool inserted = waiting_.emplace(fd, std::move(w)).second;
        assert(inserted);  // an open fd waits once
        (void)inserted;
        return;
      }
      failed = errors::Unavailable(w.what, ": cannot watch its connection: ", std::strerror(errno));
    }
  }
  w.fd.reset();
  w.Finish(failed, Fallback::kNone);
}

bool BulkClient::TakeBeats(Waiting* w) {
  bulk::Incoming in(w->fd.get(), &w->ahead);
  const ssize_t received = in.Receive();
  // Beats come only before an answer's first byte, which is never taken
  // here.
  size_t beats = 0;
  const absl::string_view ahead = in.ahead();
  while (beats < ahead.size() &&
         static_cast<bulk::AnswerKind>(ahead[beats]) == bulk::AnswerKind::kStillWorking) {
    ++beats;
  }
  if (beats > 0) {
    in.Skip(beats);
    w->heard = absl::Now();
    w->beaten = true;
  }
  // Beats only, or nothing at all (a wake-up with nothing to read): wait on.
  return in.ahead().empty() &&
         (received > 0 || (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)));
}

absl::Status BulkClient::Silent(const Waiting& w) const {
  return errors::Unavailable(w.what, " from the bulk port ", host(), ":", w.port,
                             ": nothing heard for ", absl::FormatDuration(peer_silence_),
                             " (the task may be frozen, or its host gone)");
}

bool BulkClient::AnswerIsHere(Waiting* w) {
  bulk::Incoming in(w->fd.get(), &w->ahead);
  // The answer's size from its head; then whether all of it is ahead or
  // waits in the socket.
  auto whole = [&] {
    const absl::string_view head = in.ahead();
    if (head.empty()) return false;
    const std::optional<uint64_t> size =
        static_cast<bulk::AnswerKind>(head[0]) == bulk::AnswerKind::kInPlace
            ? bulk::InPlaceAnswerSize(head, kInlineContentBytes)
            : bulk::AnswerSize(head);
    if (!size || *size > kInlineAnswerBytes) return false;
    if (in.ahead().size() >= *size) return true;
    int available = 0;
    return ioctl(in.fd(), FIONREAD, &available) == 0 &&
           in.ahead().size() + static_cast<uint64_t>(available) >= *size;
  };
  if (!in.ahead().empty() && whole()) return true;
  const ssize_t received = in.Receive();
  if (received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    return true;  // the end is quick to read
  }
  return whole();
}

void BulkClient::WatchLoop() {
  epoll_event events[64];
  for (;;) {
    int timeout_ms = -1;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
      watcher_wakes_ = absl::InfiniteFuture();
      for (const auto& [fd, w] : waiting_) {
        watcher_wakes_ = std::min({watcher_wakes_, w.deadline, w.heard + peer_silence_});
      }
      if (watcher_wakes_ != absl::InfiniteFuture()) {
        timeout_ms = static_cast<int>(
            std::clamp<int64_t>(absl::ToInt64Milliseconds(watcher_wakes_ - absl::Now()) + 1, 0,
                                absl::ToInt64Milliseconds(kBulkMaxWait)));
      }
    }
    const int n = epoll_wait(epoll_fd_.get(), events, 64, timeout_ms);
    if (n < 0 && errno != EINTR) absl::SleepFor(absl::Milliseconds(10));
    std::vector<Waiting> ready, expired;
    {
      absl::MutexLock lock(&mu_);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_fd_.get() || fd == timer_fd_.get()) {
          uint64_t drained;
          (void)!read(fd, &drained, sizeof(drained));
          continue;
        }
        auto it = waiting_.find(fd);
        if (it == waiting_.end()) continue;
        // Beats only (the server still works on it): heard, and still waiting.
        if (TakeBeats(&it->second)) continue;
        epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);  // the fd may go back to the pool
        ready.push_back(std::move(it->second));
        waiting_.erase(it);
      }
      const absl::Time now = absl::Now();
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        if (it->second.deadline > now && it->second.heard + peer_silence_ > now) {
          ++it;
          continue;
        }
        epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, it->first, nullptr);
        expired.push_back(std::move(it->second));
        it = waiting_.erase(it);
      }
    }
    for (Waiting& w : expired) {
      w.fd.reset();
      w.Finish(w.deadline <= absl::Now()
                   ? errors::DeadlineExceeded(w.what, " from the bulk port ", host(), ":", w.port,
                                              ": no answer before the deadline")
                   : Silent(w),
               Fallback::kNone);
    }
    // Small answers that are all here are read at once; the others on the
    // pool, so that a slow one does not hold up the rest.
    ThreadPool* threads;
    {
      absl::MutexLock lock(&mu_);
      threads = threads_.get();  // reset only after this thread has left
    }
    for (Waiting& w : ready) {
      if (AnswerIsHere(&w)) {
        ReadAnswer(std::move(w));
      } else {
        auto moved = std::make_shared<Waiting>(std::move(w));
        threads->Schedule([this, moved] { ReadAnswer(std::move(*moved)); });
      }
    }
  }
  FailWaiting();
}

void BulkClient::ReadAnswer(Waiting w) {
  // For errors only: not built on the way of an answer that arrives whole.
  auto what = [&] { return absl::StrCat(w.what, " from the bulk port ", host(), ":", w.port); };
  bulk::Incoming in(w.fd.get(), &w.ahead);
  char kind_byte;
  if (w.heard == absl::InfinitePast()) w.heard = absl::Now();  // read on the caller's thread
  for (;;) {
    const absl::Time until = std::min(w.deadline, w.heard + peer_silence_);
    if (in.ReadFull(&kind_byte, 1, until) == 1) {
      if (static_cast<bulk::AnswerKind>(kind_byte) != bulk::AnswerKind::kStillWorking) break;
      w.heard = absl::Now();
      w.beaten = true;
      continue;
    }
    if ((errno == 0 || errno == ECONNRESET) && !w.beaten) {
      // Hung up unanswered (at its limit, or stopping): never run.
      w.fd.reset();
      if (w.pooled) pool_.DropIdle(w.port);
      return w.Finish(errors::Unavailable(what(), ": the server hung up before answering"),
                      Fallback::kOverGrpc);
    }
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && until < w.deadline) {
      w.fd.reset();
      pool_.DropIdle(w.port);  // its other connections would be as silent
      return w.Finish(Silent(w), Fallback::kNone);
    }
    // Past the deadline, or a server that had said it worked on it broke.
    absl::Status broken = bulk::IoFailure(absl::StrCat(what(), ": waiting for the answer"));
    w.fd.reset();
    return w.Finish(std::move(broken), Fallback::kNone);
  }
  const auto kind = static_cast<bulk::AnswerKind>(kind_byte);
  // A RecvTensors gets items (or, before any, the request's refusal).
  if (w.outs != nullptr && kind != bulk::AnswerKind::kError &&
      kind != bulk::AnswerKind::kNotServed) {
    return ReadItem(std::move(w), kind);
  }
  bulk::AnswerRead read;
  std::string answer;
  Fallback fallback = Fallback::kNone;
  if (kind == bulk::AnswerKind::kError || kind == bulk::AnswerKind::kNotServed) {
    read = bulk::ReadErrorAnswer(in, kind, w.deadline, what);
    // Refused unread (no handler, another task's port, too large): gRPC may
    // serve it.
    if (kind == bulk::AnswerKind::kNotServed && read.from_server) fallback = Fallback::kOverGrpc;
  } else if (w.call_done) {
    read = kind == bulk::AnswerKind::kBytes ? bulk::ReadBytesAnswer(in, w.deadline, what, &answer)
                                            : bulk::UnexpectedAnswer(kind, what);
  } else if (kind == bulk::AnswerKind::kProto) {
    // A RecvTensor's tensor of strings: only such a request may get one.
    read = w.may_take_proto
               ? bulk::ReadProtoAnswer(in, w.deadline, what, w.out)
               : bulk::AnswerRead{errors::DataLoss(what(), ": a TensorProto answer to a RecvBuf")};
  } else if (kind == bulk::AnswerKind::kInPlace && !w.may_read_in_place) {
    // Never asked: no memory of ours is read for it.
    read.status = errors::DataLoss(what(),
                                   ": an in-place answer to a request that did not "
                                   "ask for one");
  } else if (kind == bulk::AnswerKind::kTensor || kind == bulk::AnswerKind::kInPlace) {
    read = bulk::ReadTensorAnswer(in, kind == bulk::AnswerKind::kInPlace, w.deadline, what, w.into,
                                  w.out, &in_place_refused_);
  } else {
    read = bulk::UnexpectedAnswer(kind, what);
  }
  // Bytes after the answer would put the next request out of step.
  if (read.reusable && in.ahead().empty()) {
    pool_.Release(w.port, std::move(w.fd));
  } else {
    w.fd.reset();
  }
  w.Finish(std::move(read.status), fallback, std::move(answer));
}

void BulkClient::ReadItem(Waiting w, bulk::AnswerKind kind) {
  auto what = [&] { return absl::StrCat(w.what, " from the bulk port ", host(), ":", w.port); };
  bulk::Incoming in(w.fd.get(), &w.ahead);
  // The server works on it from its first item on: what goes wrong from
  // here is final, never sent elsewhere.
  w.beaten = true;
  for (;;) {
    bulk::AnswerRead read;
    int index = -1;
    if (kind != bulk::AnswerKind::kItem) {
      read.status = errors::DataLoss(what(), ": an answer of kind ", static_cast<int>(kind),
                                     " among its items");
    } else {
      read = bulk::ReadItemAnswer(in, w.deadline, what, w.may_read_in_place, w.answered, w.outs,
                                  &in_place_refused_, &index);
    }
    if (index >= 0 && (read.reusable || read.from_server)) {
      // The item's own answer, read whole (its error is the server's).
      w.answered[index] = true;
      --w.left;
      w.received(index, read.status);
    }
    if (!read.reusable) {
      // The connection is out of step or broken: the items still to come
      // will not.
      w.fd.reset();
      absl::Status why = read.status.ok() || read.from_server
                             ? errors::DataLoss(what(), ": the connection is not to be trusted")
                             : read.status;
      if (w.left == 0) why = absl::OkStatus();
      return w.Finish(std::move(why), Fallback::kNone);
    }
    if (w.left == 0) {
      if (in.ahead().empty()) {
        pool_.Release(w.port, std::move(w.fd));
      } else {
        w.fd.reset();  // bytes after the last item: out of step
      }
      return w.Finish(absl::OkStatus(), Fallback::kNone);
    }
    // The next item: read at once when it is all here (items sent together
    // arrive together), else when the watcher sees it.
    if (!AnswerIsHere(&w)) return Watch(std::move(w));
    char next;
    if (in.ReadFull(&next, 1, w.deadline) != 1) {
      w.fd.reset();
      return w.Finish(bulk::IoFailure(absl::StrCat(what(), ": reading an item")), Fallback::kNone);
    }
    kind = static_cast<bulk::AnswerKind>(next);
  }
}

}  // namespace tensorgrid
