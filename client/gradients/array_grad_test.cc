// Each array gradient against central finite differences.
#include "client/gradients/grad_testutil.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

class ArrayGradTest : public GradientTest {};

TEST_F(ArrayGradTest, Identity) {
  auto x = Placeholder(DT_DOUBLE);
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 3})}, {ops::Square(root_, ops::Identity(root_, x))});
}

TEST_F(ArrayGradTest, PlaceholderWithDefault) {
  auto x = Placeholder(DT_DOUBLE);
  auto y = ops::PlaceholderWithDefault(root_, ops::Exp(root_, x), PartialTensorShape({-1}));
  CheckGradient({x}, {Random(DT_DOUBLE, {3})}, {ops::Square(root_, y)});
}

TEST_F(ArrayGradTest, Reshape) {
  auto x = Placeholder(DT_DOUBLE);
  const Tensor value = Random(DT_DOUBLE, {2, 3});
  // Multiplying by a non-uniform constant tells the positions apart.
  auto weights = ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {3, 2});
  CheckGradient({x}, {value}, {ops::Mul(root_, ops::Reshape(root_, x, {3, 2}), weights)});
  CheckGradient({x}, {value}, {ops::Reshape(root_, x, {-1})});
  CheckGradient({x}, {value},
                {ops::Reshape(root_, x, Input(Tensor::FromVector<int64_t>({1, 6}, {2})))});
}

TEST_F(ArrayGradTest, Transpose) {
  auto x = Placeholder(DT_DOUBLE);
  auto weights = ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {3, 2});
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 3})},
                {ops::Mul(root_, ops::Transpose(root_, x, {1, 0}), weights)});
  auto y = Placeholder(DT_DOUBLE);
  Tensor w(DT_DOUBLE, {4, 2, 3});
  for (int i = 0; i < 24; ++i) w.data<double>()[i] = i;
  CheckGradient({y}, {Random(DT_DOUBLE, {2, 3, 4})},
                {ops::Mul(root_, ops::Transpose(root_, y, {2, 0, 1}), ops::Const(root_, w))});
}

TEST_F(ArrayGradTest, ConcatAlongAxisZero) {
  auto a = Placeholder(DT_DOUBLE);
  auto b = Placeholder(DT_DOUBLE);
  auto c = Placeholder(DT_DOUBLE);
  auto joined = ops::Concat(root_, {a, b, c}, 0);
  auto weights =
      ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}, {6, 2});
  CheckGradient({a, b, c},
                {Random(DT_DOUBLE, {1, 2}), Random(DT_DOUBLE, {3, 2}), Random(DT_DOUBLE, {2, 2})},
                {ops::Mul(root_, ops::Square(root_, joined), weights)});
}

TEST_F(ArrayGradTest, ConcatAlongAxisOneAndMinusOne) {
  auto a = Placeholder(DT_DOUBLE);
  auto b = Placeholder(DT_DOUBLE);
  auto weights = ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0}, {2, 5});
  const std::vector<Tensor> values = {Random(DT_DOUBLE, {2, 2}), Random(DT_DOUBLE, {2, 3})};
  CheckGradient({a, b}, values, {ops::Mul(root_, ops::Concat(root_, {a, b}, 1), weights)});
  CheckGradient({a, b}, values, {ops::Mul(root_, ops::Concat(root_, {a, b}, -1), weights)});
  CheckGradient({a, b}, values, {ops::Mul(root_, ops::Concat(root_, {a, b}, int64_t{1}), weights)});
}

TEST_F(ArrayGradTest, ConcatOfOneTensorWithItself) {
  auto a = Placeholder(DT_DOUBLE);
  auto weights = ops::Const(root_, {1.0, 2.0, 3.0, 4.0}, {4});
  CheckGradient({a}, {Random(DT_DOUBLE, {2})},
                {ops::Mul(root_, ops::Concat(root_, {a, ops::Square(root_, a)}, 0), weights)});
}

TEST_F(ArrayGradTest, BroadcastTo) {
  auto x = Placeholder(DT_DOUBLE);
  auto weights = ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  CheckGradient({x}, {Random(DT_DOUBLE, {3})},
                {ops::Mul(root_, ops::BroadcastTo(root_, x, {2, 3}), weights)});
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 1})},
                {ops::Mul(root_, ops::BroadcastTo(root_, x, {2, 3}), weights)});
}

TEST_F(ArrayGradTest, ZerosLikeAndOnesLikeCarryNoGradient) {
  // Beside a real path, their own paths are simply not paths.
  auto x = Placeholder(DT_DOUBLE);
  auto y = ops::Add(root_, ops::Mul(root_, x, ops::OnesLike(root_, x)), ops::ZerosLike(root_, x));
  CheckGradient({x}, {Random(DT_DOUBLE, {3})}, {y});
  // As the only path, they leave x unreachable.
  auto z = ops::ZerosLike(root_.WithOpName("z"), x);
  auto loss = ops::Sum(root_.WithOpName("loss"), z, 0);
  std::vector<Output> grads;
  EXPECT_STATUS(AddSymbolicGradients(root_, {loss}, {x}, &grads), kInvalidArgument,
                "node 'z' (ZerosLike) passes no gradient to its inputs");
}

TEST_F(ArrayGradTest, PadInt32AndInt64Paddings) {
  auto x = Placeholder(DT_DOUBLE);
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 3})},
                {ops::Pad(root_, x, ops::Const(root_, {{1, 0}, {2, 1}}))});
  CheckGradient(
      {x}, {Random(DT_DOUBLE, {1, 2, 2, 1})},
      {ops::Pad(root_, x, ops::Const(root_, {{0LL, 0LL}, {0LL, 1LL}, {1LL, 1LL}, {0LL, 0LL}}))});
}

TEST_F(ArrayGradTest, Squeeze) {
  auto x = Placeholder(DT_DOUBLE);
  CheckGradient({x}, {Random(DT_DOUBLE, {1, 3, 1, 2})}, {ops::Squeeze(root_, x)});
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 1, 1})},
                {ops::Squeeze(root_, x, ops::Squeeze::SqueezeDims({-1}))});
}

TEST_F(ArrayGradTest, StackAlongEachAxis) {
  auto a = Placeholder(DT_DOUBLE);
  auto b = Placeholder(DT_DOUBLE);
  auto c = Placeholder(DT_DOUBLE);
  auto weights = ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {3, 2});
  const std::vector<Tensor> values = {Random(DT_DOUBLE, {2}), Random(DT_DOUBLE, {2}),
                                      Random(DT_DOUBLE, {2})};
  CheckGradient({a, b, c}, values, {ops::Mul(root_, ops::Stack(root_, {a, b, c}), weights)});
  auto transposed = ops::Const(root_, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  CheckGradient({a, b, c}, values,
                {ops::Mul(root_, ops::Stack(root_, {a, b, c}, ops::Stack::Axis(-1)), transposed)});
}

TEST_F(ArrayGradTest, UnstackWithAnUnusedSlice) {
  auto x = Placeholder(DT_DOUBLE);
  auto slices = ops::Unstack(root_, x, 3, ops::Unstack::Axis(1));
  // Slice 1 feeds nothing: its gradient is zeros.
  auto y = ops::Add(root_, ops::Mul(root_, slices[0], ops::Const(root_, {2.0, 3.0}, {2})),
                    ops::Square(root_, slices[2]));
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 3})}, {y});
  auto z = ops::Unstack(root_, x, 2);
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 3})}, {ops::Mul(root_, z[0], ops::Exp(root_, z[1]))});
}

}  // namespace
}  // namespace tensorgrid
