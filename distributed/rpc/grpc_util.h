// Glue between Abseil and gRPC: status conversion and per-RPC deadlines.
//
// absl::StatusCode and grpc::StatusCode share their numbering (both follow
// google.rpc.Code), so codes map one to one and messages pass unchanged.
// Payloads (such as the rendezvous' "derived error" mark, which lets a master
// tell a root cause from its echoes) travel in the status details, encoded as
// a google.rpc.Status whose details are google.protobuf.Any(url, payload):
//
//   grpc::Status wire = ToGrpcStatus(worker_status);    // server side
//   absl::Status s = FromGrpcStatus(stub->Call(...));    // client side
#ifndef TENSORGRID_DISTRIBUTED_RPC_GRPC_UTIL_H_
#define TENSORGRID_DISTRIBUTED_RPC_GRPC_UTIL_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace tensorgrid {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// Sets `context`'s deadline to `timeout` from now. A non-positive or infinite
// timeout leaves the context without a deadline.
void SetDeadline(grpc::ClientContext* context, absl::Duration timeout);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_UTIL_H_
