#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class ReshapeTest : public OpsTestBase {
 protected:
  absl::Status MakeReshape(DataType t, DataType tshape = DT_INT32) {
    return MakeOp(NodeDefBuilder("r", "Reshape").Attr("T", t).Attr("Tshape", tshape));
  }
};

TEST_F(ReshapeTest, SharesTheInputBuffer) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  Tensor in = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  AddInput(in);
  AddInput(Tensor::FromVector<int32_t>({3, 2}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(in));
  EXPECT_FALSE(kernel_->IsExpensive());
}

TEST_F(ReshapeTest, InfersTheMinusOneDimensionFromInt64Shape) {
  ASSERT_OK(MakeReshape(DT_INT32, DT_INT64));
  AddInput(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {8}));
  AddInput(Tensor::FromVector<int64_t>({2, -1, 2}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
}

TEST_F(ReshapeTest, ToScalarAndFromEmpty) {
  ASSERT_OK(MakeReshape(DT_DOUBLE));
  AddInput(Tensor::FromVector<double>({7.5}, {1, 1}));
  AddInput(Tensor(DT_INT32, TensorShape({0})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<double>(GetOutput(0), {7.5}, TensorShape());
}

TEST_F(ReshapeTest, EmptyTensorWithMinusOne) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({0, 4})));
  AddInput(Tensor::FromVector<int32_t>({-1, 2}, {2}));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0, 2}));
}

TEST_F(ReshapeTest, StringsAndBools) {
  ASSERT_OK(MakeReshape(DT_STRING));
  AddInput(Tensor::FromVector<std::string>({"a", "b", "c", "d"}, {4}));
  AddInput(Tensor::FromVector<int32_t>({2, 2}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "b", "c", "d"}, {2, 2});

  inputs_.clear();
  ASSERT_OK(MakeReshape(DT_BOOL));
  AddInput(Tensor::FromVector<bool>({true, false}, {2}));
  AddInput(Tensor::FromVector<int32_t>({1, 2, 1}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true, false}, {1, 2, 1});
}

TEST_F(ReshapeTest, MismatchNamesBothShapesAndCounts) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  AddInput(Tensor::FromVector<int32_t>({4, 2}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "tensor with shape [2,3] (6 values), but the requested shape [4,2] has 8 values");
}

TEST_F(ReshapeTest, MinusOneThatDoesNotDivide) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({7})));
  AddInput(Tensor::FromVector<int32_t>({-1, 3}, {2}));
  EXPECT_STATUS(
      RunOp(), kInvalidArgument,
      "shape [7] (7 values), but the requested shape [-1,3] needs a multiple of 3 values");
}

TEST_F(ReshapeTest, TwoMinusOnes) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({4})));
  AddInput(Tensor::FromVector<int32_t>({-1, -1}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "Only one dimension of the requested shape may be -1");
}

TEST_F(ReshapeTest, NegativeDimension) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({4})));
  AddInput(Tensor::FromVector<int32_t>({-2, -2}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "Dimension 0 of the requested shape [-2,-2] is -2");
}

TEST_F(ReshapeTest, MinusOneBesideZero) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({0})));
  AddInput(Tensor::FromVector<int32_t>({0, -1}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "cannot be inferred");
}

TEST_F(ReshapeTest, ShapeMustBeAVector) {
  ASSERT_OK(MakeReshape(DT_FLOAT));
  AddInput(Tensor(DT_FLOAT, TensorShape({4})));
  AddInput(Tensor::FromVector<int32_t>({2, 2}, {1, 2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "shape must be a vector, got a tensor of shape [1,2]");
}

TEST_F(ReshapeTest, ShapeTypeMustBeInt32OrInt64) {
  EXPECT_STATUS(MakeReshape(DT_FLOAT, DT_FLOAT), kInvalidArgument, "Tshape");
}

class ShapeTest : public OpsTestBase {};

TEST_F(ShapeTest, Int32ByDefault) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Shape").Attr("T", DT_STRING)));
  AddInput(Tensor(DT_STRING, TensorShape({2, 0, 5})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {2, 0, 5}, {3});
  EXPECT_FALSE(kernel_->IsExpensive());
}

TEST_F(ShapeTest, Int64AndScalar) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Shape").Attr("T", DT_FLOAT).Attr("out_type", DT_INT64)));
  AddInput(Tensor::Scalar<float>(1));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {}, {0});
}

TEST_F(ShapeTest, Int32OverflowNamesTheDimension) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Shape").Attr("T", DT_FLOAT)));
  AddInput(Tensor(DT_FLOAT, TensorShape({0, int64_t{3} << 30})));  // no elements to allocate
  EXPECT_STATUS(RunOp(), kInvalidArgument, "dimension 1 of [0,3221225472] is 3221225472");
}

TEST_F(ShapeTest, RejectsOtherOutTypes) {
  EXPECT_STATUS(MakeOp(NodeDefBuilder("s", "Shape").Attr("T", DT_FLOAT).Attr("out_type", DT_FLOAT)),
                kInvalidArgument, "out_type");
}

TEST(ShapeOpsShapeFnTest, Reshape) {
  EXPECT_EQ(InferShapes("Reshape", {PartialTensorShape({2, 3}), PartialTensorShape({3})}),
            std::vector<std::string>{"[?,?,?]"});
  EXPECT_EQ(InferShapes("Reshape", {PartialTensorShape({2, 3}), PartialTensorShape({1})}),
            std::vector<std::string>{"[6]"});
  EXPECT_EQ(InferShapes("Reshape", {PartialTensorShape({2, 3}), PartialTensorShape()}),
            std::vector<std::string>{"<unknown>"});
}

TEST(ShapeOpsShapeFnTest, Shape) {
  EXPECT_EQ(InferShapes("Shape", {PartialTensorShape({-1, 3})}), std::vector<std::string>{"[2]"});
  EXPECT_EQ(InferShapes("Shape", {PartialTensorShape()}), std::vector<std::string>{"[?]"});
}

}  // namespace
}  // namespace tensorgrid
