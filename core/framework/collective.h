// CollectiveExecutor: what collective kernels (CollectiveReduce,
// CollectiveBcastSend/Recv, CollectiveGather) reach through
// OpKernelContext::collective() to meet the other members of their group.
//
// A group is `group_size` devices that agree on `group_key`; an instance is
// one collective op (same `instance_key` on every member) run by the group.
// The kernel checks its node's attrs and allocates its output; the executor
// resolves the group and the instance, moves the data and fills `output`.
//
//   CollectiveOpParams p;  // from the node's attrs
//   ctx.collective()->ExecuteAsync(p, ctx.device(), ctx.input(0), *out,
//                                  ctx.cancellation(), std::move(done));
//
// Implementations are thread-safe; `done` may run on any thread, exactly once,
// and never before every wait of this member has ended (so the kernel's
// context may go away in it).
#ifndef TENSORGRID_CORE_FRAMEWORK_COLLECTIVE_H_
#define TENSORGRID_CORE_FRAMEWORK_COLLECTIVE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/framework/cancellation.h"
#include "core/framework/device.h"
#include "core/framework/tensor.h"
#include "core/framework/tensor_shape.h"
#include "core/framework/types.h"

namespace tensorgrid {

enum class CollectiveType { kReduce, kBroadcast, kGather };

inline const char* CollectiveTypeName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kReduce: return "CollectiveReduce";
    case CollectiveType::kBroadcast: return "CollectiveBcast";
    case CollectiveType::kGather: return "CollectiveGather";
  }
  return "Collective";
}

// The default of timeout_seconds = 0.
constexpr absl::Duration kDefaultCollectiveTimeout = absl::Seconds(60);

// One member's view of one collective op, from its node's attrs.
struct CollectiveOpParams {
  CollectiveType type = CollectiveType::kReduce;
  int group_key = 0;
  int group_size = 0;
  int instance_key = 0;
  DataType dtype = DT_INVALID;
  TensorShape shape;       // this member's input shape (the broadcast shape)
  std::string merge_op;    // kReduce: "Add", "Mul", "Min", "Max"
  std::string final_op;    // kReduce: "Id", "Div"
  bool is_source = false;  // kBroadcast: this member sends
  absl::Duration timeout = kDefaultCollectiveTimeout;
};

class CollectiveExecutor {
 public:
  virtual ~CollectiveExecutor() = default;
  using DoneCallback = std::function<void(absl::Status)>;
  // Runs this member's part of the op. `input` is empty for a broadcast
  // receiver; `output` is allocated with the result's shape (it shares the
  // kernel's output buffer). Fails with DeadlineExceeded after
  // params.timeout, with Cancelled when `cancellation` (may be null) fires,
  // and with InvalidArgument when the members disagree.
  virtual void ExecuteAsync(const CollectiveOpParams& params, Device* device, const Tensor& input,
                            Tensor output, CancellationManager* cancellation,
                            DoneCallback done) = 0;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_COLLECTIVE_H_
