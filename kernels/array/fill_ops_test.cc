#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class FillTest : public OpsTestBase {};

TEST_F(FillTest, FloatMatrix) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", DT_FLOAT)));
  AddInput(Tensor::FromVector<int32_t>({2, 3}, {2}));
  AddInput(Tensor::Scalar<float>(1.5f));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1.5, 1.5, 1.5, 1.5, 1.5, 1.5}, {2, 3});
}

TEST_F(FillTest, Int64DimsAndLargeOutput) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", DT_INT64).Attr("index_type", DT_INT64)));
  AddInput(Tensor::FromVector<int64_t>({1000, 1000}, {2}));
  AddInput(Tensor::Scalar<int64_t>(-7));
  ASSERT_OK(RunOp());
  const Tensor& out = GetOutput(0);
  ASSERT_EQ(out.shape(), TensorShape({1000, 1000}));
  int64_t wrong = 0;
  for (int64_t v : out.values<int64_t>()) wrong += v != -7;
  EXPECT_EQ(wrong, 0);
}

TEST_F(FillTest, OtherTypes) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", DT_STRING)));
  AddInput(Tensor::FromVector<int32_t>({2}, {1}));
  AddInput(Tensor::Scalar<std::string>("hi"));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"hi", "hi"}, {2});

  for (DataType t : {DT_DOUBLE, DT_INT32, DT_BOOL}) {
    inputs_.clear();
    ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", t)));
    AddInput(Tensor(DT_INT32, TensorShape({0})));  // a scalar
    switch (t) {
      case DT_DOUBLE: AddInput(Tensor::Scalar<double>(2.5)); break;
      case DT_INT32: AddInput(Tensor::Scalar<int32_t>(4)); break;
      default: AddInput(Tensor::Scalar<bool>(true)); break;
    }
    ASSERT_OK(RunOp());
    EXPECT_EQ(GetOutput(0).DebugString(), inputs_[1].tensor.DebugString());
  }
}

TEST_F(FillTest, NegativeDimension) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", DT_FLOAT)));
  AddInput(Tensor::FromVector<int32_t>({2, -1}, {2}));
  AddInput(Tensor::Scalar<float>(0));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "shape [2,-1] has a negative dimension");
}

TEST_F(FillTest, DimsMustBeAVector) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", DT_FLOAT)));
  AddInput(Tensor::Scalar<int32_t>(2));
  AddInput(Tensor::Scalar<float>(0));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "dims must be a vector, got a tensor of shape []");
}

TEST_F(FillTest, ValueMustBeAScalar) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "Fill").Attr("T", DT_FLOAT)));
  AddInput(Tensor::FromVector<int32_t>({2}, {1}));
  AddInput(Tensor::FromVector<float>({1, 2}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "value must be a scalar, got a tensor of shape [2]");
}

class ConstantLikeTest : public OpsTestBase {};

TEST_F(ConstantLikeTest, ZerosLikeLeavesASharedInputAlone) {
  ASSERT_OK(MakeOp(NodeDefBuilder("z", "ZerosLike").Attr("T", DT_FLOAT)));
  Tensor in = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  AddInput(in);
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {0, 0, 0, 0, 0, 0}, {3, 2});
  EXPECT_FALSE(GetOutput(0).SharesBufferWith(in));
  ExpectTensorEqual<float>(in, {1, 2, 3, 4, 5, 6}, {3, 2});
}

TEST_F(ConstantLikeTest, ZerosLikeReusesAnUnsharedInput) {
  ASSERT_OK(MakeOp(NodeDefBuilder("z", "ZerosLike").Attr("T", DT_INT32)));
  AddInput(Tensor::FromVector<int32_t>({1, 2, 3}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 0, 0}, {3});
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(inputs_[0].tensor));
}

TEST_F(ConstantLikeTest, ZerosLikeOtherTypes) {
  ASSERT_OK(MakeOp(NodeDefBuilder("z", "ZerosLike").Attr("T", DT_STRING)));
  AddInput(Tensor::FromVector<std::string>(std::vector<std::string>{"x", "y"}, TensorShape({2})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"", ""}, {2});

  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("z", "ZerosLike").Attr("T", DT_BOOL)));
  AddInput(Tensor::FromVector<bool>({true}, {1}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {false}, {1});

  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("z", "ZerosLike").Attr("T", DT_INT64)));
  AddInput(Tensor::Scalar<int64_t>(9));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {0}, TensorShape());
}

TEST_F(ConstantLikeTest, OnesLike) {
  ASSERT_OK(MakeOp(NodeDefBuilder("o", "OnesLike").Attr("T", DT_INT32)));
  AddInput(Tensor::FromVector<int32_t>({5, 6, 7}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 1, 1}, {3});

  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("o", "OnesLike").Attr("T", DT_DOUBLE)));
  AddInput(Tensor::FromVector<double>({5, 6}, {1, 2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<double>(GetOutput(0), {1, 1}, {1, 2});

  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("o", "OnesLike").Attr("T", DT_BOOL)));
  AddInput(Tensor::FromVector<bool>({false, false}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true, true}, {2});
}

TEST_F(ConstantLikeTest, OnesLikeOfStringsIsNotAnOp) {
  EXPECT_STATUS(MakeOp(NodeDefBuilder("o", "OnesLike").Attr("T", DT_STRING)), kInvalidArgument,
                "not one of the allowed types");
}

TEST(FillShapeFnTest, RankFromDims) {
  EXPECT_EQ(InferShapes("Fill", {PartialTensorShape({2}), PartialTensorShape({})}),
            std::vector<std::string>{"[?,?]"});
  EXPECT_EQ(InferShapes("ZerosLike", {PartialTensorShape({-1, 4})}),
            std::vector<std::string>{"[?,4]"});
}

}  // namespace
}  // namespace tensorgrid
