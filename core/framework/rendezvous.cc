#include "core/framework/rendezvous.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {
constexpr char kDerivedPayload[] = "tensorgrid/derived";
}  // namespace

std::string CreateRendezvousKey(const std::string& src_device, uint64_t src_incarnation,
                                const std::string& dst_device, const std::string& tensor_name,
                                const std::string& frame_iter) {
  return absl::StrFormat("%s;%x;%s;%s;%s", src_device, src_incarnation, dst_device, tensor_name,
                         frame_iter);
}

absl::Status MarkDerived(absl::Status s) {
  if (!s.ok()) s.SetPayload(kDerivedPayload, absl::Cord("1"));
  return s;
}

bool IsDerivedError(const absl::Status& s) { return s.GetPayload(kDerivedPayload).has_value(); }

LocalRendezvous::~LocalRendezvous() { StartAbort(errors::Aborted("rendezvous destroyed")); }

absl::Status LocalRendezvous::Send(const std::string& key, const Tensor& value) {
  DoneCallback waiter;
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) return aborted_;
    Item& item = table_[key];
    if (item.waiters.empty()) {
      if (item.has_value)
        return errors::AlreadyExists("tensor '", key, "' was sent twice in one step");
      item.has_value = true;
      item.value = value;
      return absl::OkStatus();
    }
    waiter = std::move(item.waiters.front());
    item.waiters.pop_front();
    if (item.waiters.empty()) table_.erase(key);
  }
  waiter(absl::OkStatus(), value);
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Tensor value;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) {
      status = aborted_;
    } else {
      auto it = table_.find(key);
      if (it == table_.end() || !it->second.has_value) {
        table_[key].waiters.push_back(std::move(done));
        return;
      }
      value = std::move(it->second.value);
      table_.erase(it);
    }
  }
  done(status, value);
}

void LocalRendezvous::StartAbort(const absl::Status& status) {
  std::vector<DoneCallback> waiters;
  absl::Status s = MarkDerived(status.ok() ? errors::Aborted("step aborted") : status);
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) return;
    aborted_ = s;
    for (auto& [key, item] : table_) {
      for (auto& w : item.waiters) waiters.push_back(std::move(w));
    }
    table_.clear();
  }
  for (auto& w : waiters) w(s, Tensor());
}

}  // namespace tensorgrid
