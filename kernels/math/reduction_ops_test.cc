#include <cmath>
#include <limits>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class ReductionOpsTest : public OpsTestBase {
 protected:
  template <typename T, typename Tidx = int32_t>
  absl::Status Run(const std::string& op, Tensor input, std::vector<Tidx> axes,
                   bool keep_dims = false, bool axes_as_scalar = false) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("r", op)
                                  .Attr("T", DataTypeToEnum<T>::value)
                                  .Attr("Tidx", DataTypeToEnum<Tidx>::value)
                                  .Attr("keep_dims", keep_dims)));
    AddInput(std::move(input));
    if (axes_as_scalar) {
      AddInput(Tensor::Scalar<Tidx>(axes[0]));
    } else {
      AddInput(Tensor::FromVector<Tidx>(axes, {static_cast<int64_t>(axes.size())}));
    }
    return RunOp();
  }
};

// [[1,2,3],[4,5,6]]
Tensor Matrix() { return Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i % 97);
  return t;
}

TEST_F(ReductionOpsTest, SumRowsAndColumns) {
  ASSERT_OK(Run<float>("Sum", Matrix(), {0}));
  ExpectTensorEqual<float>(GetOutput(0), {5, 7, 9}, {3});
  inputs_.clear();
  ASSERT_OK(Run<float>("Sum", Matrix(), {1}));
  ExpectTensorEqual<float>(GetOutput(0), {6, 15}, {2});
}

TEST_F(ReductionOpsTest, SumAllToScalar) {
  ASSERT_OK(Run<float>("Sum", Matrix(), {0, 1}));
  ExpectTensorEqual<float>(GetOutput(0), {21}, {});
}

TEST_F(ReductionOpsTest, KeepDims) {
  ASSERT_OK(Run<float>("Sum", Matrix(), {1}, /*keep_dims=*/true));
  ExpectTensorEqual<float>(GetOutput(0), {6, 15}, {2, 1});
  inputs_.clear();
  ASSERT_OK(Run<float>("Max", Matrix(), {0, 1}, /*keep_dims=*/true));
  ExpectTensorEqual<float>(GetOutput(0), {6}, {1, 1});
}

TEST_F(ReductionOpsTest, NegativeAndScalarAxis) {
  ASSERT_OK(Run<float>("Sum", Matrix(), {-1}, false, /*axes_as_scalar=*/true));
  ExpectTensorEqual<float>(GetOutput(0), {6, 15}, {2});
  inputs_.clear();
  ASSERT_OK(Run<float>("Sum", Matrix(), {-2}, /*keep_dims=*/true));
  ExpectTensorEqual<float>(GetOutput(0), {5, 7, 9}, {1, 3});
}

TEST_F(ReductionOpsTest, DuplicateAxesCountOnce) {
  ASSERT_OK(Run<float>("Sum", Matrix(), {1, -1, 1}));
  ExpectTensorEqual<float>(GetOutput(0), {6, 15}, {2});
}

TEST_F(ReductionOpsTest, Int64Axes) {
  ASSERT_OK((Run<int64_t, int64_t>("Sum", Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 2}), {0})));
  ExpectTensorEqual<int64_t>(GetOutput(0), {4, 6}, {2});
}

TEST_F(ReductionOpsTest, OuterAndInnerAxesOfRankThree) {
  // Axes {0, 2} of [2,3,4] leave two reduced groups around a kept one.
  const Tensor x = Iota({2, 3, 4});
  ASSERT_OK(Run<float>("Sum", x, {0, 2}, /*keep_dims=*/true));
  std::vector<float> want(3, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want[j] += x.data<float>()[(i * 3 + j) * 4 + k];
  ExpectTensorEqual<float>(GetOutput(0), want, {1, 3, 1});
}

TEST_F(ReductionOpsTest, MiddleAxisOfRankFour) {
  const Tensor x = Iota({2, 3, 4, 5});
  ASSERT_OK(Run<float>("Max", x, {1, 3}));
  std::vector<float> want(8, -1);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 5; ++l)
          want[i * 4 + k] =
              std::max(want[i * 4 + k], x.data<float>()[((i * 3 + j) * 4 + k) * 5 + l]);
  ExpectTensorEqual<float>(GetOutput(0), want, {2, 4});
}

