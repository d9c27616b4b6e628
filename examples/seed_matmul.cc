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
// --x=A,B,C,D and --y=A,B,C,D start x and y at other values, row by row
// (tests/seed_matmul_test.sh: unequal ones, which a tensor transposed or
// reordered between tasks would change).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"

using namespace tensorgrid;  // NOLINT: an example

constexpr char kUsage[] =
    "usage: seed_matmul [--target=grpc://HOST:PORT] [--x=A,B,C,D] [--y=...]\n";

int main(int argc, char** argv) {
  std::string target = "grpc://localhost:2223";
  float x0[4] = {1, 1, 1, 1}, y0[4] = {1, 1, 1, 1};
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    float* m = std::strncmp(arg, "--x=", 4) == 0   ? x0
               : std::strncmp(arg, "--y=", 4) == 0 ? y0
                                                   : nullptr;
    int end = 0;
    if (std::strcmp(arg, "--help") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (std::strncmp(arg, "--target=", 9) == 0) {
      target = arg + 9;
    } else if (m == nullptr) {
      std::fprintf(stderr, "unknown argument '%s'\n%s", arg, kUsage);
      return 2;
    } else if (std::sscanf(arg + 4, "%f,%f,%f,%f%n", &m[0], &m[1], &m[2], &m[3], &end) != 4 ||
               arg[4 + end] != '\0') {
      std::fprintf(stderr, "%.3s needs four numbers separated by commas (row by row), got '%s'\n",
                   arg, arg + 4);
      return 2;
    }
  }

  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  auto x = ops::Variable(ps.WithOpName("x"), {2, 2}, DT_FLOAT);
  auto y = ops::Variable(ps.WithOpName("y"), {2, 2}, DT_FLOAT);
  auto x_init = ops::Const(root.WithOpName("x/initial_value"), {{x0[0], x0[1]}, {x0[2], x0[3]}});
  auto y_init = ops::Const(root.WithOpName("y/initial_value"), {{y0[0], y0[1]}, {y0[2], y0[3]}});
  auto init_x = ops::Assign(ps.WithOpName("x/Assign"), x, x_init);
  auto init_y = ops::Assign(ps.WithOpName("y/Assign"), y, y_init);

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
