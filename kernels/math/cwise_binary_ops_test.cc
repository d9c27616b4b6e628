#include <cmath>
#include <limits>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class BinaryOpsTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(const std::string& op, Tensor x, Tensor y) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("n", op).Attr("T", DataTypeToEnum<T>::value)));
    AddInput(std::move(x));
    AddInput(std::move(y));
    return RunOp();
  }
};

// A [rows, cols] tensor counting up from `start` in steps of `step`.
Tensor Iota(const TensorShape& shape, float start, float step) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = start + step * i;
  return t;
}

TEST_F(BinaryOpsTest, AddSameShape) {
  ASSERT_OK(Run<float>("Add", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}),
                       Tensor::FromVector<float>({10, 20, 30, 40}, {2, 2})));
  ExpectTensorEqual<float>(GetOutput(0), {11, 22, 33, 44}, {2, 2});
}

TEST_F(BinaryOpsTest, AddV2Int64) {
  ASSERT_OK(Run<int64_t>("AddV2", Tensor::FromVector<int64_t>({1, -2, int64_t{1} << 40}, {3}),
                         Tensor::FromVector<int64_t>({5, 5, 5}, {3})));
  ExpectTensorEqual<int64_t>(GetOutput(0), {6, 3, (int64_t{1} << 40) + 5}, {3});
}

TEST_F(BinaryOpsTest, AddMatrixAndRowVector) {
  ASSERT_OK(Run<float>("Add", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                       Tensor::FromVector<float>({10, 20, 30}, {3})));
  ExpectTensorEqual<float>(GetOutput(0), {11, 22, 33, 14, 25, 36}, {2, 3});
}

TEST_F(BinaryOpsTest, AddColumnAndRow) {
  ASSERT_OK(Run<int32_t>("Add", Tensor::FromVector<int32_t>({1, 2}, {2, 1}),
                         Tensor::FromVector<int32_t>({10, 20, 30}, {1, 3})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {11, 21, 31, 12, 22, 32}, {2, 3});
}

TEST_F(BinaryOpsTest, ScalarMinusVector) {
  ASSERT_OK(
      Run<float>("Sub", Tensor::Scalar<float>(10), Tensor::FromVector<float>({1, 2, 3}, {3})));
  ExpectTensorEqual<float>(GetOutput(0), {9, 8, 7}, {3});
}

TEST_F(BinaryOpsTest, VectorMinusScalar) {
  ASSERT_OK(
      Run<double>("Sub", Tensor::FromVector<double>({1, 2, 3}, {3}), Tensor::Scalar<double>(1)));
  ExpectTensorEqual<double>(GetOutput(0), {0, 1, 2}, {3});
}

TEST_F(BinaryOpsTest, ScalarTimesScalar) {
  ASSERT_OK(Run<int32_t>("Mul", Tensor::Scalar<int32_t>(6), Tensor::Scalar<int32_t>(7)));
  ExpectTensorEqual<int32_t>(GetOutput(0), {42}, {});
}

TEST_F(BinaryOpsTest, OneElementOfHigherRankTakesBroadcastShape) {
  ASSERT_OK(Run<float>("Mul", Tensor::FromVector<float>({2, 3, 4}, {3}),
                       Tensor::FromVector<float>({10}, {1, 1})));
  ExpectTensorEqual<float>(GetOutput(0), {20, 30, 40}, {1, 3});
}

TEST_F(BinaryOpsTest, RankFourBroadcastOnBothSides) {
  // x[i,0,k,0] * y[0,j,0,l] for x of shape [2,1,3,1] and y of shape [1,2,1,2].
  const Tensor x = Iota({2, 1, 3, 1}, 1, 1);
  const Tensor y = Iota({1, 2, 1, 2}, 10, 10);
  ASSERT_OK(Run<float>("Mul", x, y));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 2; ++l)
          want.push_back(x.data<float>()[i * 3 + k] * y.data<float>()[j * 2 + l]);
  ExpectTensorEqual<float>(GetOutput(0), want, {2, 2, 3, 2});
}

