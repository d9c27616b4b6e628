#include <cmath>
#include <random>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class SoftmaxTest : public OpsTestBase {};

TEST_F(SoftmaxTest, Matrix) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_FLOAT)));
  AddInput(Tensor::FromVector<float>({1, 2, 3, 0, 0, 0}, {2, 3}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<float>(GetOutput(0),
                          {0.0900305732f, 0.2447284711f, 0.6652409558f, 1 / 3.f, 1 / 3.f, 1 / 3.f},
                          {2, 3});
}

TEST_F(SoftmaxTest, LargeLogitsAreStable) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_DOUBLE)));
  AddInput(Tensor::FromVector<double>({1000, 1001, 1002, -1000, -1000, -1000}, {2, 3}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<double>(
      GetOutput(0),
      {0.09003057317038046, 0.24472847105479764, 0.6652409557748218, 1 / 3., 1 / 3., 1 / 3.},
      {2, 3}, 1e-12);
}

TEST_F(SoftmaxTest, VectorAndRank3UseTheLastDimension) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_FLOAT)));
  AddInput(Tensor::FromVector<float>({1, 2, 3}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorNear<float>(GetOutput(0), {0.0900305732f, 0.2447284711f, 0.6652409558f}, {3});

  inputs_.clear();
  AddInput(Tensor::FromVector<float>({0, 0, 5, 5, 1, 2, 3, 4}, {2, 2, 2}));
  ASSERT_OK(RunOp());
  const float a = 1 / (1 + std::exp(1.f));  // softmax([x, x+1])[0]
  ExpectTensorNear<float>(GetOutput(0), {0.5, 0.5, 0.5, 0.5, a, 1 - a, a, 1 - a}, {2, 2, 2});
}

TEST_F(SoftmaxTest, ManyRowsInParallel) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_FLOAT)));
  const int64_t rows = 300, classes = 1000;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0, 5);
  std::vector<float> x(rows * classes);
  for (float& v : x) v = dist(rng);
  AddInput(Tensor::FromVector<float>(x, TensorShape({rows, classes})));
  ASSERT_OK(RunOp());
  const float* y = GetOutput(0).data<float>();
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double max = x[r * classes], sum = 0;
    for (int64_t k = 0; k < classes; ++k) max = std::max<double>(max, x[r * classes + k]);
    for (int64_t k = 0; k < classes; ++k) sum += std::exp(x[r * classes + k] - max);
    for (int64_t k = 0; k < classes; ++k) {
      double want = std::exp(x[r * classes + k] - max) / sum;
      worst = std::max(worst, std::abs(want - y[r * classes + k]));
    }
  }
  EXPECT_LT(worst, 1e-6);
}

TEST_F(SoftmaxTest, EmptyRows) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_FLOAT)));
  AddInput(Tensor(DT_FLOAT, TensorShape({4, 0})));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({4, 0}));
}

TEST_F(SoftmaxTest, ScalarIsRejected) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_FLOAT)));
  AddInput(Tensor::Scalar<float>(1));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "logits must have >= 1 dimension, got shape []");
}

TEST_F(SoftmaxTest, IntegersAreNotAllowed) {
  EXPECT_STATUS(MakeOp(NodeDefBuilder("s", "Softmax").Attr("T", DT_INT32)), kInvalidArgument,
                "not one of the allowed types");
}

}  // namespace
}  // namespace tensorgrid
