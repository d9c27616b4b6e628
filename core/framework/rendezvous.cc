#include "core/framework/rendezvous.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/framework/attr_value_util.h"
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

absl::StatusOr<std::string> RendezvousKeyOf(const NodeDef& node) {
  std::string tensor_name, send_device, recv_device;
  int64_t incarnation = 0;
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "tensor_name", &tensor_name));
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "send_device", &send_device));
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "send_device_incarnation", &incarnation));
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "recv_device", &recv_device));
  return CreateRendezvousKey(send_device, static_cast<uint64_t>(incarnation), recv_device,
                             tensor_name);
}

absl::Status MarkDerived(absl::Status s) {
  if (!s.ok()) s.SetPayload(kDerivedPayload, absl::Cord("1"));
  return s;
}

bool IsDerivedError(const absl::Status& s) { return s.GetPayload(kDerivedPayload).has_value(); }

LocalRendezvous::~LocalRendezvous() { StartAbort(errors::Aborted("rendezvous destroyed")); }

void LocalRendezvous::Waiter::Finish(const absl::Status& status, const Tensor& value) {
  // A withdrawal that lost the race finds nothing to withdraw.
  if (cancellation != nullptr) cancellation->DeregisterCallback(token);
  done(status, value);
}

absl::Status LocalRendezvous::Send(const std::string& key, const Tensor& value) {
  std::optional<Waiter> waiter;
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
  waiter->Finish(absl::OkStatus(), value);
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const std::string& key, DoneCallback done,
                                CancellationManager* cancellation) {
  Tensor value;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) {
      status = aborted_;
    } else if (cancellation != nullptr && cancellation->IsCancelled()) {
      status = MarkDerived(errors::Cancelled("receive of '", key, "' was cancelled"));
    } else {
      auto it = table_.find(key);
      if (it == table_.end() || !it->second.has_value) {
        Waiter w{next_id_++, std::move(done), nullptr, 0};
        // Registered under mu_: Withdraw, which takes mu_, cannot run before
        // the waiter is in the table.
        std::weak_ptr<LocalRendezvous> self = weak_from_this();
        if (cancellation != nullptr && !self.expired() &&
            cancellation->RegisterCallback(&w.token, [self, key, id = w.id] {
              if (std::shared_ptr<LocalRendezvous> alive = self.lock()) alive->Withdraw(key, id);
            })) {
          w.cancellation = cancellation;
        }
        table_[key].waiters.push_back(std::move(w));
        return;
      }
      value = std::move(it->second.value);
      table_.erase(it);
    }
  }
  done(status, value);
}

void LocalRendezvous::Withdraw(const std::string& key, uint64_t id) {
  DoneCallback done;
  {
    absl::MutexLock lock(&mu_);
    auto it = table_.find(key);
    if (it == table_.end()) return;
    std::deque<Waiter>& waiters = it->second.waiters;
    auto w = std::find_if(waiters.begin(), waiters.end(),
                          [id](const Waiter& x) { return x.id == id; });
    if (w == waiters.end()) return;  // answered meanwhile
    done = std::move(w->done);
    waiters.erase(w);
    if (waiters.empty() && !it->second.has_value) table_.erase(it);
  }
  done(MarkDerived(errors::Cancelled("receive of '", key, "' was cancelled")), Tensor());
}

void LocalRendezvous::StartAbort(const absl::Status& status) {
  std::vector<Waiter> waiters;
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
  for (Waiter& w : waiters) w.Finish(s, Tensor());
}

}  // namespace tensorgrid
