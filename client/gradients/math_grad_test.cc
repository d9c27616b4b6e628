// Each math gradient against central finite differences, in double unless
// the test is about float.
#include <functional>

#include "client/gradients/grad_testutil.h"

namespace tensorgrid {
namespace {

class MathGradTest : public GradientTest {
 protected:
  using Unary = std::function<Output(const Scope&, const Output&)>;
  using Binary = std::function<Output(const Scope&, const Output&, const Output&)>;

  void CheckUnary(const Unary& f, double lo = -1, double hi = 1) {
    auto x = Placeholder(DT_DOUBLE);
    CheckGradient({x}, {Random(DT_DOUBLE, {2, 3}, lo, hi)}, {f(root_, x)});
  }
  // Both inputs of f, for x and y of the given (broadcasting) shapes.
  void CheckBinary(const Binary& f, const TensorShape& x_shape, const TensorShape& y_shape,
                   double y_min_abs = 0) {
    SCOPED_TRACE(x_shape.DebugString() + " with " + y_shape.DebugString());
    auto x = Placeholder(DT_DOUBLE);
    auto y = Placeholder(DT_DOUBLE);
    CheckGradient({x, y},
                  {Random(DT_DOUBLE, x_shape), Random(DT_DOUBLE, y_shape, -2, 2, y_min_abs)},
                  {f(root_, x, y)});
  }
  void CheckBinaryShapes(const Binary& f, double y_min_abs = 0) {
    CheckBinary(f, {2, 3}, {2, 3}, y_min_abs);
    CheckBinary(f, {2, 3}, {3}, y_min_abs);
    CheckBinary(f, {3}, {2, 3}, y_min_abs);
    CheckBinary(f, {2, 1}, {1, 3}, y_min_abs);
    CheckBinary(f, {}, {2, 3}, y_min_abs);
    CheckBinary(f, {4, 1, 3}, {2, 1}, y_min_abs);
  }
};

TEST_F(MathGradTest, Neg) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Neg(s, x); });
}

TEST_F(MathGradTest, Square) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Square(s, x); });
}

TEST_F(MathGradTest, Sqrt) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Sqrt(s, x); }, 0.5, 2);
}

TEST_F(MathGradTest, Exp) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Exp(s, x); });
}

TEST_F(MathGradTest, Log) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Log(s, x); }, 0.5, 2);
}

TEST_F(MathGradTest, Tanh) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Tanh(s, x); }, -2, 2);
}

TEST_F(MathGradTest, Sigmoid) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Sigmoid(s, x); }, -3, 3);
}

TEST_F(MathGradTest, FloatTanhAndSquare) {
  auto x = Placeholder(DT_FLOAT);
  CheckGradient({x}, {Random(DT_FLOAT, {3, 2})}, {ops::Tanh(root_, ops::Square(root_, x))}, 5e-3);
}

TEST_F(MathGradTest, AddWithBroadcasting) {
  CheckBinaryShapes(
      [](const Scope& s, const Output& x, const Output& y) { return ops::Add(s, x, y); });
}

TEST_F(MathGradTest, AddV2WithBroadcasting) {
  CheckBinaryShapes(
      [](const Scope& s, const Output& x, const Output& y) { return ops::AddV2(s, x, y); });
}

TEST_F(MathGradTest, SubWithBroadcasting) {
  CheckBinaryShapes(
      [](const Scope& s, const Output& x, const Output& y) { return ops::Sub(s, x, y); });
}

TEST_F(MathGradTest, MulWithBroadcasting) {
  CheckBinaryShapes(
      [](const Scope& s, const Output& x, const Output& y) { return ops::Mul(s, x, y); });
}

TEST_F(MathGradTest, RealDivWithBroadcasting) {
  CheckBinaryShapes(
      [](const Scope& s, const Output& x, const Output& y) { return ops::RealDiv(s, x, y); }, 0.5);
}

TEST_F(MathGradTest, MatMulWithEveryTranspose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string("transpose_a=") + (ta ? "true" : "false") +
                   " transpose_b=" + (tb ? "true" : "false"));
      auto a = Placeholder(DT_DOUBLE);
      auto b = Placeholder(DT_DOUBLE);
      auto product = ops::MatMul(root_, a, b, ops::MatMul::TransposeA(ta).TransposeB(tb));
      CheckGradient({a, b},
                    {Random(DT_DOUBLE, ta ? TensorShape({3, 2}) : TensorShape({2, 3})),
                     Random(DT_DOUBLE, tb ? TensorShape({4, 3}) : TensorShape({3, 4}))},
                    {product});
    }
  }
}

TEST_F(MathGradTest, SumOverAxes) {
  auto x = Placeholder(DT_DOUBLE);
  const Tensor value = Random(DT_DOUBLE, {2, 3, 4});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, 1)});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, {0, 2})});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, {-1})});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, {0, 1, 2})});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, Input(Tensor(DT_INT32, {0})))});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, int64_t{-2})});
}

TEST_F(MathGradTest, SumWithKeepDims) {
  auto x = Placeholder(DT_DOUBLE);
  const Tensor value = Random(DT_DOUBLE, {2, 3, 4});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, {0, 2}, ops::Sum::KeepDims(true))});
  CheckGradient({x}, {value}, {ops::Sum(root_, x, -1, ops::Sum::KeepDims(true))});
}

TEST_F(MathGradTest, MeanOverAxes) {
  auto x = Placeholder(DT_DOUBLE);
  const Tensor value = Random(DT_DOUBLE, {2, 3, 4});
  CheckGradient({x}, {value}, {ops::Mean(root_, x, 1)});
  CheckGradient({x}, {value}, {ops::Mean(root_, x, {0, -1})});
  CheckGradient({x}, {value}, {ops::Mean(root_, x, {0, 1, 2})});
  CheckGradient({x}, {value}, {ops::Mean(root_, x, {1, 2}, ops::Mean::KeepDims(true))});
}

TEST_F(MathGradTest, CastFloatToDoubleAndBack) {
  auto x = Placeholder(DT_FLOAT);
  auto y = ops::Square(root_, ops::Cast(root_, x, DT_DOUBLE));
  CheckGradient({x}, {Random(DT_FLOAT, {2, 3})}, {y}, 5e-3);
  auto d = Placeholder(DT_DOUBLE);
  CheckGradient({d}, {Random(DT_DOUBLE, {4})}, {ops::Exp(root_, ops::Cast(root_, d, DT_FLOAT))},
                5e-3);
}

TEST_F(MathGradTest, AddN) {
  auto x = Placeholder(DT_DOUBLE);
  auto y = Placeholder(DT_DOUBLE);
  auto sum = ops::AddN(root_, {x, ops::Square(root_, x), y});
  CheckGradient({x, y}, {Random(DT_DOUBLE, {2, 2}), Random(DT_DOUBLE, {2, 2})}, {sum});
}

}  // namespace
}  // namespace tensorgrid
