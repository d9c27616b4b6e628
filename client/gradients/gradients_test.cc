// AddSymbolicGradients itself: how gradients flow (sums over consumers,
// several ys, explicit grad_ys, through and at the xs) and every error.
#include "client/client_session.h"
#include "client/gradients/grad_testutil.h"
#include "client/node_builder.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// Ops for the error paths: one with no gradient at all, one whose gradient
// forgets its input. Graphs with them are built, never run.
TG_REGISTER_OP("GradientsTestOpaque").Input("x: float").Output("y: float");
TG_REGISTER_OP("GradientsTestForgetful").Input("x: float").Output("y: float");

absl::Status ForgetfulGrad(const Scope& scope, const ForwardOp& op, const std::vector<Output>& dy,
                           std::vector<Output>* dx) {
  dx->push_back(NoGradient());
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("GradientsTestForgetful", ForgetfulGrad);

Output Opaque(const Scope& scope, const Input& x) {
  return Output(NodeBuilder(scope, "GradientsTestOpaque").Input(x).Finalize(), 0);
}

class GradientsTest : public GradientTest {
 protected:
  std::vector<Tensor> Run(const ClientSession::FeedType& feeds,
                          const std::vector<Output>& fetches) {
    ClientSession session(root_);
    std::vector<Tensor> out;
    absl::Status s = session.Run(feeds, fetches, &out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }
  int CountNodes(const std::string& op) {
    GraphDef graph;
    EXPECT_TRUE(root_.ToGraphDef(&graph).ok());
    int n = 0;
    for (const NodeDef& node : graph.node()) n += node.op() == op;
    return n;
  }
};

TEST_F(GradientsTest, GradientsFromSeveralConsumersAreAdded) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_DOUBLE);
  auto y = ops::Add(root_, ops::Mul(root_, x, 3.0), ops::Square(root_, x));  // 3x + x^2
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {y}, {x}, &grads));
  EXPECT_EQ(CountNodes("AddN"), 1);
  ExpectTensorNear<double>(Run({{x, {1.0, -2.0}}}, grads)[0], {5, -1}, {2}, 1e-12);
  CheckGradient({x}, {Random(DT_DOUBLE, {2})}, {y});
}

TEST_F(GradientsTest, SeveralYsAddUp) {
  auto x = Placeholder(DT_DOUBLE);
  auto y0 = ops::Square(root_, x);
  auto y1 = ops::Square(root_, y0);  // y1 depends on y0 too
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {y0, y1}, {x}, &grads));
  // d(x^2 + x^4)/dx = 2x + 4x^3
  ExpectTensorNear<double>(Run({{x, {2.0}}}, grads)[0], {36}, {1}, 1e-12);
}

TEST_F(GradientsTest, ExplicitGradYsWeightTheYs) {
  auto x = Placeholder(DT_DOUBLE);
  auto y0 = ops::Mul(root_, x, 2.0);
  auto y1 = ops::Square(root_, x);
  auto dy0 = ops::Const(root_, {10.0, 100.0});
  auto dy1 = ops::Const(root_, {1.0, 0.0});
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {y0, y1}, {x}, {dy0, dy1}, &grads));
  // 2 dy0 + 2x dy1 at x = [3, 4]
  ExpectTensorNear<double>(Run({{x, {3.0, 4.0}}}, grads)[0], {26, 200}, {2}, 1e-12);
}

TEST_F(GradientsTest, GradientOfAnXThatIsAYIsItsGradY) {
  auto x = Placeholder(DT_DOUBLE);
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {x}, {x}, &grads));
  ExpectTensorNear<double>(Run({{x, {7.0, 8.0}}}, grads)[0], {1, 1}, {2}, 1e-12);
}

TEST_F(GradientsTest, AnXFeedingAnotherXGetsTheTotalDerivative) {
  auto x1 = Placeholder(DT_DOUBLE);
  auto x2 = ops::Square(root_, x1);
  auto y = ops::Add(root_, ops::Mul(root_, x2, 3.0), x1);  // 3 x1^2 + x1
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {y}, {x1, x2}, &grads));
  std::vector<Tensor> out = Run({{x1, {2.0}}}, grads);
  ExpectTensorNear<double>(out[0], {13}, {1}, 1e-12);
  ExpectTensorNear<double>(out[1], {3}, {1}, 1e-12);
}

TEST_F(GradientsTest, BackpropStopsAtTheXs) {
  // The op before x has no gradient, and needs none.
  auto u = ops::Placeholder(root_.WithOpName("u"), DT_FLOAT);
  auto x = Opaque(root_.WithOpName("x"), u);
  auto y = ops::Square(root_.WithOpName("y"), x);
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {y}, {x}, &grads));
  ExpectTensorNear<float>(Run({{x, {1.5f}}}, grads)[0], {3}, {1});
}

TEST_F(GradientsTest, IntegerInputsOffThePathAreSkipped) {
  auto logits = ops::Placeholder(root_.WithOpName("logits"), DT_DOUBLE);
  auto labels = ops::Placeholder(root_.WithOpName("labels"), DT_INT64);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root_, logits, labels);
  auto loss = ops::Mean(root_.WithOpName("loss"), xent.loss, 0);
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {loss}, {logits}, &grads));
  EXPECT_STATUS(AddSymbolicGradients(root_, {loss}, {labels}, &grads), kInvalidArgument,
                "x 'labels' has dtype int64, which carries no gradient");
}