TEST_F(ReductionOpsTest, LargeReductionsRunOnThePool) {
  const Tensor x = Iota({300, 200});
  std::vector<float> rows(300, 0), cols(200, 0);
  double total = 0;
  for (int r = 0; r < 300; ++r)
    for (int c = 0; c < 200; ++c) {
      rows[r] += x.data<float>()[r * 200 + c];
      cols[c] += x.data<float>()[r * 200 + c];
      total += x.data<float>()[r * 200 + c];
    }
  ASSERT_OK(Run<float>("Sum", x, {1}));
  ExpectTensorNear<float>(GetOutput(0), rows, {300}, 1e-2);
  inputs_.clear();
  ASSERT_OK(Run<float>("Sum", x, {0}));
  ExpectTensorNear<float>(GetOutput(0), cols, {200}, 1e-2);
  inputs_.clear();
  ASSERT_OK(Run<float>("Mean", x, {0, 1}));
  ExpectTensorNear<float>(GetOutput(0), {static_cast<float>(total / 60000)}, {}, 1e-3);
}

TEST_F(ReductionOpsTest, MeanFloatAndInteger) {
  ASSERT_OK(Run<float>("Mean", Matrix(), {1}));
  ExpectTensorEqual<float>(GetOutput(0), {2, 5}, {2});
  inputs_.clear();
  // Integer means truncate, as integer division does.
  ASSERT_OK(Run<int32_t>("Mean", Tensor::FromVector<int32_t>({1, 2, 4, -1, -2, -4}, {2, 3}), {1}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {2, -2}, {2});
}

TEST_F(ReductionOpsTest, MaxIntegersAndNaN) {
  ASSERT_OK(Run<int64_t>("Max", Tensor::FromVector<int64_t>({-5, -9, 3, -1}, {2, 2}), {1}));
  ExpectTensorEqual<int64_t>(GetOutput(0), {-5, 3}, {2});
  inputs_.clear();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_OK(Run<float>("Max", Tensor::FromVector<float>({1, nan, 3, 2}, {2, 2}), {1}));
  EXPECT_TRUE(std::isnan(GetOutput(0).data<float>()[0]));
  EXPECT_EQ(GetOutput(0).data<float>()[1], 3);
}

TEST_F(ReductionOpsTest, EmptyReductionsGiveIdentities) {
  ASSERT_OK(Run<float>("Sum", Tensor(DT_FLOAT, {0, 3}), {0}));
  ExpectTensorEqual<float>(GetOutput(0), {0, 0, 0}, {3});
  inputs_.clear();
  ASSERT_OK(Run<float>("Max", Tensor(DT_FLOAT, {2, 0}), {1}));
  ExpectTensorEqual<float>(
      GetOutput(0),
      {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}, {2});
  inputs_.clear();
  ASSERT_OK(Run<float>("Mean", Tensor(DT_FLOAT, {0}), {0}));
  EXPECT_TRUE(std::isnan(GetOutput(0).data<float>()[0]));
  inputs_.clear();
  ASSERT_OK(Run<int32_t>("Mean", Tensor(DT_INT32, {0}), {0}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0}, {});
}

TEST_F(ReductionOpsTest, NoAxesOrSizeOneAxesAreAReshape) {
  ASSERT_OK(Run<float>("Sum", Matrix(), {}));
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(inputs_[0].tensor));
  inputs_.clear();
  ASSERT_OK(Run<float>("Mean", Tensor::FromVector<float>({1, 2, 3}, {1, 3}), {0}));
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3}, {3});
}

TEST_F(ReductionOpsTest, AxisOutOfRange) {
  EXPECT_STATUS(Run<float>("Sum", Matrix(), {2}), kInvalidArgument,
                "Invalid reduction dimension (2 for input with 2 dimension(s))");
  inputs_.clear();
  EXPECT_STATUS(Run<float>("Max", Matrix(), {-3}), kInvalidArgument,
                "Invalid reduction dimension (-3");
  inputs_.clear();
  EXPECT_STATUS(Run<float>("Mean", Tensor::Scalar<float>(1), {0}), kInvalidArgument,
                "for input with 0 dimension(s)");
}

TEST_F(ReductionOpsTest, AxesMustBeAVectorAtMost) {
  ASSERT_OK(MakeOp(NodeDefBuilder("r", "Sum").Attr("T", DT_FLOAT)));
  AddInput(Matrix());
  AddInput(Tensor::FromVector<int32_t>({0, 1}, {1, 2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "reduction_indices must be a scalar or a vector");
}

}  // namespace
}  // namespace tensorgrid
