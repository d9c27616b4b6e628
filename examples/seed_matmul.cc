// The classic distributed example: variables on a parameter server, one
// matmul on each of two workers, a session on worker 0 of a real cluster.
//
//   /job:ps/task:0          /job:worker/task:0          /job:worker/task:1
//  +---------------+       +---------------------+     +---------------------+
//  | x = ones(2,2) |-x,y-->| z = matmul(x, y) + x|--z->| z = matmul(z, x) + x|
//  | y = ones(2,2) |       +---------------------+     +---------------------+
//  +---------------+                                       ^        |
//          +---------------------- x ----------------------+        v
//                                                           [[7, 7], [7, 7]]
//
// Start the cluster of docs/server.md (ps=localhost:2222;
// worker=localhost:2223,localhost:2224), then:
//   bazel run //examples:seed_matmul -- --target=grpc://localhost:2223
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"

using namespace tensorgrid;  // NOLINT: an example

int main(int argc, char** argv) {
  std::string target = "grpc://localhost:2223";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--target=", 9) != 0) {
      std::fprintf(stderr, "usage: seed_matmul [--target=grpc://HOST:PORT]\n");
      return 1;
    }
    target = argv[i] + 9;
  }

  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  auto x = ops::Variable(ps.WithOpName("x"), {2, 2}, DT_FLOAT);
  auto y = ops::Variable(ps.WithOpName("y"), {2, 2}, DT_FLOAT);
  auto ones = ops::Const(root.WithOpName("ones"), {{1.f, 1.f}, {1.f, 1.f}});
  auto init_x = ops::Assign(ps.WithOpName("x/Assign"), x, ones);
  auto init_y = ops::Assign(ps.WithOpName("y/Assign"), y, ones);

  Scope w0 = root.WithDevice("/job:worker/task:0");
  auto z1 = ops::Add(w0, ops::MatMul(w0, x, y), x);
  Scope w1 = root.WithDevice("/job:worker/task:1");
  auto z = ops::Add(w1.WithOpName("z"), ops::MatMul(w1, z1, x), x);

  ClientSession session(root, target);
  std::vector<Tensor> outputs;
  // The initializers first (the variables live on the ps), then z.
  absl::Status status = session.Run({}, {}, {init_x.operation, init_y.operation}, &outputs);
  if (status.ok()) status = session.Run({z}, &outputs);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  const float* v = outputs[0].data<float>();
  std::printf("[[%g, %g], [%g, %g]]\n", v[0], v[1], v[2], v[3]);
  return 0;
}
