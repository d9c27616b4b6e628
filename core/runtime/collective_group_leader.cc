#include "core/runtime/collective_group_leader.h"

#include <algorithm>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/device_name.h"
#include "core/framework/tensor_shape.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

std::string Describe(const CompleteInstanceArgs& a) {
  return absl::StrCat(a.op, " of ", DataTypeString(a.dtype), " ",
                      TensorShape(absl::MakeConstSpan(a.shape)).DebugString());
}

// The most members a group may have, and the longest a join may wait.
constexpr int kMaxGroupSize = 1 << 16;
constexpr absl::Duration kMaxJoinWait = absl::Hours(24);

// `device` names one device fully ("/job:w/replica:0/task:1/device:CPU:0").
absl::Status CheckMemberDevice(const std::string& device, absl::string_view what) {
  absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(device);
  if (!parsed.ok() || !parsed->IsFullySpecified()) {
    return errors::InvalidArgument(what, ": '", device.substr(0, 256),
                                   "' is not a full device name");
  }
  return absl::OkStatus();
}

absl::Status CheckJoinWait(absl::Duration timeout, absl::string_view what) {
  if (timeout < absl::ZeroDuration() || timeout > kMaxJoinWait) {
    return errors::InvalidArgument(what, ": a timeout of ", absl::FormatDuration(timeout),
                                   " is outside [0, ", absl::FormatDuration(kMaxJoinWait), "]");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateGroupJoin(const CompleteGroupArgs& r) {
  const std::string what = absl::StrCat("joining collective group ", r.group_key);
  if (r.group_size < 1 || r.group_size > kMaxGroupSize) {
    return errors::InvalidArgument(what, ": group_size ", r.group_size, " is outside [1, ",
                                   kMaxGroupSize, "]");
  }
  TG_RETURN_IF_ERROR(CheckMemberDevice(r.device, what));
  const ParsedDeviceName device = *DeviceNameUtils::Parse(r.device);
  if (r.device_type != device.type) {
    return errors::InvalidArgument(what, ": device_type '", r.device_type.substr(0, 64),
                                   "' is not the type of ", r.device);
  }
  return CheckJoinWait(r.timeout, what);
}

absl::Status ValidateInstanceJoin(const CompleteInstanceArgs& r) {
  const std::string what = absl::StrCat("joining collective instance ", r.instance_key,
                                        " of group ", r.group_key);
  if (r.group_size < 1 || r.group_size > kMaxGroupSize) {
    return errors::InvalidArgument(what, ": group_size ", r.group_size, " is outside [1, ",
                                   kMaxGroupSize, "]");
  }
  TG_RETURN_IF_ERROR(CheckMemberDevice(r.device, what));
  if (r.op != "CollectiveReduce" && r.op != "CollectiveBcast" && r.op != "CollectiveGather") {
    return errors::InvalidArgument(what, ": unknown collective op '", r.op.substr(0, 64), "'");
  }
  if (!DataTypeIsSupported(r.dtype) || IsRefType(r.dtype) || DataTypeIsObject(r.dtype)) {
    return errors::InvalidArgument(what, ": dtype ", static_cast<int>(r.dtype),
                                   " is not a plain numeric type");
  }
  absl::StatusOr<TensorShape> shape = BuildTensorShape(r.shape);
  if (!shape.ok()) return WithContext(shape.status(), what);
  if (r.next_seq < 0) {
    return errors::InvalidArgument(what, ": next_seq ", r.next_seq, " is negative");
  }
  return CheckJoinWait(r.timeout, what);
}

CollectiveGroupLeader::~CollectiveGroupLeader() {
  Shutdown(errors::Aborted("the collective group leader is shutting down"));
}

void CollectiveGroupLeader::SetClusterTasks(std::vector<std::string> tasks) {
  absl::MutexLock lock(&mu_);
  cluster_tasks_ = std::move(tasks);
}

Timer::Id CollectiveGroupLeader::Arm(absl::Duration timeout, std::function<void()> expire) {
  return timer_->Schedule(absl::Now() + timeout,
                          [this, expire = std::move(expire)] { pool_->Schedule(expire); });
}

void CollectiveGroupLeader::FillGroup(const Group& g, CompleteGroupResult* response) const {
  response->group_key = g.first.group_key;
  response->group_size = g.first.group_size;
  response->device_type = g.first.device_type;
  response->devices.clear();
  response->incarnations.clear();
  for (const auto& [device, incarnation] : g.members) {
    response->devices.push_back(device);
    response->incarnations.push_back(incarnation);
  }
}

std::string CollectiveGroupLeader::TasksWithoutMember(const Group& g) const {
  std::set<std::string> with_member;
  for (const auto& [device, incarnation] : g.members) {
    with_member.insert(DeviceNameUtils::TaskName(device));
  }
  std::vector<std::string> without;
  for (const std::string& task : cluster_tasks_) {
    if (!(with_member.count(task) > 0)) without.push_back(task);
  }
  const int missing = g.first.group_size - static_cast<int>(g.members.size());
  if (without.empty()) {
    return absl::StrCat(missing, " more member", missing == 1 ? "" : "s",
                        " (every task of the cluster already has a member in the group; "
                        "two ops of the group on one device count as one member)");
  }
  return absl::StrJoin(without, ", ");
}

void CollectiveGroupLeader::CompleteGroupAsync(const CompleteGroupArgs& request,
                                               CompleteGroupResult* response, StatusCallback done) {
  if (absl::Status bad = ValidateGroupJoin(request); !bad.ok()) return done(bad);
  std::vector<StatusCallback> released;
  {
    absl::ReleasableMutexLock lock(&mu_);
    if (!shutdown_.ok()) {
      absl::Status s = shutdown_;
      lock.Release();
      return done(s);
    }
    auto [it, inserted] = groups_.try_emplace(request.group_key);
    Group& g = it->second;
    if (inserted) g.first = request;
    absl::Status bad;
    if (request.group_size != g.first.group_size) {
      bad = errors::InvalidArgument("collective group ", request.group_key, ": ", request.device,
                                    " joins with group_size ", request.group_size, " but ",
                                    g.first.device, " joined with group_size ", g.first.group_size);
    } else if (request.device_type != g.first.device_type) {
      bad = errors::InvalidArgument("collective group ", request.group_key, ": ", request.device,
                                    " is a ", request.device_type, " device but ", g.first.device,
                                    " is a ", g.first.device_type,
                                    " device; a group has one device type");
    } else if (g.complete && !(g.members.count(request.device) > 0)) {
      std::vector<std::string> names;
      for (const auto& [device, inc] : g.members) names.push_back(device);
      bad = errors::InvalidArgument("collective group ", request.group_key, " (size ",
                                    g.first.group_size, ") is complete with members ",
                                    absl::StrJoin(names, ", "), "; ", request.device,
                                    " is not one of them");
    }
    if (!bad.ok()) {
      lock.Release();
      return done(bad);
    }
    g.members[request.device] = request.incarnation;
    if (g.complete) {
      FillGroup(g, response);
      lock.Release();
      return done(absl::OkStatus());
    }
    const uint64_t id = next_id_++;
    const int key = request.group_key;
    const absl::Duration timeout = request.timeout;
    Timer::Id timer = Arm(timeout, [this, key, id, timeout] { ExpireGroupJoin(key, id, timeout); });
    g.waiters.push_back(Waiter{id, request.device, [this, &g, response] { FillGroup(g, response); },
                               std::move(done), timer});
    if (static_cast<int>(g.members.size()) < g.first.group_size) return;
    g.complete = true;
    for (Waiter& w : g.waiters) {
      w.fill();
      timer_->Cancel(w.timer);
      released.push_back(std::move(w.done));
    }
    g.waiters.clear();
  }
  for (StatusCallback& cb : released) cb(absl::OkStatus());
}

void CollectiveGroupLeader::ExpireGroupJoin(int group_key, uint64_t id, absl::Duration timeout) {
  StatusCallback done;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    auto it = groups_.find(group_key);
    if (it == groups_.end() || it->second.complete) return;
    Group& g = it->second;
    auto w = std::find_if(g.waiters.begin(), g.waiters.end(),
                          [id](const Waiter& x) { return x.id == id; });
    if (w == g.waiters.end()) return;
    std::vector<std::string> joined;
    for (const auto& [device, inc] : g.members) joined.push_back(device);
    status = errors::DeadlineExceeded(
        "collective group ", group_key, " (size ", g.first.group_size, "): ", joined.size(), " of ",
        g.first.group_size, " members joined within ",
        absl::FormatDuration(absl::Ceil(timeout, absl::Milliseconds(1))), ": ",
        absl::StrJoin(joined, ", "), "; never joined: ", TasksWithoutMember(g));
    // It stays a member: a later attempt (or the missing member arriving)
    // completes the group, and other waiters still count it.
    done = std::move(w->done);
    g.waiters.erase(w);
  }
  done(status);
}

void CollectiveGroupLeader::CompleteInstanceAsync(const CompleteInstanceArgs& request,
                                                  CompleteInstanceResult* response,
                                                  StatusCallback done) {
  if (absl::Status bad = ValidateInstanceJoin(request); !bad.ok()) return done(bad);
  Answers answers;
  {
    absl::ReleasableMutexLock lock(&mu_);
    // Called with `lock` held, which clang's analysis cannot follow into a
    // lambda.
    auto fail_now = [&](absl::Status s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      lock.Release();
      done(std::move(s));
    };
    if (!shutdown_.ok()) return fail_now(shutdown_);
    auto g = groups_.find(request.group_key);
    if (g == groups_.end() || !g->second.complete ||
        !(g->second.members.count(request.device) > 0)) {
      return fail_now(errors::FailedPrecondition(
          "collective instance ", request.instance_key, ": ", request.device,
          " is not a member of a complete group ", request.group_key, " on this leader"));
    }
    const auto key = std::make_pair(request.group_key, request.instance_key);
    auto [it, inserted] = instances_.try_emplace(key);
    Instance& inst = it->second;
    if (inst.complete) {
      // A member asks again (its run failed, or its task restarted): a new
      // round, which completes when every member asked again.
      inst = Instance();
      inserted = true;
    }
    if (inserted) inst.first = request;
    const CompleteInstanceArgs& first = inst.first;
    if (request.op != first.op || request.dtype != first.dtype || request.shape != first.shape) {
      absl::Status bad = errors::InvalidArgument(
          "collective instance ", request.instance_key, " of group ", request.group_key,
          ": members disagree: ", request.device, " runs ", Describe(request), " but ",
          first.device, " runs ", Describe(first));
      for (Waiter& w : inst.waiters) {
        timer_->Cancel(w.timer);
        answers.emplace_back(std::move(w.done), bad);
      }
      instances_.erase(it);  // a corrected graph may try again
      lock.Release();
      for (auto& [cb, s] : answers) cb(s);
      return done(bad);
    }
    inst.joined[request.device] = request.is_source;
    inst.exec_seq = std::max(inst.exec_seq, request.next_seq);
    const uint64_t id = next_id_++;
    const int group_key = request.group_key, instance_key = request.instance_key;
    const absl::Duration timeout = request.timeout;
    Timer::Id timer = Arm(timeout, [this, group_key, instance_key, id, timeout] {
      ExpireInstanceJoin(group_key, instance_key, id, timeout);
    });
    inst.waiters.push_back(Waiter{id, request.device,
                                  [&inst, response] {
                                    response->source_rank = inst.source_rank;
                                    response->exec_seq = inst.exec_seq;
                                  },
                                  std::move(done), timer});
    MaybeCompleteInstance(g->second, inst, &answers);
    if (!answers.empty() && !answers.front().second.ok()) instances_.erase(it);
  }
  for (auto& [cb, s] : answers) cb(s);
}

void CollectiveGroupLeader::MaybeCompleteInstance(const Group& g, Instance& inst,
                                                  Answers* answers) {
  if (static_cast<int>(inst.joined.size()) < g.first.group_size) return;
  absl::Status status;
  if (inst.first.op == "CollectiveBcast") {
    std::vector<std::string> sources;
    int rank = 0;
    for (const auto& [device, inc] : g.members) {
      auto j = inst.joined.find(device);
      if (j != inst.joined.end() && j->second) {
        sources.push_back(device);
        inst.source_rank = rank;
      }
      ++rank;
    }
    if (sources.size() != 1) {
      status = errors::InvalidArgument(
          "collective broadcast instance ", inst.first.instance_key, " of group ",
          inst.first.group_key, " has ", sources.size(),
          " senders (CollectiveBcastSend), not exactly one",
          sources.empty() ? "" : absl::StrCat(": ", absl::StrJoin(sources, ", ")));
    }
  }
  inst.complete = status.ok();
  for (Waiter& w : inst.waiters) {
    if (status.ok()) w.fill();
    timer_->Cancel(w.timer);
    answers->emplace_back(std::move(w.done), status);
  }
  inst.waiters.clear();
}

void CollectiveGroupLeader::ExpireInstanceJoin(int group_key, int instance_key, uint64_t id,
                                               absl::Duration timeout) {
  StatusCallback done;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    auto it = instances_.find({group_key, instance_key});
    if (it == instances_.end() || it->second.complete) return;
    Instance& inst = it->second;
    auto w = std::find_if(inst.waiters.begin(), inst.waiters.end(),
                          [id](const Waiter& x) { return x.id == id; });
    if (w == inst.waiters.end()) return;
    std::vector<std::string> joined, missing;
    auto g = groups_.find(group_key);
    if (g != groups_.end()) {
      for (const auto& [device, inc] : g->second.members) {
        ((inst.joined.count(device) > 0) ? joined : missing).push_back(device);
      }
    }
    status = errors::DeadlineExceeded(
        "collective instance ", instance_key, " of group ", group_key, " (size ",
        inst.first.group_size, "): ", joined.size(), " of ", inst.first.group_size,
        " members started it within ",
        absl::FormatDuration(absl::Ceil(timeout, absl::Milliseconds(1))), ": ",
        absl::StrJoin(joined, ", "), "; never started: ", absl::StrJoin(missing, ", "));
    // It leaves the round: a round completes only with members still waiting,
    // so each of them gets the same answer.
    done = std::move(w->done);
    inst.joined.erase(w->device);
    inst.waiters.erase(w);
    if (inst.joined.empty()) instances_.erase(it);
  }
  done(status);
}

void CollectiveGroupLeader::Shutdown(const absl::Status& status) {
  std::unique_ptr<Timer> timer;
  std::vector<StatusCallback> failed;
  {
    absl::MutexLock lock(&mu_);
    if (!shutdown_.ok()) return;
    shutdown_ = status;
    timer = std::move(timer_);
    for (auto& [key, g] : groups_) {
      for (Waiter& w : g.waiters) failed.push_back(std::move(w.done));
      g.waiters.clear();
    }
    for (auto& [key, inst] : instances_) {
      for (Waiter& w : inst.waiters) failed.push_back(std::move(w.done));
      inst.waiters.clear();
    }
  }
  timer.reset();  // outside the lock: a running timeout may be scheduling an expiry
  for (StatusCallback& done : failed) done(status);
}

}  // namespace tensorgrid
