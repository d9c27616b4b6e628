// The CompleteGroup and CompleteInstance requests a worker service receives,
// as the joins its collective group leader takes (ValidateGroupJoin and
// ValidateInstanceJoin check them there). Pure functions of the parsed
// request, so that what a hostile request can do on the way is tested on its
// own (tests/fuzz/grpc_requests_fuzzer.cc).
//
//   CompleteGroupArgs join = GroupJoinFromRequest(request, RecvWait(context));
//   worker->CompleteGroupAsync(join, &result, done);
#ifndef TENSORGRID_DISTRIBUTED_RPC_COLLECTIVE_REQUESTS_H_
#define TENSORGRID_DISTRIBUTED_RPC_COLLECTIVE_REQUESTS_H_

#include "absl/time/time.h"
#include "core/runtime/worker_interface.h"
#include "proto/worker.pb.h"

namespace tensorgrid {

// How long a leader may wait for a group's members: what the member asked
// (`timeout_ms`, a negative one as 0), at most `max_wait` (until a little
// before the call's deadline).
absl::Duration JoinWait(int64_t timeout_ms, absl::Duration max_wait);

CompleteGroupArgs GroupJoinFromRequest(const CompleteGroupRequest& request,
                                       absl::Duration max_wait);
CompleteInstanceArgs InstanceJoinFromRequest(const CompleteInstanceRequest& request,
                                             absl::Duration max_wait);

}  // namespace tensorgrid

#endif  // TENSORGRID_DISTRIBUTED_RPC_COLLECTIVE_REQUESTS_H_
