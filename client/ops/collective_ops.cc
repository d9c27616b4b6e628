#include "client/ops/collective_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {
namespace {

// The attrs every collective op carries.
NodeBuilder& GroupAttrs(NodeBuilder& b, int group_size, int group_key, int instance_key,
                        float timeout_seconds) {
  return b.Attr("group_size", group_size)
      .Attr("group_key", group_key)
      .Attr("instance_key", instance_key)
      .Attr("timeout_seconds", timeout_seconds);
}

}  // namespace

Output CollectiveReduce(const Scope& scope, Input input, int group_size, int group_key,
                        int instance_key, const std::string& merge_op, const std::string& final_op,
                        float timeout_seconds) {
  NodeBuilder b(scope, "CollectiveReduce");
  b.Input(input)
      .Attr("merge_op", merge_op)
      .Attr("final_op", final_op)
      .Attr("subdiv_offsets", std::vector<int64_t>{});
  GroupAttrs(b, group_size, group_key, instance_key, timeout_seconds);
  return Output(b.Finalize(), 0);
}

Output CollectiveBcastSend(const Scope& scope, Input input, int group_size, int group_key,
                           int instance_key, const TensorShape& shape, float timeout_seconds) {
  NodeBuilder b(scope, "CollectiveBcastSend");
  b.Input(input).Attr("shape", shape);
  GroupAttrs(b, group_size, group_key, instance_key, timeout_seconds);
  return Output(b.Finalize(), 0);
}

Output CollectiveBcastRecv(const Scope& scope, DataType T, int group_size, int group_key,
                           int instance_key, const TensorShape& shape, float timeout_seconds) {
  NodeBuilder b(scope, "CollectiveBcastRecv");
  b.Attr("T", T).Attr("shape", shape);
  GroupAttrs(b, group_size, group_key, instance_key, timeout_seconds);
  return Output(b.Finalize(), 0);
}

Output CollectiveGather(const Scope& scope, Input input, int group_size, int group_key,
                        int instance_key, const TensorShape& shape, float timeout_seconds) {
  NodeBuilder b(scope, "CollectiveGather");
  b.Input(input).Attr("shape", shape);
  GroupAttrs(b, group_size, group_key, instance_key, timeout_seconds);
  return Output(b.Finalize(), 0);
}

}  // namespace ops
}  // namespace tensorgrid
