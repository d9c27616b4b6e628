#include "core/runtime/collective_buf_table.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/platform/status.h"

namespace tensorgrid {

std::string CollectiveExecPrefix(int group_key, int instance_key, int64_t exec_seq) {
  return absl::StrCat(group_key, ":", instance_key, ":", exec_seq, ":");
}

std::string CollectiveBufKey(int group_key, int instance_key, int64_t exec_seq, int step,
                             int64_t chunk, int src_rank, int dst_rank) {
  return absl::StrCat(CollectiveExecPrefix(group_key, instance_key, exec_seq), step, ":", chunk,
                      ":", src_rank, "->", dst_rank);
}

namespace {
// The execution prefix of a key: up to and including its third ':'.
std::string PrefixOf(const std::string& key) {
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    pos = key.find(':', pos);
    if (pos == std::string::npos) return key;
    ++pos;
  }
  return key.substr(0, pos);
}
}  // namespace

CollectiveBufTable::~CollectiveBufTable() {
  Shutdown(errors::Aborted("the worker is shutting down"));
}

absl::Status CollectiveBufTable::AbortedStatus(const std::string& key) const {
  if (!shutdown_.ok()) return shutdown_;
  auto it = aborted_.find(PrefixOf(key));
  return it == aborted_.end() ? absl::OkStatus() : it->second;
}

void CollectiveBufTable::DropExpired(absl::Time now) {
  if (now < earliest_expiry_) return;  // the scan runs only once something expired
  earliest_expiry_ = absl::InfiniteFuture();
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.expires <= now) {
      entries_.erase(it++);
    } else {
      earliest_expiry_ = std::min(earliest_expiry_, it->second.expires);
      ++it;
    }
  }
}

void CollectiveBufTable::Put(const std::string& key, Tensor value, absl::Time expires) {
  Callback done;
  {
    absl::MutexLock lock(&mu_);
    if (!AbortedStatus(key).ok()) return;  // its execution failed: nobody will take it
    auto it = waiters_.find(key);
    if (it == waiters_.end()) {
      DropExpired(absl::Now());
      earliest_expiry_ = std::min(earliest_expiry_, expires);
      entries_[key] = Entry{std::move(value), expires};
      return;
    }
    done = std::move(it->second.done);
    if (timer_ != nullptr) timer_->Cancel(it->second.timer);
    waiters_.erase(it);
  }
  done(absl::OkStatus(), std::move(value));
}

void CollectiveBufTable::Get(const std::string& key, absl::Time deadline, Callback done,
                             CancellationManager* cancellation) {
  absl::Status failed;
  Tensor value;
  {
    absl::MutexLock lock(&mu_);
    failed = AbortedStatus(key);
    if (failed.ok()) {
      if (auto it = entries_.find(key); it != entries_.end()) {
        value = std::move(it->second.value);
        entries_.erase(it);
      } else if (waiters_.contains(key)) {
        failed = errors::Internal("collective chunk '", key, "' is wanted twice");
      } else {
        const uint64_t id = next_id_++;
        Timer::Id timer = timer_->Schedule(deadline, [this, key, id] {
          pool_->Schedule([this, key, id] {
            Expire(key, id,
                   errors::DeadlineExceeded("collective chunk '", key, "' did not arrive in time"));
          });
        });
        // Registered under mu_: the withdrawal, which takes mu_, finds the
        // waiter in place. Whoever ends the wait first deregisters it.
        CancellationManager::Token token;
        if (cancellation != nullptr &&
            cancellation->RegisterCallback(&token, [this, key, id] {
              Expire(key, id, errors::Cancelled("the request for collective chunk '", key,
                                                "' was cancelled"));
            })) {
          done = [cancellation, token, done = std::move(done)](absl::Status s, Tensor t) {
            cancellation->DeregisterCallback(token);
            done(std::move(s), std::move(t));
          };
        }
        waiters_[key] = Waiter{id, std::move(done), timer};
        return;
      }
    }
  }
  done(failed, std::move(value));
}

void CollectiveBufTable::Expire(const std::string& key, uint64_t id, const absl::Status& status) {
  Callback done;
  {
    absl::MutexLock lock(&mu_);
    auto it = waiters_.find(key);
    if (it == waiters_.end() || it->second.id != id) return;
    done = std::move(it->second.done);
    if (timer_ != nullptr) timer_->Cancel(it->second.timer);
    waiters_.erase(it);
  }
  done(status, Tensor());
}

void CollectiveBufTable::Abort(const std::string& prefix, const absl::Status& status) {
  std::vector<Callback> failed;
  {
    absl::MutexLock lock(&mu_);
    if (aborted_.contains(prefix)) return;
    aborted_[prefix] = status;
    aborted_order_.push_back(prefix);
    if (aborted_order_.size() > kMaxAborted) {
      aborted_.erase(aborted_order_.front());
      aborted_order_.pop_front();
    }
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (absl::StartsWith(it->first, prefix)) {
        failed.push_back(std::move(it->second.done));
        if (timer_ != nullptr) timer_->Cancel(it->second.timer);
        waiters_.erase(it++);
      } else {
        ++it;
      }
    }
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (absl::StartsWith(it->first, prefix)) {
        entries_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (Callback& done : failed) done(status, Tensor());
}

void CollectiveBufTable::Shutdown(const absl::Status& status) {
  std::unique_ptr<Timer> timer;
  std::vector<Callback> failed;
  {
    absl::MutexLock lock(&mu_);
    if (!shutdown_.ok()) return;
    shutdown_ = status;
    timer = std::move(timer_);
    for (auto& [key, waiter] : waiters_) failed.push_back(std::move(waiter.done));
    waiters_.clear();
    entries_.clear();
  }
  timer.reset();  // outside the lock: a running timeout may be scheduling an Expire
  for (Callback& done : failed) done(status, Tensor());
}

absl::Status CollectiveBufTable::RunLater(absl::Time when, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (timer_ == nullptr) return shutdown_;
  // The timer's thread only hands it over: `fn` may take a while.
  timer_->Schedule(when, [this, fn = std::move(fn)]() mutable { pool_->Schedule(std::move(fn)); });
  return absl::OkStatus();
}

bool CollectiveBufTable::WaitUntilTaken(absl::Time deadline) {
  auto none = +[](absl::flat_hash_map<std::string, Entry>* entries) { return entries->empty(); };
  absl::MutexLock lock(&mu_);
  for (;;) {
    const absl::Time now = absl::Now();
    DropExpired(now);
    if (entries_.empty()) return true;
    if (now >= deadline) return false;
    // Woken by a take; every 100 ms for expiries.
    mu_.AwaitWithTimeout(absl::Condition(none, &entries_),
                         std::min(deadline - now, absl::Milliseconds(100)));
  }
}

size_t CollectiveBufTable::Size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size() + waiters_.size();
}

}  // namespace tensorgrid
