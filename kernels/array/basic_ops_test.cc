#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class BasicOpsTest : public OpsTestBase {};

TEST_F(BasicOpsTest, ConstOutputsItsValue) {
  ASSERT_OK(MakeOp(NodeDefBuilder("c", "Const")
                       .Attr("dtype", DT_INT32)
                       .Attr("value", Tensor::FromVector<int32_t>({4, 5}, TensorShape({2})))));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {4, 5}, TensorShape({2}));
}

TEST_F(BasicOpsTest, ConstWithMismatchedDtypeFailsAtConstruction) {
  EXPECT_STATUS(MakeOp(NodeDefBuilder("c", "Const")
                           .Attr("dtype", DT_FLOAT)
                           .Attr("value", Tensor::Scalar<int32_t>(1))),
                kInvalidArgument, "value is int32 but attr dtype is float");
}

TEST_F(BasicOpsTest, UnfedPlaceholderNamesItself) {
  ASSERT_OK(MakeOp(NodeDefBuilder("x", "Placeholder")
                       .Attr("dtype", DT_FLOAT)
                       .Attr("shape", PartialTensorShape({-1, 3}))));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "feed a value for placeholder 'x' of type float and shape [?,3]");
}

TEST_F(BasicOpsTest, PlaceholderWithDefaultChecksShape) {
  ASSERT_OK(MakeOp(NodeDefBuilder("p", "PlaceholderWithDefault")
                       .Attr("dtype", DT_FLOAT)
                       .Attr("shape", PartialTensorShape({2}))));
  AddInput(Tensor::FromVector<float>({1, 2}, TensorShape({2})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1, 2}, TensorShape({2}));
  inputs_.clear();
  AddInput(Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "incompatible with the placeholder's shape [2]");
}

TEST_F(BasicOpsTest, IdentitySharesTheBuffer) {
  ASSERT_OK(MakeOp(NodeDefBuilder("i", "Identity").Attr("T", DT_STRING)));
  Tensor in = Tensor::Scalar<std::string>("hello");
  AddInput(in);
  ASSERT_OK(RunOp());
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(in));
  EXPECT_EQ(GetOutput(0).scalar<std::string>(), "hello");
}

TEST_F(BasicOpsTest, ArgAndRetvalUseTheCallFrame) {
  ASSERT_OK(MakeOp(NodeDefBuilder("a", "_Arg").Attr("T", DT_FLOAT).Attr("index", 1)));
  call_frame()->args = {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)};
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {2}, TensorShape({}));

  call_frame()->args = {Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(2)};
  EXPECT_STATUS(RunOp(), kInvalidArgument, "fed a int32 tensor, expected float");
  call_frame()->args.resize(1);
  EXPECT_STATUS(RunOp(), kInternal, "no argument 1");

  ASSERT_OK(MakeOp(NodeDefBuilder("r", "_Retval").Attr("T", DT_FLOAT).Attr("index", 0)));
  inputs_.clear();
  AddInput(Tensor::Scalar<float>(9));
  call_frame()->retvals.resize(1);
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(call_frame()->retvals[0], {9}, TensorShape({}));
}

TEST_F(BasicOpsTest, NoOpDoesNothing) {
  ASSERT_OK(MakeOp(NodeDefBuilder("n", "NoOp")));
  ASSERT_OK(RunOp());
  EXPECT_TRUE(outputs_.empty());
}

}  // namespace
}  // namespace tensorgrid
