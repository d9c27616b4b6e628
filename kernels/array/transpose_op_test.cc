#include <numeric>

#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class TransposeTest : public OpsTestBase {
 protected:
  absl::Status MakeTranspose(DataType t, DataType tperm = DT_INT32) {
    return MakeOp(NodeDefBuilder("t", "Transpose").Attr("T", t).Attr("Tperm", tperm));
  }
};

TEST_F(TransposeTest, Matrix) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  AddInput(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  AddInput(Tensor::FromVector<int32_t>({1, 0}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1, 4, 2, 5, 3, 6}, {3, 2});
}

TEST_F(TransposeTest, Rank3WithInt64Perm) {
  ASSERT_OK(MakeTranspose(DT_INT64, DT_INT64));
  // x[i][j][k] = 100i + 10j + k, shape [2, 3, 4]; y = transpose(x, [2, 0, 1]).
  std::vector<int64_t> x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) x.push_back(100 * i + 10 * j + k);
  AddInput(Tensor::FromVector<int64_t>(x, TensorShape({2, 3, 4})));
  AddInput(Tensor::FromVector<int64_t>({2, 0, 1}, {3}));
  ASSERT_OK(RunOp());
  std::vector<int64_t> want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(100 * i + 10 * j + k);
  ExpectTensorEqual<int64_t>(GetOutput(0), want, {4, 2, 3});
}

TEST_F(TransposeTest, LargeTensorInParallelMatchesReference) {
  ASSERT_OK(MakeTranspose(DT_INT32));
  const int64_t a = 37, b = 61, c = 53;
  std::vector<int32_t> x(a * b * c);
  std::iota(x.begin(), x.end(), 0);
  AddInput(Tensor::FromVector<int32_t>(x, TensorShape({a, b, c})));
  AddInput(Tensor::FromVector<int32_t>({1, 2, 0}, {3}));
  ASSERT_OK(RunOp());
  const Tensor& y = GetOutput(0);
  ASSERT_EQ(y.shape(), TensorShape({b, c, a}));
  int mismatches = 0;
  for (int64_t j = 0; j < b; ++j)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < a; ++i) {
        mismatches += y.data<int32_t>()[(j * c + k) * a + i] != x[(i * b + j) * c + k];
      }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(TransposeTest, DoublesBoolsAndStrings) {
  ASSERT_OK(MakeTranspose(DT_DOUBLE));
  AddInput(Tensor::FromVector<double>({1.5, 2.5}, {2, 1}));
  AddInput(Tensor::FromVector<int32_t>({1, 0}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<double>(GetOutput(0), {1.5, 2.5}, {1, 2});

  inputs_.clear();
  ASSERT_OK(MakeTranspose(DT_BOOL));
  AddInput(Tensor::FromVector<bool>({true, true, false, false}, {2, 2}));
  AddInput(Tensor::FromVector<int32_t>({1, 0}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true, false, true, false}, {2, 2});

  inputs_.clear();
  ASSERT_OK(MakeTranspose(DT_STRING));
  AddInput(Tensor::FromVector<std::string>(std::vector<std::string>{"a", "b", "c", "d", "e", "f"},
                                           TensorShape({3, 2})));
  AddInput(Tensor::FromVector<int32_t>({1, 0}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "c", "e", "b", "d", "f"}, {2, 3});
}

TEST_F(TransposeTest, IdentityPermutationSharesTheBuffer) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  Tensor in = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  AddInput(in);
  AddInput(Tensor::FromVector<int32_t>({0, 1}, {2}));
  ASSERT_OK(RunOp());
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(in));
}

TEST_F(TransposeTest, ScalarAndEmpty) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  AddInput(Tensor::Scalar<float>(3));
  AddInput(Tensor(DT_INT32, TensorShape({0})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {3}, TensorShape());

  inputs_.clear();
  AddInput(Tensor(DT_FLOAT, TensorShape({0, 3})));
  AddInput(Tensor::FromVector<int32_t>({1, 0}, {2}));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({3, 0}));
}

TEST_F(TransposeTest, PermOfWrongSize) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::FromVector<int32_t>({0, 1, 2}, {3}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "expects a vector of size 2");
}

TEST_F(TransposeTest, PermOutOfRange) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::FromVector<int32_t>({0, 2}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "perm[1] = 2 is out of range [0, 2)");
}

TEST_F(TransposeTest, PermWithDuplicate) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::FromVector<int32_t>({1, 1}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "perm [1,1] names dimension 1 twice");
}

TEST_F(TransposeTest, PermMustBeAVector) {
  ASSERT_OK(MakeTranspose(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::Scalar<int32_t>(0));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "perm must be a vector");
}

TEST(TransposeShapeFnTest, KeepsTheRank) {
  EXPECT_EQ(InferShapes("Transpose", {PartialTensorShape({2, 3}), PartialTensorShape({2})}),
            std::vector<std::string>{"[?,?]"});
  EXPECT_EQ(InferShapes("Transpose", {PartialTensorShape({5}), PartialTensorShape({1})}),
            std::vector<std::string>{"[5]"});
}

}  // namespace
}  // namespace tensorgrid