TEST_F(BinaryOpsTest, LargeBroadcastRunsOnThePool) {
  const Tensor x = Iota({300, 100}, 0, 1);
  const Tensor y = Iota({100}, 0, 0.5f);
  ASSERT_OK(Run<float>("Sub", x, y));
  std::vector<float> want(30000);
  for (int r = 0; r < 300; ++r)
    for (int c = 0; c < 100; ++c)
      want[r * 100 + c] = x.data<float>()[r * 100 + c] - y.data<float>()[c];
  ExpectTensorEqual<float>(GetOutput(0), want, {300, 100});
}

TEST_F(BinaryOpsTest, LargeColumnBroadcastRunsOnThePool) {
  const Tensor x = Iota({1000, 1}, 0, 1);
  const Tensor y = Iota({1, 50}, 0, 1000);
  ASSERT_OK(Run<float>("Add", x, y));
  std::vector<float> want(50000);
  for (int r = 0; r < 1000; ++r)
    for (int c = 0; c < 50; ++c) want[r * 50 + c] = r + 1000.0f * c;
  ExpectTensorEqual<float>(GetOutput(0), want, {1000, 50});
}

TEST_F(BinaryOpsTest, LargeSameShapeAndScalar) {
  const Tensor x = Iota({40000}, 0, 1);
  ASSERT_OK(Run<float>("Mul", x, Iota({40000}, 0, 2)));
  std::vector<float> want(40000);
  for (int i = 0; i < 40000; ++i) want[i] = 2.0f * i * i;
  ExpectTensorEqual<float>(GetOutput(0), want, {40000});

  inputs_.clear();
  ASSERT_OK(Run<float>("RealDiv", x, Tensor::Scalar<float>(4)));
  for (int i = 0; i < 40000; ++i) want[i] = i / 4.0f;
  ExpectTensorEqual<float>(GetOutput(0), want, {40000});
}

TEST_F(BinaryOpsTest, EmptyBroadcast) {
  ASSERT_OK(Run<float>("Add", Tensor(DT_FLOAT, {0, 3}), Tensor::FromVector<float>({1, 2, 3}, {3})));
  ExpectTensorEqual<float>(GetOutput(0), {}, {0, 3});
}

TEST_F(BinaryOpsTest, IncompatibleShapesNameBoth) {
  EXPECT_STATUS(Run<float>("Add", Tensor(DT_FLOAT, {2, 3}), Tensor(DT_FLOAT, {4})),
                kInvalidArgument, "Incompatible shapes: [2,3] vs. [4]");
}

TEST_F(BinaryOpsTest, UnregisteredTypeHasNoKernel) {
  EXPECT_STATUS(MakeOp(NodeDefBuilder("n", "Add").Attr("T", DT_UINT8)), kUnimplemented, "Add");
}

TEST_F(BinaryOpsTest, WritesIntoAnInputNobodyElseHolds) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3}, {3});
  ASSERT_OK(Run<float>("Add", Tensor::Scalar<float>(1), x));
  // The test still holds x, so the kernel must not write into it.
  EXPECT_FALSE(GetOutput(0).SharesBufferWith(x));
  ExpectTensorEqual<float>(x, {1, 2, 3}, {3});

  inputs_.clear();
  ASSERT_OK(Run<float>("Add", Tensor::Scalar<float>(1), Tensor::FromVector<float>({1, 2, 3}, {3})));
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(inputs_[1].tensor));
  ExpectTensorEqual<float>(GetOutput(0), {2, 3, 4}, {3});
}

TEST_F(BinaryOpsTest, RealDivFloat) {
  ASSERT_OK(Run<float>("RealDiv", Tensor::FromVector<float>({1, 3, 1}, {3}),
                       Tensor::FromVector<float>({4, 2, 0}, {3})));
  ExpectTensorEqual<float>(GetOutput(0), {0.25f, 1.5f, std::numeric_limits<float>::infinity()},
                           {3});
}

