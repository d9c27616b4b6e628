// Gradients with respect to variables: resource variables through
// ReadVariableOp (the gradient arrives at the VarHandleOp's handle) and
// reference variables (the gradient arrives at the variable's ref output).
#include "client/client_session.h"
#include "client/gradients/grad_testutil.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class StateGradTest : public GradientTest {
 protected:
  // Runs `init` once, then fetches `outputs`.
  std::vector<Tensor> RunAfter(const Operation& init, const std::vector<Output>& outputs) {
    ClientSession session(root_);
    std::vector<Tensor> out;
    absl::Status s = session.Run({}, {}, {init}, nullptr);
    EXPECT_TRUE(s.ok()) << s;
    s = session.Run(outputs, &out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }
};

TEST_F(StateGradTest, ReadVariableOpPassesTheGradientToTheHandle) {
  auto v = ops::VarHandleOp(root_.WithOpName("v"), DT_DOUBLE, PartialTensorShape({3}));
  auto init = ops::AssignVariableOp(root_, v, {1.0, 2.0, 3.0});
  auto read = ops::ReadVariableOp(root_, v, DT_DOUBLE);
  auto loss = ops::Sum(root_, ops::Square(root_, read), 0);
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {loss}, {v}, &grads));
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].type(), DT_DOUBLE);
  std::vector<Tensor> out = RunAfter(init, grads);
  ExpectTensorNear<double>(out[0], {2, 4, 6}, {3}, 1e-12);
}

TEST_F(StateGradTest, TwoReadsOfOneVariableAddUp) {
  auto v = ops::VarHandleOp(root_.WithOpName("v"), DT_DOUBLE, PartialTensorShape({2}));
  auto init = ops::AssignVariableOp(root_, v, {3.0, -1.0});
  auto a = ops::ReadVariableOp(root_, v, DT_DOUBLE);
  auto b = ops::ReadVariableOp(root_, v, DT_DOUBLE);
  auto loss = ops::Sum(root_, ops::Mul(root_, a, ops::Mul(root_, b, 5.0)), 0);  // 5 v^2
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {loss}, {v}, &grads));
  ExpectTensorNear<double>(RunAfter(init, grads)[0], {30, -10}, {2}, 1e-12);
}

TEST_F(StateGradTest, ReadValueMatchesFiniteDifferences) {
  // The read value itself can be fed, which lets the checker vary it.
  auto v = ops::VarHandleOp(root_.WithOpName("v"), DT_DOUBLE, PartialTensorShape({2, 2}));
  auto read = ops::ReadVariableOp(root_, v, DT_DOUBLE);
  auto x = ops::Const(root_, {{1.0, -2.0}, {0.5, 3.0}});
  CheckGradient({read}, {Random(DT_DOUBLE, {2, 2})},
                {ops::Tanh(root_, ops::MatMul(root_, x, read))});
}

TEST_F(StateGradTest, ReferenceVariable) {
  auto w = ops::Variable(root_.WithOpName("w"), PartialTensorShape({2, 1}), DT_DOUBLE);
  auto init = ops::Assign(root_, w, {{2.0}, {-1.0}});
  auto x = ops::Const(root_, {{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  auto loss = ops::Sum(root_, ops::MatMul(root_, x, w), {0, 1});
  std::vector<Output> grads;
  ASSERT_OK(AddSymbolicGradients(root_, {loss}, {w}, &grads));
  EXPECT_EQ(grads[0].type(), DT_DOUBLE);
  ExpectTensorNear<double>(RunAfter(init.operation, grads)[0], {9, 12}, {2, 1}, 1e-12);
}

}  // namespace
}  // namespace tensorgrid
