#include <cmath>

#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// softmax([1, 2, 3]) and log(sum(exp([1, 2, 3] - 3))).
constexpr double kP0 = 0.09003057317038046, kP1 = 0.24472847105479764, kP2 = 0.6652409557748218;
constexpr double kLogSum = 0.4076059644443804;
const float kLog3 = std::log(3.0f);

class SoftmaxXentTest : public OpsTestBase {
 protected:
  absl::Status MakeXent(DataType t) {
    return MakeOp(NodeDefBuilder("x", "SoftmaxCrossEntropyWithLogits").Attr("T", t));
  }
};

TEST_F(SoftmaxXentTest, OneHotAndSoftLabels) {
  ASSERT_OK(MakeXent(DT_FLOAT));
  AddInput(Tensor::FromVector<float>({1, 2, 3, 1, 2, 3, 0, 0, 0}, {3, 3}));
  AddInput(Tensor::FromVector<float>({0, 0, 1, 0.5, 0.5, 0, 1, 0, 0}, {3, 3}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<float>(GetOutput(0), {kLogSum, kLogSum + 1.5, kLog3}, {3});
  ExpectTensorNear<float>(
      GetOutput(1), {kP0, kP1, kP2 - 1, kP0 - 0.5, kP1 - 0.5, kP2, 1 / 3. - 1, 1 / 3., 1 / 3.},
      {3, 3});
}

TEST_F(SoftmaxXentTest, LargeLogitsAreStable) {
  ASSERT_OK(MakeXent(DT_DOUBLE));
  AddInput(Tensor::FromVector<double>({1001, 1002, 1003}, {1, 3}));
  AddInput(Tensor::FromVector<double>({1, 0, 0}, {1, 3}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<double>(GetOutput(0), {kLogSum + 2}, {1}, 1e-12);
  ExpectTensorNear<double>(GetOutput(1), {kP0 - 1, kP1, kP2}, {1, 3}, 1e-12);
}

TEST_F(SoftmaxXentTest, LabelsBroadcastOverTheBatch) {
  ASSERT_OK(MakeXent(DT_FLOAT));
  AddInput(Tensor::FromVector<float>({1, 2, 3, 0, 0, 0}, {2, 3}));
  AddInput(Tensor::FromVector<float>({0, 0, 1}, {1, 3}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<float>(GetOutput(0), {kLogSum, kLog3}, {2});
  ExpectTensorNear<float>(GetOutput(1), {kP0, kP1, kP2 - 1, 1 / 3., 1 / 3., 1 / 3. - 1}, {2, 3});
}

TEST_F(SoftmaxXentTest, EmptyBatch) {
  ASSERT_OK(MakeXent(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({0, 3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({0, 3})));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0}));
  EXPECT_EQ(GetOutput(1).shape(), TensorShape({0, 3}));
}

TEST_F(SoftmaxXentTest, ShapesMustBroadcast) {
  ASSERT_OK(MakeXent(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 4})));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "logits and labels must be broadcastable, got logits shape [2,3] and labels shape "
                "[2,4]");
}

TEST_F(SoftmaxXentTest, InputsMustBeMatrices) {
  ASSERT_OK(MakeXent(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({3})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "logits and labels must be 2-D, got logits shape [3]");
}

class SparseSoftmaxXentTest : public OpsTestBase {
 protected:
  absl::Status MakeXent(DataType t, DataType tlabels) {
    return MakeOp(NodeDefBuilder("x", "SparseSoftmaxCrossEntropyWithLogits")
                      .Attr("T", t)
                      .Attr("Tlabels", tlabels));
  }
};

TEST_F(SparseSoftmaxXentTest, Int64LabelsByDefault) {
  ASSERT_OK(MakeOp(NodeDefBuilder("x", "SparseSoftmaxCrossEntropyWithLogits").Attr("T", DT_FLOAT)));
  EXPECT_EQ(kernel_->input_type(1), DT_INT64);
  AddInput(Tensor::FromVector<float>({1, 2, 3, 0, 0, 0}, {2, 3}));
  AddInput(Tensor::FromVector<int64_t>({2, 0}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<float>(GetOutput(0), {kLogSum, kLog3}, {2});
  ExpectTensorNear<float>(GetOutput(1), {kP0, kP1, kP2 - 1, 1 / 3. - 1, 1 / 3., 1 / 3.}, {2, 3});
}

TEST_F(SparseSoftmaxXentTest, Int32LabelsAndDoubles) {
  ASSERT_OK(MakeXent(DT_DOUBLE, DT_INT32));
  AddInput(Tensor::FromVector<double>({1001, 1002, 1003}, {1, 3}));
  AddInput(Tensor::FromVector<int32_t>({1}, {1}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<double>(GetOutput(0), {kLogSum + 1}, {1}, 1e-12);
  ExpectTensorNear<double>(GetOutput(1), {kP0, kP1 - 1, kP2}, {1, 3}, 1e-12);
}

TEST_F(SparseSoftmaxXentTest, LabelOutOfRangeNamesValueAndClassCount) {
  ASSERT_OK(MakeXent(DT_FLOAT, DT_INT32));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::FromVector<int32_t>({0, 3}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "Received a label value of 3 which is outside the valid range of [0, 3)");
}

TEST_F(SparseSoftmaxXentTest, NegativeLabel) {
  ASSERT_OK(MakeXent(DT_FLOAT, DT_INT64));
  AddInput(Tensor(DT_FLOAT, TensorShape({1, 4})));
  AddInput(Tensor::FromVector<int64_t>({-1}, {1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "label value of -1 which is outside the valid range of [0, 4)");
}

TEST_F(SparseSoftmaxXentTest, ShapeErrors) {
  ASSERT_OK(MakeXent(DT_FLOAT, DT_INT32));
  AddInput(Tensor(DT_FLOAT, TensorShape({3})));
  AddInput(Tensor(DT_INT32, TensorShape({3})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "logits must be 2-D, but got shape [3]");

  inputs_.clear();
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor(DT_INT32, TensorShape({2, 1})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "labels must be 1-D, but got shape [2,1]");

  inputs_.clear();
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor(DT_INT32, TensorShape({3})));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "same first dimension, got logits shape [2,3] and labels shape [3]");

  inputs_.clear();
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 0})));
  AddInput(Tensor::FromVector<int32_t>({0, 0}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "Must have at least one class, but got logits shape [2,0]");
}

TEST_F(SparseSoftmaxXentTest, FloatLabelsAreNotAllowed) {
  EXPECT_STATUS(MakeXent(DT_FLOAT, DT_FLOAT), kInvalidArgument, "Tlabels");
}

TEST(CrossEntropyShapeFnTest, LossIsPerRow) {
  EXPECT_EQ(InferShapes("SoftmaxCrossEntropyWithLogits",
                        {PartialTensorShape({2, 3}), PartialTensorShape({1, 3})}),
            (std::vector<std::string>{"[2]", "[2,3]"}));
  EXPECT_EQ(InferShapes("SparseSoftmaxCrossEntropyWithLogits",
                        {PartialTensorShape({-1, 5}), PartialTensorShape({4})}),
            (std::vector<std::string>{"[4]", "[4,5]"}));
}

}  // namespace
}  // namespace tensorgrid
