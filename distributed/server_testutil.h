// Starting a task's Server in a test.
#ifndef TENSORGRID_DISTRIBUTED_SERVER_TESTUTIL_H_
#define TENSORGRID_DISTRIBUTED_SERVER_TESTUTIL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/platform/status.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"
#include "proto/config.pb.h"

namespace tensorgrid {

// Task `index` of `job` in `cluster`, created and started, or why not
// (Unavailable when it cannot bind its port: start the cluster inside
// WithFreeLoopbackAddresses, core/platform/free_port.h, to pick again).
inline absl::StatusOr<std::unique_ptr<Server>> TryStartServer(
    const ClusterSpec& cluster, const std::string& job, int index,
    const ConfigProto& config = ConfigProto()) {
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Server> server,
                      Server::Create(cluster, job, index, config));
  TG_RETURN_IF_ERROR(server->Start());
  return server;
}

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_SERVER_TESTUTIL_H_
