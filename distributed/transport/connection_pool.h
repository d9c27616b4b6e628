// ConnectionPool: a client's idle connections to one host's bulk ports,
// kept by port for the next request (a connection carries one request at a
// time). Thread-safe.
#ifndef TENSORGRID_DISTRIBUTED_TRANSPORT_CONNECTION_POOL_H_
#define TENSORGRID_DISTRIBUTED_TRANSPORT_CONNECTION_POOL_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/transport/socket.h"

namespace tensorgrid {
namespace bulk {

class ConnectionPool {
 public:
  explicit ConnectionPool(std::string host) : host_(std::move(host)) {}
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  const std::string& host() const { return host_; }

  // A pooled connection to `port` that the server has not closed (its idle
  // timeout, a refusal, a restart), or an invalid one.
  UniqueFd TakeIdle(int port);
  // A pooled connection (`*pooled`), or a new one (Connect in socket.h).
  absl::StatusOr<UniqueFd> Connect(int port, absl::Time deadline, bool* pooled,
                                   ConnectFailure* failure);
  // `fd`, done with its request and answer, for the next request; closed
  // when the port has enough idle ones.
  void Release(int port, UniqueFd fd);
  // Closes the idle connections to `port` (after one proved stale: the
  // others likely are too).
  void DropIdle(int port);

 private:
  const std::string host_;
  absl::Mutex mu_;
  std::map<int, std::vector<UniqueFd>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulk
}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_TRANSPORT_CONNECTION_POOL_H_
