#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class BroadcastToTest : public OpsTestBase {
 protected:
  absl::Status Run(Tensor input, std::vector<int32_t> shape) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("b", "BroadcastTo").Attr("T", input.dtype())));
    AddInput(std::move(input));
    AddInput(Tensor::FromVector<int32_t>(shape, {static_cast<int64_t>(shape.size())}));
    return RunOp();
  }
};

TEST_F(BroadcastToTest, RowToMatrix) {
  ASSERT_OK(Run(Tensor::FromVector<float>({1, 2, 3}, {3}), {2, 3}));
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3, 1, 2, 3}, {2, 3});
}

TEST_F(BroadcastToTest, ColumnToMatrixAndMiddleDimension) {
  ASSERT_OK(Run(Tensor::FromVector<double>({1, 2}, {2, 1}), {2, 3}));
  ExpectTensorEqual<double>(GetOutput(0), {1, 1, 1, 2, 2, 2}, {2, 3});
  inputs_.clear();
  ASSERT_OK(Run(Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 1, 2}), {2, 2, 2}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 2, 1, 2, 3, 4, 3, 4}, {2, 2, 2});
}

TEST_F(BroadcastToTest, ScalarAndSameShape) {
  ASSERT_OK(Run(Tensor::Scalar<int64_t>(7), {2, 2}));
  ExpectTensorEqual<int64_t>(GetOutput(0), {7, 7, 7, 7}, {2, 2});
  inputs_.clear();
  Tensor x = Tensor::FromVector<float>({1, 2}, {2});
  ASSERT_OK(Run(x, {2}));
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(x));
}

TEST_F(BroadcastToTest, StringsAndEmpty) {
  ASSERT_OK(Run(Tensor::FromVector<std::string>({"a", "b"}, {1, 2}), {2, 2}));
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "b", "a", "b"}, {2, 2});
  inputs_.clear();
  ASSERT_OK(Run(Tensor(DT_FLOAT, {1, 3}), {0, 3}));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0, 3}));
}

TEST_F(BroadcastToTest, LargeOutputRunsOnThePool) {
  Tensor row(DT_FLOAT, {100});
  for (int i = 0; i < 100; ++i) row.data<float>()[i] = i;
  ASSERT_OK(Run(row, {1000, 100}));
  const float* out = GetOutput(0).data<float>();
  for (int i = 0; i < 100000; i += 777) EXPECT_EQ(out[i], i % 100);
}

TEST_F(BroadcastToTest, IncompatibleShapes) {
  EXPECT_STATUS(Run(Tensor(DT_FLOAT, {2, 3}), {4, 3}), kInvalidArgument,
                "Unable to broadcast tensor of shape [2,3] to tensor of shape [4,3]");
  inputs_.clear();
  EXPECT_STATUS(Run(Tensor(DT_FLOAT, {2, 3}), {3}), kInvalidArgument,
                "Unable to broadcast tensor of shape [2,3] to tensor of shape [3]");
}

}  // namespace
}  // namespace tensorgrid
