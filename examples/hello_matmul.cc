// The smallest graph: two constants multiplied, run in-process.
//
//   a = [[3, 2]]      b = [[-1],
//        \                [ 2]]
//         \              /
//          MatMul(a, b) ----> [[1]]        placed on the local CPU
//
// bazel run //examples:hello_matmul
#include <cstdio>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"

using namespace tensorgrid;  // NOLINT: an example

int main() {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root.WithOpName("a"), {{3.f, 2.f}});
  auto b = ops::Const(root.WithOpName("b"), {{-1.f}, {2.f}});
  auto product = ops::MatMul(root.WithOpName("product"), a, b);

  ClientSession session(root);
  std::vector<Tensor> outputs;
  absl::Status status = session.Run({product}, &outputs);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("[[3, 2]] x [[-1], [2]] = %s\n", outputs[0].DebugString().c_str());
  return 0;
}