TEST_F(GradientsTest, GradientNodesAreNamedAfterTheForwardNodes) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT);
  auto y = ops::Square(root_.WithOpName("layer/y"), x);
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {y}, {x}, &grads));
  EXPECT_EQ(grads[0].node_name().rfind("gradients/layer/y_grad/", 0), 0u) << grads[0].node_name();
  ASSERT_OK(AddSymbolicGradients(root_, {y}, {x}, &grads));
  EXPECT_EQ(grads[0].node_name().rfind("gradients_1/", 0), 0u) << grads[0].node_name();
}

TEST_F(GradientsTest, UnreachableXIsAnErrorNamingItAndTheYs) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT);
  auto w = ops::Placeholder(root_.WithOpName("w"), DT_FLOAT);
  auto loss = ops::Square(root_.WithOpName("loss"), x);
  auto other = ops::Neg(root_.WithOpName("other"), x);
  const int nodes = root_.num_nodes();
  std::vector<Output> grads;
  EXPECT_STATUS(AddSymbolicGradients(root_, {loss, other}, {x, w}, &grads), kInvalidArgument,
                "x 'w' is not reachable from ys 'loss', 'other': no y depends on it");
  EXPECT_EQ(root_.num_nodes(), nodes);  // nothing was built
  EXPECT_TRUE(root_.ok());
}

TEST_F(GradientsTest, PathThroughIntegersIsNotAPath) {
  auto w = ops::Placeholder(root_.WithOpName("w"), DT_FLOAT);
  auto pred = ops::ArgMax(root_.WithOpName("pred"), w, 1);
  auto loss = ops::Sum(root_.WithOpName("loss"), ops::Cast(root_, pred, DT_FLOAT), 0);
  std::vector<Output> grads;
  EXPECT_STATUS(AddSymbolicGradients(root_, {loss}, {w}, &grads), kInvalidArgument,
                "x 'w' is not reachable from y 'loss' through differentiable tensors: node "
                "'pred' (ArgMax) outputs int64, which carries no gradient");
}

TEST_F(GradientsTest, OpWithoutAGradientOnThePathIsAnError) {
  auto w = ops::Placeholder(root_.WithOpName("w"), DT_FLOAT);
  auto hidden = Opaque(root_.WithOpName("hidden"), ops::Square(root_, w));
  auto loss = ops::Sum(root_.WithOpName("loss"), hidden, 0);
  const int nodes = root_.num_nodes();
  std::vector<Output> grads;
  EXPECT_STATUS(AddSymbolicGradients(root_, {loss}, {w}, &grads), kInvalidArgument,
                "no gradient registered for op 'GradientsTestOpaque' (node 'hidden') on the "
                "path from 'loss' to 'w'");
  EXPECT_EQ(root_.num_nodes(), nodes);
}

TEST_F(GradientsTest, GradientFunctionThatDropsAnInputIsAnError) {
  auto w = ops::Placeholder(root_.WithOpName("w"), DT_FLOAT);
  auto f =
      Output(NodeBuilder(root_.WithOpName("f"), "GradientsTestForgetful").Input(w).Finalize(), 0);
  auto loss = ops::Square(root_.WithOpName("loss"), f);
  std::vector<Output> grads;
  EXPECT_STATUS(AddSymbolicGradients(root_, {loss}, {w}, &grads), kInvalidArgument,
                "the gradient of op 'GradientsTestForgetful' gives no gradient for input 0 ('w') "
                "of node 'f', which is on the path from 'loss' to 'w'");
}

TEST_F(GradientsTest, BadArguments) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT);
  auto y = ops::Square(root_.WithOpName("y"), x);
  auto n = ops::Placeholder(root_.WithOpName("n"), DT_INT32);
  std::vector<Output> grads;
  EXPECT_STATUS(AddSymbolicGradients(root_, {n}, {x}, &grads), kInvalidArgument,
                "y 'n' has dtype int32, which carries no gradient");
  EXPECT_STATUS(AddSymbolicGradients(root_, {y}, {x}, {}, &grads), kInvalidArgument,
                "got 0 grad_ys for 1 ys");
  auto wrong = ops::Const(root_.WithOpName("wrong"), 1.0);
  EXPECT_STATUS(AddSymbolicGradients(root_, {y}, {x}, {wrong}, &grads), kInvalidArgument,
                "grad_ys[0] 'wrong' has dtype double but y 'y' has dtype float");
  Scope elsewhere = Scope::NewRootScope();
  auto stranger = ops::Placeholder(elsewhere.WithOpName("stranger"), DT_FLOAT);
  EXPECT_STATUS(AddSymbolicGradients(root_, {y}, {stranger}, &grads), kInvalidArgument,
                "x 'stranger' is not an output of a node in this scope's graph");
  EXPECT_STATUS(AddSymbolicGradients(root_, {y}, {Output()}, &grads), kInvalidArgument,
                "x '(none)' is not an output of a node in this scope's graph");
}

TEST_F(GradientsTest, ScopeErrorIsReturned) {
  auto x = Placeholder(DT_FLOAT);
  auto y = ops::Square(root_, x);
  ops::Add(root_, x, 1);  // float + int32: the scope keeps the error
  std::vector<Output> grads;
  EXPECT_FALSE(AddSymbolicGradients(root_, {y}, {x}, &grads).ok());
}

}  // namespace
}  // namespace tensorgrid
