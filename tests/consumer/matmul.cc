// A program built outside tensorgrid's tree, the way a user builds one: as a
// Bazel workspace that uses tensorgrid (tests/external_workspace_test.sh), and
// against the installed library with pkg-config and with CMake
// (tests/install_test.sh). It feeds x, runs a MatMul and a Sum in-process and
// prints both.
//
//   x (fed) = [[1, 2],      w = [[5, 6],
//              [3, 4]]           [7, 8]]
//            \                  /
//             MatMul(x, w) = y ----> Sum(y, {0, 1}) = total
#include <cstdio>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"

using namespace tensorgrid;  // NOLINT: a small program

int main() {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({2, 2}));
  auto w = ops::Const(root.WithOpName("w"), {{5.f, 6.f}, {7.f, 8.f}});
  auto y = ops::MatMul(root.WithOpName("y"), x, w);
  auto total = ops::Sum(root.WithOpName("total"), y, {0, 1});

  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status status = session.Run({{x, {{1.f, 2.f}, {3.f, 4.f}}}}, {y, total}, &out);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("y = %s\ntotal = %s\n", out[0].DebugString().c_str(), out[1].DebugString().c_str());
  return 0;
}
