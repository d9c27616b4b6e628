// Collective ops: all-reduce, broadcast and gather among the devices of a
// group, with TensorFlow's op names and attrs (docs/collectives.md). Every
// member (one node per device) uses the same group_key, group_size and
// instance_key; a member that never comes makes the others fail with
// DeadlineExceeded after timeout_seconds (0: 60 s), naming what is missing.
//
//   // One all-reduce over two CPU devices: both outputs are x0 + x1.
//   auto s0 = scope.WithDevice("/device:CPU:0"), s1 = scope.WithDevice("/device:CPU:1");
//   auto sum0 = ops::CollectiveReduce(s0, x0, 2, /*group_key=*/1, /*instance_key=*/1, "Add", "Id");
//   auto sum1 = ops::CollectiveReduce(s1, x1, 2, 1, 1, "Add", "Id");
//
//   // MEAN: merge_op "Add", final_op "Div" (floating-point types only).
//   // Broadcast: one member sends, the others receive the same shape.
//   auto b0 = ops::CollectiveBcastSend(s0, x0, 2, 1, 2, {2, 3});
//   auto b1 = ops::CollectiveBcastRecv(s1, DT_FLOAT, 2, 1, 2, {2, 3});
//   // Gather: the members' inputs (all of `shape`) concatenated along
//   // dimension 0 in rank order (members sorted by device name).
//   auto g0 = ops::CollectiveGather(s0, x0, 2, 1, 3, {2, 3});  // shape {4, 3}
//
// Hand-written, unlike the generated wrappers of the other ops (docs/ops.md):
// these are free functions that return the Output and take timeout_seconds
// positionally, the shape client/distribute/ and the collective tests use.
#ifndef TENSORGRID_CLIENT_OPS_COLLECTIVE_OPS_H_
#define TENSORGRID_CLIENT_OPS_COLLECTIVE_OPS_H_

#include <string>

#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor_shape.h"
#include "core/framework/types.h"

namespace tensorgrid {
namespace ops {

// All-reduce: merge_op "Add", "Mul", "Min" or "Max" over the members' inputs
// (same dtype and shape on every member), then final_op "Id" or "Div" (divide
// by group_size). Every member gets the bit-identical result.
Output CollectiveReduce(const Scope& scope, Input input, int group_size, int group_key,
                        int instance_key, const std::string& merge_op, const std::string& final_op,
                        float timeout_seconds = 0);

// Broadcast from the one member running CollectiveBcastSend (its output is
// its input) to the members running CollectiveBcastRecv.
Output CollectiveBcastSend(const Scope& scope, Input input, int group_size, int group_key,
                           int instance_key, const TensorShape& shape, float timeout_seconds = 0);
Output CollectiveBcastRecv(const Scope& scope, DataType T, int group_size, int group_key,
                           int instance_key, const TensorShape& shape, float timeout_seconds = 0);

// Every member's input (of `shape`, rank >= 1) concatenated along dimension 0
// in rank order.
Output CollectiveGather(const Scope& scope, Input input, int group_size, int group_key,
                        int instance_key, const TensorShape& shape, float timeout_seconds = 0);

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_COLLECTIVE_OPS_H_
