#include "distributed/rpc/collective_requests.h"

#include <algorithm>

namespace tensorgrid {

absl::Duration JoinWait(int64_t timeout_ms, absl::Duration max_wait) {
  return std::max(absl::ZeroDuration(), std::min(absl::Milliseconds(timeout_ms), max_wait));
}

CompleteGroupArgs GroupJoinFromRequest(const CompleteGroupRequest& request,
                                       absl::Duration max_wait) {
  CompleteGroupArgs args;
  args.group_key = request.group_key();
  args.group_size = request.group_size();
  args.device_type = request.device_type();
  args.device = request.device_name();
  args.incarnation = request.incarnation();
  args.timeout = JoinWait(request.timeout_ms(), max_wait);
  return args;
}

CompleteInstanceArgs InstanceJoinFromRequest(const CompleteInstanceRequest& request,
                                             absl::Duration max_wait) {
  CompleteInstanceArgs args;
  args.group_key = request.group_key();
  args.group_size = request.group_size();
  args.instance_key = request.instance_key();
  args.device = request.device_name();
  args.op = request.op();
  args.dtype = request.dtype();
  args.shape.assign(request.shape().begin(), request.shape().end());
  args.is_source = request.is_source();
  args.timeout = JoinWait(request.timeout_ms(), max_wait);
  args.next_seq = request.next_seq();
  return args;
}

}  // namespace tensorgrid
