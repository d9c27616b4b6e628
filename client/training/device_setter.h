// ReplicaDeviceSetter: TensorFlow's `tf.train.replica_device_setter` for the
// client API — a device function that puts variables (and other stateful ops)
// on parameter-server tasks and everything else on the worker.
//
//   ReplicaDeviceSetterOptions options;
//   options.ps_tasks = 2;
//   options.worker_device = "/job:worker/task:0";
//   Scope scope = root.WithDeviceFunction(ReplicaDeviceSetter(options));
//   auto w = ops::Variable(scope.WithOpName("w"), {784, 10}, DT_FLOAT);  // /job:ps/task:0
//   auto b = ops::Variable(scope.WithOpName("b"), {10}, DT_FLOAT);       // /job:ps/task:1
//   auto y = ops::MatMul(scope, x, w);                                   // /job:worker/task:0
//
// A node whose op is in `ps_ops` goes to `ps_device` + "/task:<k>", k chosen
// by `ps_strategy` — unless the node already asks for a different job, in
// which case no task is chosen (as in TensorFlow); every other node goes to
// `worker_device`. With `merge_devices` (the default) the parts the node
// already asks for win and the setter's device fills in the rest (see
// client/merge_device.h), so `scope.WithDevice("/device:CPU:1")` inside the
// setter gives "/job:ps/task:0/device:CPU:1"; without it a node that asks for
// any device keeps exactly that (and consumes no ps task). Either way the
// Scope then lays the node's own request over the answer (see
// Scope::WithDeviceFunction), which leaves the setter's answers unchanged.
//
// Any other DeviceFunction works with Scope::WithDeviceFunction as well; the
// setter is one such function.
//
// The Assign, read and update ops of a variable ask for the worker here
// (unless built with ColocateWith, which skips device functions); the Placer
// then colocates them with the variable — reference and resource edges win
// over their request — as TensorFlow's does.
//
// State: the strategies keep their state (the round-robin position, the
// greedy loads) in the returned function, shared by all its copies and every
// scope holding one: one setter is one sequence of choices, in node-building
// order. Make a new setter for a new graph. Thread-safe.
#ifndef TENSORGRID_CLIENT_TRAINING_DEVICE_SETTER_H_
#define TENSORGRID_CLIENT_TRAINING_DEVICE_SETTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/scope.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

// Chooses the ps task, in [0, ps_tasks), of one ps op.
using PsStrategy = std::function<int(const NodeDef& node)>;
// The load a ps op puts on its task (for GreedyLoadBalancingStrategy).
using PsLoadFunction = std::function<int64_t(const NodeDef& node)>;

// 0, 1, ..., num_tasks - 1, 0, 1, ... (the default strategy).
PsStrategy RoundRobinStrategy(int num_tasks);

// The task with the least load so far (the lowest index on a tie), which
// then carries `load_fn(node)` more.
PsStrategy GreedyLoadBalancingStrategy(int num_tasks, PsLoadFunction load_fn);
// ... with the load in bytes (ByteSizeLoadFunction).
PsStrategy GreedyLoadBalancingStrategy(int num_tasks);

// The bytes of the tensor a ps op holds: elements of its "shape" attr times
// the size of its "dtype" attr (for hash tables, "value_shape" and
// "value_dtype"). What is unknown counts as 1: an unknown dimension, an
// unknown rank or a missing shape attr, and the element size of a dtype that
// is missing or not fixed-size (string, resource). So every ps op weighs at
// least 1 and variables of unknown shape still spread over the tasks.
int64_t ByteSizeLoadFunction(const NodeDef& node);

struct ReplicaDeviceSetterOptions {
  // Parameter-server tasks; 0 (or less) puts every node on worker_device.
  int ps_tasks = 0;
  std::string ps_device = "/job:ps";
  std::string worker_device = "/job:worker";
  bool merge_devices = true;
  // Op types placed on the ps.
  std::vector<std::string> ps_ops = {"Variable",
                                     "VariableV2",
                                     "VarHandleOp",
                                     "AutoReloadVariable",
                                     "MutableHashTable",
                                     "MutableHashTableV2",
                                     "MutableHashTableOfTensors",
                                     "MutableHashTableOfTensorsV2",
                                     "MutableDenseHashTable",
                                     "MutableDenseHashTableV2"};
  // Empty: RoundRobinStrategy(ps_tasks). A result outside [0, ps_tasks) fails
  // the node's build with InvalidArgument naming both.
  PsStrategy ps_strategy;
};

// The device function; use it with Scope::WithDeviceFunction. A malformed
// ps_device or worker_device fails the build of the first node it applies
// to (InvalidArgument quoting it).
DeviceFunction ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_DEVICE_SETTER_H_
