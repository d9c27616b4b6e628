#include <cmath>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class CwiseGradOpsTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(const std::string& op, std::vector<Tensor> inputs) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("n", op).Attr("T", DataTypeToEnum<T>::value)));
    for (Tensor& t : inputs) AddInput(std::move(t));
    return RunOp();
  }
};

TEST_F(CwiseGradOpsTest, SigmoidGradIsDyTimesYTimesOneMinusY) {
  ASSERT_OK(Run<float>("SigmoidGrad", {Tensor::FromVector<float>({0.5f, 0.25f, 1}, {3}),
                                       Tensor::FromVector<float>({2, 4, 3}, {3})}));
  ExpectTensorNear<float>(GetOutput(0), {0.5f, 0.75f, 0}, {3});
}

TEST_F(CwiseGradOpsTest, TanhGradIsDyTimesOneMinusYSquared) {
  ASSERT_OK(Run<double>("TanhGrad", {Tensor::FromVector<double>({0, 0.5, -1}, {1, 3}),
                                     Tensor::FromVector<double>({2, 4, 3}, {1, 3})}));
  ExpectTensorNear<double>(GetOutput(0), {2, 3, 0}, {1, 3}, 1e-12);
}

TEST_F(CwiseGradOpsTest, SqrtGradIsHalfDyOverY) {
  ASSERT_OK(Run<double>("SqrtGrad", {Tensor::FromVector<double>({2, 0.5}, {2}),
                                     Tensor::FromVector<double>({4, 1}, {2})}));
  ExpectTensorNear<double>(GetOutput(0), {1, 1}, {2}, 1e-12);
}

TEST_F(CwiseGradOpsTest, Reciprocal) {
  ASSERT_OK(Run<float>("Reciprocal", {Tensor::FromVector<float>({2, -0.25f, 0}, {3})}));
  const Tensor& y = GetOutput(0);
  EXPECT_FLOAT_EQ(y.data<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ(y.data<float>()[1], -4);
  EXPECT_TRUE(std::isinf(y.data<float>()[2]));
}

TEST_F(CwiseGradOpsTest, LargeInputsRunOnThePool) {
  const int n = 100000;
  Tensor y(DT_FLOAT, {n}), dy(DT_FLOAT, {n});
  for (int i = 0; i < n; ++i) {
    y.data<float>()[i] = 0.5f;
    dy.data<float>()[i] = static_cast<float>(i % 7);
  }
  ASSERT_OK(Run<float>("SigmoidGrad", {y, dy}));
  for (int i = 0; i < n; i += 997) EXPECT_FLOAT_EQ(GetOutput(0).data<float>()[i], (i % 7) * 0.25f);
}

TEST_F(CwiseGradOpsTest, ShapesMustMatch) {
  EXPECT_STATUS(Run<float>("TanhGrad", {Tensor(DT_FLOAT, {2}), Tensor(DT_FLOAT, {3})}),
                kInvalidArgument, "y and dy must have the same shape, got [2] and [3]");
}

TEST_F(CwiseGradOpsTest, ShapeFunctionKeepsYsShape) {
  EXPECT_EQ(InferShapes("SigmoidGrad", {PartialTensorShape({2, -1}), PartialTensorShape({2, 3})}),
            std::vector<std::string>{"[2,?]"});
}

}  // namespace
}  // namespace tensorgrid
