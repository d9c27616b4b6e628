#include <cmath>
#include <limits>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class UnaryOpsTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(const std::string& op, Tensor x) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("n", op).Attr("T", DataTypeToEnum<T>::value)));
    AddInput(std::move(x));
    return RunOp();
  }
};

TEST_F(UnaryOpsTest, Neg) {
  ASSERT_OK(Run<float>("Neg", Tensor::FromVector<float>({1, -2.5f, 0}, {3})));
  ExpectTensorEqual<float>(GetOutput(0), {-1, 2.5f, 0}, {3});
  inputs_.clear();
  ASSERT_OK(Run<int64_t>("Neg", Tensor::FromVector<int64_t>({3, -4}, {1, 2})));
  ExpectTensorEqual<int64_t>(GetOutput(0), {-3, 4}, {1, 2});
}

TEST_F(UnaryOpsTest, Square) {
  ASSERT_OK(Run<double>("Square", Tensor::FromVector<double>({-3, 0.5}, {2})));
  ExpectTensorEqual<double>(GetOutput(0), {9, 0.25}, {2});
  inputs_.clear();
  ASSERT_OK(Run<int32_t>("Square", Tensor::FromVector<int32_t>({-3, 7}, {2})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {9, 49}, {2});
}

TEST_F(UnaryOpsTest, SqrtAndRsqrt) {
  ASSERT_OK(Run<float>("Sqrt", Tensor::FromVector<float>({4, 2.25f, 0}, {3})));
  ExpectTensorNear<float>(GetOutput(0), {2, 1.5f, 0}, {3});
  inputs_.clear();
  ASSERT_OK(Run<double>("Rsqrt", Tensor::FromVector<double>({4, 0.25}, {2})));
  ExpectTensorNear<double>(GetOutput(0), {0.5, 2}, {2}, 1e-12);
}

TEST_F(UnaryOpsTest, ExpAndLog) {
  ASSERT_OK(Run<float>("Exp", Tensor::FromVector<float>({0, 1, -1}, {3})));
  ExpectTensorNear<float>(GetOutput(0), {1, std::exp(1.0f), std::exp(-1.0f)}, {3});
  inputs_.clear();
  ASSERT_OK(Run<double>("Log", Tensor::FromVector<double>({1, std::exp(2.0), 0}, {3})));
  const Tensor& y = GetOutput(0);
  EXPECT_NEAR(y.data<double>()[0], 0, 1e-12);
  EXPECT_NEAR(y.data<double>()[1], 2, 1e-12);
  EXPECT_EQ(y.data<double>()[2], -std::numeric_limits<double>::infinity());
}

TEST_F(UnaryOpsTest, TanhAndSigmoid) {
  ASSERT_OK(Run<float>("Tanh", Tensor::FromVector<float>({0, 0.5f, -2, 30}, {4})));
  ExpectTensorNear<float>(GetOutput(0), {0, std::tanh(0.5f), std::tanh(-2.0f), 1}, {4});
  inputs_.clear();
  ASSERT_OK(Run<double>("Sigmoid", Tensor::FromVector<double>({0, 2, -2, -800}, {4})));
  ExpectTensorNear<double>(GetOutput(0),
                           {0.5, 1 / (1 + std::exp(-2.0)), 1 / (1 + std::exp(2.0)), 0}, {4}, 1e-12);
}

TEST_F(UnaryOpsTest, LargeSigmoidRunsOnThePool) {
  Tensor x(DT_FLOAT, {50000});
  std::vector<float> want(50000);
  for (int i = 0; i < 50000; ++i) {
    x.data<float>()[i] = (i - 25000) / 2500.0f;
    want[i] = 1 / (1 + std::exp(-x.data<float>()[i]));
  }
  ASSERT_OK(Run<float>("Sigmoid", x));
  ExpectTensorNear<float>(GetOutput(0), want, {50000}, 1e-6);
}

TEST_F(UnaryOpsTest, WritesIntoAnInputNobodyElseHolds) {
  ASSERT_OK(Run<float>("Exp", Tensor::FromVector<float>({0, 0}, {2})));
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(inputs_[0].tensor));
  ExpectTensorEqual<float>(GetOutput(0), {1, 1}, {2});
}

TEST_F(UnaryOpsTest, SqrtHasNoIntegerKernel) {
  EXPECT_STATUS(MakeOp(NodeDefBuilder("n", "Sqrt").Attr("T", DT_INT32)), kInvalidArgument, "T");
}

TEST_F(UnaryOpsTest, Relu) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_OK(Run<float>("Relu", Tensor::FromVector<float>({-1, 0, 2.5f, nan}, {2, 2})));
  const Tensor& y = GetOutput(0);
  EXPECT_EQ(y.data<float>()[0], 0);
  EXPECT_EQ(y.data<float>()[1], 0);
  EXPECT_EQ(y.data<float>()[2], 2.5f);
  EXPECT_TRUE(std::isnan(y.data<float>()[3]));
  inputs_.clear();
  ASSERT_OK(Run<int32_t>("Relu", Tensor::FromVector<int32_t>({-7, 7}, {2})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 7}, {2});
}

class ReluGradTest : public OpsTestBase {};

TEST_F(ReluGradTest, PassesGradientWherePositive) {
  ASSERT_OK(MakeOp(NodeDefBuilder("g", "ReluGrad").Attr("T", DT_FLOAT)));
  AddInput(Tensor::FromVector<float>({10, 20, 30, 40}, {4}));
  AddInput(Tensor::FromVector<float>({-1, 0, 0.5f, 3}, {4}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {0, 0, 30, 40}, {4});
}

TEST_F(ReluGradTest, ShapesMustMatch) {
  ASSERT_OK(MakeOp(NodeDefBuilder("g", "ReluGrad").Attr("T", DT_DOUBLE)));
  AddInput(Tensor(DT_DOUBLE, {2, 2}));
  AddInput(Tensor(DT_DOUBLE, {4}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "same shape, got [2,2] and [4]");
}

}  // namespace
}  // namespace tensorgrid