TEST_F(BinaryOpsTest, RealDivIntegerTruncatesTowardZero) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  ASSERT_OK(Run<int32_t>("RealDiv", Tensor::FromVector<int32_t>({7, -7, 7, min}, {4}),
                         Tensor::FromVector<int32_t>({2, 2, -2, -1}, {4})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {3, -3, -3, min}, {4});
}

TEST_F(BinaryOpsTest, RealDivIntegerByZeroFails) {
  EXPECT_STATUS(Run<int64_t>("RealDiv", Tensor::FromVector<int64_t>({1, 2}, {2}),
                             Tensor::FromVector<int64_t>({1, 0}, {2})),
                kInvalidArgument, "Integer division by zero");
}

TEST_F(BinaryOpsTest, MaximumAndMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_OK(Run<float>("Maximum", Tensor::FromVector<float>({1, 5, nan, 2}, {4}),
                       Tensor::FromVector<float>({3, 4, 1, nan}, {4})));
  const Tensor& max = GetOutput(0);
  EXPECT_EQ(max.data<float>()[0], 3);
  EXPECT_EQ(max.data<float>()[1], 5);
  EXPECT_TRUE(std::isnan(max.data<float>()[2]));
  EXPECT_TRUE(std::isnan(max.data<float>()[3]));

  inputs_.clear();
  ASSERT_OK(
      Run<float>("Minimum", Tensor::FromVector<float>({1, 5, nan}, {3}), Tensor::Scalar<float>(2)));
  const Tensor& min = GetOutput(0);
  EXPECT_EQ(min.data<float>()[0], 1);
  EXPECT_EQ(min.data<float>()[1], 2);
  EXPECT_TRUE(std::isnan(min.data<float>()[2]));
}

TEST_F(BinaryOpsTest, MaximumMinimumIntegersBroadcast) {
  ASSERT_OK(Run<int64_t>("Maximum", Tensor::FromVector<int64_t>({1, 9, -3, 4}, {2, 2}),
                         Tensor::FromVector<int64_t>({2, 3}, {2})));
  ExpectTensorEqual<int64_t>(GetOutput(0), {2, 9, 2, 4}, {2, 2});
  inputs_.clear();
  ASSERT_OK(Run<int32_t>("Minimum", Tensor::FromVector<int32_t>({2, 3}, {2, 1}),
                         Tensor::FromVector<int32_t>({1, 9, -3, 4}, {2, 2})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 2, -3, 3}, {2, 2});
}

TEST_F(BinaryOpsTest, EqualProducesBool) {
  ASSERT_OK(Run<float>("Equal", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                       Tensor::FromVector<float>({1, 5, 6}, {3})));
  ExpectTensorEqual<bool>(GetOutput(0), {true, false, false, false, true, true}, {2, 3});
}

TEST_F(BinaryOpsTest, EqualOnBoolsAndScalars) {
  ASSERT_OK(
      Run<bool>("Equal", Tensor::FromVector<bool>({true, false}, {2}), Tensor::Scalar<bool>(true)));
  ExpectTensorEqual<bool>(GetOutput(0), {true, false}, {2});
  inputs_.clear();
  ASSERT_OK(
      Run<int64_t>("Equal", Tensor::Scalar<int64_t>(3), Tensor::FromVector<int64_t>({3, 4}, {2})));
  ExpectTensorEqual<bool>(GetOutput(0), {true, false}, {2});
}

TEST_F(BinaryOpsTest, EqualIncompatibleShapes) {
  EXPECT_STATUS(Run<int32_t>("Equal", Tensor(DT_INT32, {2}), Tensor(DT_INT32, {3})),
                kInvalidArgument, "Incompatible shapes: [2] vs. [3]");

  inputs_.clear();
  ASSERT_OK(MakeOp(
      NodeDefBuilder("n", "Equal").Attr("T", DT_INT32).Attr("incompatible_shape_error", false)));
  AddInput(Tensor(DT_INT32, {2}));
  AddInput(Tensor(DT_INT32, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {false}, {});
}

}  // namespace
}  // namespace tensorgrid
