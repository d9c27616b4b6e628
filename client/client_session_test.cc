// ClientSession end to end: graphs built with ops:: run on the in-process session.
#include "client/client_session.h"

#include <string>
#include <vector>

#include "client/ops/standard_ops.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

std::vector<float> Values(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DT_FLOAT);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

TEST(ClientSessionTest, RunsAConstantGraph) {
  Scope root = Scope::NewRootScope();
  auto m = ops::MatMul(root, {{3.f, 2.f}}, {{-1.f}, {2.f}});
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({m}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({1, 1}));
  EXPECT_EQ(Values(out[0]), std::vector<float>{1.f});
}

TEST(ClientSessionTest, FeedsLiteralsAndTensors) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Mul(root, x, 2.f);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({{x, {1.f, 2.f, 3.f}}}, {y}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2.f, 4.f, 6.f}));
  s = session.Run({{x, Tensor::FromVector<float>({5.f}, TensorShape({1}))}}, {y}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Values(out[0]), std::vector<float>{10.f});
  s = session.Run({{x, {{1.f, 2.f}, {3.f}}}}, {y}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ClientSessionTest, NodesAddedBetweenRunsAreSent) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root, 2.f);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({a}, &out).ok());
  auto b = ops::Square(root, a);
  auto c = ops::Add(root, b, 1.f);
  absl::Status s = session.Run({c, b}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 5.f);
  EXPECT_EQ(out[1].scalar<float>(), 4.f);
}

TEST(ClientSessionTest, ReferenceVariableUpdatesPersistAcrossRuns) {
  Scope root = Scope::NewRootScope();
  auto v = ops::Variable(root.WithOpName("v"), {2}, DT_FLOAT);
  auto init = ops::Assign(root, v, {1.f, 2.f});
  auto step = ops::AssignAdd(root, v, {10.f, 10.f});
  auto read = ops::Identity(root, v);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({}, {}, {init.operation}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(session.Run({}, {}, {step.operation}, &out).ok());
  ASSERT_TRUE(session.Run({read}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{11.f, 12.f}));
}

TEST(ClientSessionTest, ResourceVariable) {
  Scope root = Scope::NewRootScope();
  auto h = ops::VarHandleOp(root, DT_FLOAT, {2});
  auto set = ops::AssignVariableOp(root, h, {1.f, 2.f});
  auto add = ops::AssignAddVariableOp(root, h, {0.5f, 0.5f});
  auto read = ops::ReadVariableOp(root, h, DT_FLOAT);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({}, {}, {set}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(session.Run({}, {}, {add}, &out).ok());
  ASSERT_TRUE(session.Run({read}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{1.5f, 2.5f}));
}

TEST(ClientSessionTest, RunWithOptionsAndMetadata) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Neg(root, x);
  ClientSession session(root);
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status s = session.Run(options, {{x, 3.f}}, {y}, {}, &out, &metadata);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), -3.f);
}

TEST(ClientSessionTest, ScopeErrorIsReturnedByRun) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto bad = ops::Add(root.WithOpName("bad"), x, 1);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({{x, 1.f}}, {bad}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("node 'bad'"), std::string::npos) << s;
}

TEST(ClientSessionTest, InvalidFetchIsAnError) {
  Scope root = Scope::NewRootScope();
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({Output()}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("fetching an invalid Output"), std::string::npos) << s;
  // An output index out of range names the node and the index.
  auto y = ops::Add(root.WithOpName("y"), 1.f, 2.f);
  s = session.Run({Output(y.operation, 3)}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("fetching output 3 of 'y', which has 1 output(s)"), std::string::npos)
      << s;
}

// An Output or Operation of another root scope's graph is refused by name,
// even where this graph has a node of the same name: never that node
// silently in its place.
TEST(ClientSessionTest, NodesOfAnotherGraphAreRefusedNotMistakenForNamesakes) {
  Scope r1 = Scope::NewRootScope(), r2 = Scope::NewRootScope();
  auto a1 = ops::Const(r1.WithOpName("a"), 1.f);
  auto a2 = ops::Const(r2.WithOpName("a"), 42.f);
  auto x2 = ops::Placeholder(r2.WithOpName("x"), DT_FLOAT);
  ops::Placeholder(r1.WithOpName("x"), DT_FLOAT);
  ClientSession session(r1);
  std::vector<Tensor> out;
  absl::Status s = session.Run({a2}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("fetch 'a:0' is a node of another graph"), std::string::npos) << s;
  s = session.Run({{x2, 1.f}}, {a1}, &out);
  EXPECT_NE(s.message().find("feed 'x:0' is a node of another graph"), std::string::npos) << s;
  s = session.Run({}, {}, {a2.op()}, nullptr);
  EXPECT_NE(s.message().find("target 'a' is a node of another graph"), std::string::npos) << s;
  // As an input of an op of this graph.
  ops::Add(r1.WithOpName("sum"), a2, 100.f);
  EXPECT_EQ(r1.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r1.status().message().find("'a' is a node of another graph"), std::string::npos)
      << r1.status();
}

TEST(ClientSessionTest, SessionCreationErrorIsReturnedByRun) {
  Scope root = Scope::NewRootScope();
  auto c = ops::Const(root, 1.f);
  ClientSession session(root, "no-such-scheme://x");
  EXPECT_EQ(session.session(), nullptr);
  std::vector<Tensor> out;
  absl::Status s = session.Run({c}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("creating a session"), std::string::npos) << s;
}

TEST(ClientSessionTest, Callables) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto y = ops::Square(root, x);
  ClientSession session(root);
  CallableOptions options;
  options.add_feed(Output(x).name());
  options.add_fetch(Output(y).name());
  absl::StatusOr<ClientSession::CallableHandle> handle = session.MakeCallable(options);
  ASSERT_TRUE(handle.ok()) << handle.status();
  std::vector<Tensor> out;
  absl::Status s = session.RunCallable(*handle, {Tensor::Scalar<float>(4.f)}, &out, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 16.f);
  EXPECT_TRUE(session.ReleaseCallable(*handle).ok());
}

}  // namespace
}  // namespace tensorgrid
