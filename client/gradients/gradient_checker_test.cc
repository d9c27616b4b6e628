// The checker itself: exact Jacobians for a known function, and that it
// catches gradients that are wrong in value or in shape.
#include "client/gradients/grad_testutil.h"
#include "client/node_builder.h"
#include "core/framework/op_def.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

// y = 2x, with a gradient that is wrong in value (dy instead of 2 dy) ...
TG_REGISTER_OP("GradientCheckerTestDouble").Input("x: double").Output("y: double");
// ... and y = x, with a gradient of the wrong shape (a scalar).
TG_REGISTER_OP("GradientCheckerTestCopy").Input("x: double").Output("y: double");

class ScaleOp final : public OpKernel {
 public:
  explicit ScaleOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    scale_ = ctx.def().op() == "GradientCheckerTestDouble" ? 2 : 1;
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, x.shape(), &y));
    for (int64_t i = 0; i < x.NumElements(); ++i)
      y->data<double>()[i] = scale_ * x.data<double>()[i];
    return absl::OkStatus();
  }

 private:
  double scale_ = 1;
};
TG_REGISTER_KERNEL(KernelDefBuilder("GradientCheckerTestDouble").Device(DEVICE_CPU), ScaleOp);
TG_REGISTER_KERNEL(KernelDefBuilder("GradientCheckerTestCopy").Device(DEVICE_CPU), ScaleOp);

absl::Status WrongValueGrad(const Scope& scope, const ForwardOp& op, const std::vector<Output>& dy,
                            std::vector<Output>* dx) {
  dx->push_back(dy[0]);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("GradientCheckerTestDouble", WrongValueGrad);

absl::Status WrongShapeGrad(const Scope& scope, const ForwardOp& op, const std::vector<Output>& dy,
                            std::vector<Output>* dx) {
  dx->push_back(ops::Sum(scope, dy[0], 0));
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("GradientCheckerTestCopy", WrongShapeGrad);

class GradientCheckerTest : public GradientTest {
 protected:
  Output Test(const std::string& op, const Output& x) {
    return Output(NodeBuilder(root_, op).Input(x).Finalize(), 0);
  }
};

TEST_F(GradientCheckerTest, JacobiansOfAKnownFunction) {
  auto x = Placeholder(DT_DOUBLE);
  auto y = ops::Square(root_, x);
  absl::StatusOr<Jacobians> j =
      ComputeJacobians(root_, {x}, {Tensor::FromVector<double>({1, 2, 3}, {3})}, {y});
  ASSERT_OK(j.status());
  EXPECT_EQ(j->rows, 3);
  EXPECT_EQ(j->cols, 3);
  const std::vector<double> want = {2, 0, 0, 0, 4, 0, 0, 0, 6};
  for (int i = 0; i < 9; ++i) {
    EXPECT_DOUBLE_EQ(j->symbolic[i], want[i]) << i;
    EXPECT_NEAR(j->numeric[i], want[i], 1e-9) << i;
  }
}

TEST_F(GradientCheckerTest, SeveralXsAndYsMakeOneJacobian) {
  auto a = Placeholder(DT_DOUBLE);
  auto b = Placeholder(DT_FLOAT);
  auto sum = ops::Add(root_, a, ops::Cast(root_, b, DT_DOUBLE));
  auto product = ops::Mul(root_, b, b);
  absl::StatusOr<Jacobians> j = ComputeJacobians(
      root_, {a, b}, {Tensor::FromVector<double>({1, 2}, {2}), Tensor::FromVector<float>({3}, {1})},
      {sum, product});
  ASSERT_OK(j.status());
  ASSERT_EQ(j->rows, 3);
  ASSERT_EQ(j->cols, 3);  // sum [2], product [1]
  const std::vector<double> want = {1, 0, 0, 0, 1, 0, 1, 1, 6};
  for (int i = 0; i < 9; ++i) {
    EXPECT_DOUBLE_EQ(j->symbolic[i], want[i]) << i;
    EXPECT_NEAR(j->numeric[i], want[i], 1e-2) << i;
  }
}

TEST_F(GradientCheckerTest, ErrorIsSmallForACorrectGradient) {
  auto x = Placeholder(DT_DOUBLE);
  absl::StatusOr<double> error =
      ComputeGradientError(root_, {x}, {Random(DT_DOUBLE, {4})}, {ops::Tanh(root_, x)});
  ASSERT_OK(error.status());
  EXPECT_LT(*error, 1e-5);
}

TEST_F(GradientCheckerTest, CatchesAGradientWrongInValue) {
  auto x = Placeholder(DT_DOUBLE);
  absl::StatusOr<double> error = ComputeGradientError(root_, {x}, {Random(DT_DOUBLE, {3})},
                                                      {Test("GradientCheckerTestDouble", x)});
  ASSERT_OK(error.status());
  EXPECT_NEAR(*error, 1, 1e-6);  // 1 where 2 is right
}

TEST_F(GradientCheckerTest, CatchesAGradientWrongInShape) {
  auto x = Placeholder(DT_DOUBLE);
  EXPECT_STATUS(ComputeGradientError(root_, {x}, {Random(DT_DOUBLE, {3})},
                                     {Test("GradientCheckerTestCopy", x)})
                    .status(),
                kInvalidArgument, "has shape [] but x has shape [3]");
}

TEST_F(GradientCheckerTest, BadArguments) {
  auto x = Placeholder(DT_DOUBLE);
  auto n = ops::Placeholder(root_.WithOpName("n"), DT_INT32);
  EXPECT_STATUS(ComputeGradientError(root_, {x}, {}, {x}).status(), kInvalidArgument,
                "1 xs but 0 x_values");
  EXPECT_STATUS(
      ComputeGradientError(root_, {n}, {Tensor::FromVector<int32_t>({1}, {1})}, {x}).status(),
      kInvalidArgument, "x 'n:0' has dtype int32; only float and double are checked");
  EXPECT_STATUS(
      ComputeGradientError(root_, {x}, {Tensor::FromVector<float>({1}, {1})}, {x}).status(),
      kInvalidArgument, "x_values[0] is float but x");
}

}  // namespace
}  // namespace tensorgrid
