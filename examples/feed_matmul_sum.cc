// Feeding a placeholder and fetching two tensors (the README's program).
//
//   x (fed [2,2]) ─┐
//                  ├─ MatMul(x, wᵀ) = y ── Sum(y, axes {0,1}) = total
//   w = [[1,0],   ─┘
//        [0,2]]                      all on the local CPU
//
// bazel run //examples:feed_matmul_sum
#include <cstdio>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"

using namespace tensorgrid;  // NOLINT: an example

int main() {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({2, 2}));
  auto w = ops::Const(root.WithOpName("w"), {{1.f, 0.f}, {0.f, 2.f}});
  auto y = ops::MatMul(root.WithOpName("y"), x, w, ops::MatMul::TransposeB(true));
  auto total = ops::Sum(root.WithOpName("total"), y, {0, 1});

  ClientSession session(root);  // "" = in-process master + worker
  std::vector<Tensor> out;
  absl::Status s = session.Run({{x, {{1.f, 2.f}, {3.f, 4.f}}}}, {y, total}, &out);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%s\n%s\n", out[0].DebugString().c_str(), out[1].DebugString().c_str());
  return 0;
}
