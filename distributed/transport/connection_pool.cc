#include "distributed/transport/connection_pool.h"

#include <utility>

namespace tensorgrid {
namespace bulk {
namespace {

// Idle connections a client keeps per port.
constexpr size_t kMaxIdlePerPort = 8;

}  // namespace

UniqueFd ConnectionPool::TakeIdle(int port) {
  for (;;) {
    UniqueFd fd;
    {
      absl::MutexLock lock(&mu_);
      std::vector<UniqueFd>& idle = idle_[port];
      if (idle.empty()) return fd;
      fd = std::move(idle.back());
      idle.pop_back();
    }
    // Readable while idle means closed by the server: try the next one.
    if (!Readable(fd.get())) return fd;
  }
}

absl::StatusOr<UniqueFd> ConnectionPool::Connect(int port, absl::Time deadline, bool* pooled,
                                                 ConnectFailure* failure) {
  if (UniqueFd fd = TakeIdle(port); fd.valid()) {
    *pooled = true;
    return fd;
  }
  *pooled = false;
  return bulk::Connect(host_, port, deadline, failure);
}

void ConnectionPool::Release(int port, UniqueFd fd) {
  // Reads poll until their deadline, and a request's blocking send sets its
  // own timeout first (a one-byte verdict cannot block): nothing to reset.
  absl::MutexLock lock(&mu_);
  std::vector<UniqueFd>& idle = idle_[port];
  if (idle.size() < kMaxIdlePerPort) idle.push_back(std::move(fd));
}

void ConnectionPool::DropIdle(int port) {
  std::vector<UniqueFd> dropped;
  absl::MutexLock lock(&mu_);
  dropped.swap(idle_[port]);
}

}  // namespace bulk
}  // namespace tensorgrid
