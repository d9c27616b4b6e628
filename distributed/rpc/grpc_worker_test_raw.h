// Raw WorkerService calls straight through the generated stub, for
// grpc_worker_test.cc's garbage-input cases.
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_TEST_RAW_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_TEST_RAW_H_

#include <string>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace tensorgrid {

// RunGraph of `graph_handle` with one float feed named `feed_name` whose
// tensor_content is 3 bytes for a shape of [4] when `malformed`.
grpc::Status RawRunGraph(const std::string& address, const std::string& graph_handle,
                         const std::string& feed_name, bool malformed);

// RecvTensor of `key` (step 0) with a client deadline of `timeout`.
grpc::Status RawRecvTensor(const std::string& address, const std::string& key,
                           absl::Duration timeout);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_WORKER_TEST_RAW_H_
