#include <numeric>

#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class ConcatV2Test : public OpsTestBase {
 protected:
  absl::Status MakeConcat(DataType t, int n, DataType tidx = DT_INT32) {
    return MakeOp(NodeDefBuilder("c", "ConcatV2").Attr("T", t).Attr("N", n).Attr("Tidx", tidx));
  }
};

TEST_F(ConcatV2Test, AlongRows) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 2));
  AddInput(Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  AddInput(Tensor::FromVector<float>({5, 6}, {1, 2}));
  AddInput(Tensor::Scalar<int32_t>(0));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3, 4, 5, 6}, {3, 2});
}

TEST_F(ConcatV2Test, AlongColumnsOfThreeInputs) {
  ASSERT_OK(MakeConcat(DT_INT32, 3));
  AddInput(Tensor::FromVector<int32_t>({1, 2}, {2, 1}));
  AddInput(Tensor::FromVector<int32_t>({3, 4, 5, 6}, {2, 2}));
  AddInput(Tensor(DT_INT32, TensorShape({2, 0})));
  AddInput(Tensor::Scalar<int32_t>(1));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 3, 4, 2, 5, 6}, {2, 3});
}

TEST_F(ConcatV2Test, NegativeInt64Axis) {
  ASSERT_OK(MakeConcat(DT_DOUBLE, 2, DT_INT64));
  AddInput(Tensor::FromVector<double>({1, 2, 3, 4}, {2, 1, 2}));
  AddInput(Tensor::FromVector<double>({5, 6}, {2, 1, 1}));
  AddInput(Tensor::Scalar<int64_t>(-1));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<double>(GetOutput(0), {1, 2, 5, 3, 4, 6}, {2, 1, 3});
}

TEST_F(ConcatV2Test, BoolsInt64sAndStrings) {
  ASSERT_OK(MakeConcat(DT_BOOL, 2));
  AddInput(Tensor::FromVector<bool>({true}, {1}));
  AddInput(Tensor::FromVector<bool>({false, true}, {2}));
  AddInput(Tensor::Scalar<int32_t>(0));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true, false, true}, {3});

  inputs_.clear();
  ASSERT_OK(MakeConcat(DT_INT64, 2));
  AddInput(Tensor::FromVector<int64_t>({1, 2}, {1, 2}));
  AddInput(Tensor::FromVector<int64_t>({3, 4}, {1, 2}));
  AddInput(Tensor::Scalar<int32_t>(1));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 2, 3, 4}, {1, 4});

  inputs_.clear();
  ASSERT_OK(MakeConcat(DT_STRING, 2));
  AddInput(
      Tensor::FromVector<std::string>(std::vector<std::string>{"a", "b"}, TensorShape({2, 1})));
  AddInput(
      Tensor::FromVector<std::string>(std::vector<std::string>{"c", "d"}, TensorShape({2, 1})));
  AddInput(Tensor::Scalar<int32_t>(1));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "c", "b", "d"}, {2, 2});
}

TEST_F(ConcatV2Test, ManyRowsInParallel) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 2));
  const int64_t rows = 20000;
  std::vector<float> a(rows * 3), b(rows * 2);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), -1e6f);
  AddInput(Tensor::FromVector<float>(a, TensorShape({rows, 3})));
  AddInput(Tensor::FromVector<float>(b, TensorShape({rows, 2})));
  AddInput(Tensor::Scalar<int32_t>(1));
  ASSERT_OK(RunOp());
  const Tensor& out = GetOutput(0);
  ASSERT_EQ(out.shape(), TensorShape({rows, 5}));
  int64_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int c = 0; c < 5; ++c) {
      float want = c < 3 ? a[r * 3 + c] : b[r * 2 + c - 3];
      wrong += out.data<float>()[r * 5 + c] != want;
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST_F(ConcatV2Test, MismatchedShapesNameTheInputAndBothShapes) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 3));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({1, 3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 4})));
  AddInput(Tensor::Scalar<int32_t>(0));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "input 2 has shape [2,4], incompatible with input 0's shape [2,3]");
}

TEST_F(ConcatV2Test, MismatchedRanks) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 2));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3, 1})));
  AddInput(Tensor::Scalar<int32_t>(0));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input 1 has shape [2,3,1]");
}

TEST_F(ConcatV2Test, AxisOutOfRange) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 2));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::Scalar<int32_t>(-3));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "axis -3 is out of range [-2, 2)");
}

TEST_F(ConcatV2Test, AxisMustBeAScalar) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 2));
  AddInput(Tensor(DT_FLOAT, TensorShape({2})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2})));
  AddInput(Tensor::FromVector<int32_t>({0}, {1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "axis must be a scalar");
}

TEST_F(ConcatV2Test, Scalars) {
  ASSERT_OK(MakeConcat(DT_FLOAT, 2));
  AddInput(Tensor::Scalar<float>(1));
  AddInput(Tensor::Scalar<float>(2));
  AddInput(Tensor::Scalar<int32_t>(0));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "cannot concatenate scalars");
}

TEST_F(ConcatV2Test, NeedsAtLeastTwoInputs) {
  EXPECT_STATUS(MakeConcat(DT_FLOAT, 1), kInvalidArgument, "less than the minimum 2");
}

TEST(ConcatV2ShapeFnTest, KeepsTheRank) {
  EXPECT_EQ(InferShapes("ConcatV2",
                        {PartialTensorShape(), PartialTensorShape({2, 3}), PartialTensorShape({})}),
            std::vector<std::string>{"[?,?]"});
}

}  // namespace
}  // namespace tensorgrid
