// Glue between Abseil and gRPC: status conversion, per-RPC deadlines, and
// RpcSecurity (distributed/rpc_security.h) as gRPC credentials and metadata.
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

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/framework/device.h"
#include "distributed/rpc_security.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "proto/worker.pb.h"

namespace tensorgrid {

// DeviceInfo and its wire form (GetStatus, ListDevices).
void DeviceInfoToProto(const DeviceInfo& info, DeviceAttributesProto* proto);
DeviceInfo DeviceInfoFromProto(const DeviceAttributesProto& proto);

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// Sets `context`'s deadline to `timeout` from now. A non-positive or infinite
// timeout leaves the context without a deadline.
void SetDeadline(grpc::ClientContext* context, absl::Duration timeout);

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const RpcSecurity& security);
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const RpcSecurity& security);
// A channel to "host:port" with `security`'s credentials; `max_receive_bytes`
// caps the messages it accepts (-1: no cap). The first channel or server
// also calls KeepLargeFreedMemory() (core/platform/malloc_tuning.h) for the
// process: gRPC's per-message receive buffers stop being faulted in anew.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const RpcSecurity& security,
                                          int max_receive_bytes);
// Adds the token (if any) to an outgoing call.
void AttachAuth(grpc::ClientContext* context, const RpcSecurity& security);
// OK if `token` is empty or the call carries it; else Unauthenticated,
// saying which. Looks at the call's metadata only. The comparison takes the
// same time wherever the tokens differ.
grpc::Status CheckAuth(const grpc::ServerContextBase& context, const std::string& token);

// The answer to a request that does not parse as the message of `method`
// ("/tensorgrid.WorkerService/RunGraph"): InvalidArgument naming it.
grpc::Status InvalidMessageStatus(absl::string_view method);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_GRPC_UTIL_H_
