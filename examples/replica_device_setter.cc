// Variables on parameter servers, the rest on a worker: ReplicaDeviceSetter.
//
//   x on /job:ps/task:0   y on /job:ps/task:1    (round-robin)
//   │ ╲                 ╱ │
//   │    ╲           ╱    │
//   │       ╲     ╱       │
//   │          ╳          │
//   │       ╱     ╲       │
//   ▼    ╱           ╲    ▼
//   xy = MatMul(x, y)     yx = MatMul(y, x)
//   /job:worker/task:0    /job:worker/task:1
//   (the setter's worker) (its WithDevice("/task:1") merged in)
//
// Prints each node's requested device; no cluster is needed to build it.
// bazel run //examples:replica_device_setter
#include <cstdio>

#include "client/ops/standard_ops.h"
#include "client/training/device_setter.h"

using namespace tensorgrid;  // NOLINT: an example

int main() {
  ReplicaDeviceSetterOptions options;
  options.ps_tasks = 2;  // x and y round-robin over ps tasks 0 and 1
  options.worker_device = "/job:worker/task:0";
  Scope root = Scope::NewRootScope();
  Scope scope = root.WithDeviceFunction(ReplicaDeviceSetter(options));

  auto x = ops::Variable(scope.WithOpName("x"), {2, 2}, DT_FLOAT);
  auto y = ops::Variable(scope.WithOpName("y"), {2, 2}, DT_FLOAT);
  ops::MatMul(scope.WithOpName("xy"), x, y);
  ops::MatMul(scope.WithOpName("yx").WithDevice("/task:1"), y, x);  // merged: worker task 1

  GraphDef graph;
  absl::Status status = root.ToGraphDef(&graph);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  for (const NodeDef& node : graph.node()) {
    std::printf("%-3s %-10s %s\n", node.name().c_str(), node.op().c_str(), node.device().c_str());
  }
  return 0;
}
