#include <string>
#include <vector>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class PackTest : public OpsTestBase {
 protected:
  absl::Status MakePack(DataType t, int n, int64_t axis) {
    return MakeOp(NodeDefBuilder("p", "Pack").Attr("T", t).Attr("N", n).Attr("axis", axis));
  }
  absl::Status MakeUnpack(DataType t, int num, int64_t axis) {
    return MakeOp(NodeDefBuilder("u", "Unpack").Attr("T", t).Attr("num", num).Attr("axis", axis));
  }
};

TEST_F(PackTest, AlongAxisZero) {
  ASSERT_OK(MakePack(DT_FLOAT, 3, 0));
  AddInput(Tensor::FromVector<float>({1, 2}, {2}));
  AddInput(Tensor::FromVector<float>({3, 4}, {2}));
  AddInput(Tensor::FromVector<float>({5, 6}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3, 4, 5, 6}, {3, 2});
}

TEST_F(PackTest, AlongTheLastAxisCountedFromTheEnd) {
  ASSERT_OK(MakePack(DT_INT32, 3, -1));
  AddInput(Tensor::FromVector<int32_t>({1, 4}, {2}));
  AddInput(Tensor::FromVector<int32_t>({2, 5}, {2}));
  AddInput(Tensor::FromVector<int32_t>({3, 6}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 2, 3, 4, 5, 6}, {2, 3});
}

TEST_F(PackTest, MiddleAxisOfMatrices) {
  ASSERT_OK(MakePack(DT_INT64, 2, 1));
  AddInput(Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 2}));
  AddInput(Tensor::FromVector<int64_t>({5, 6, 7, 8}, {2, 2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 2, 5, 6, 3, 4, 7, 8}, {2, 2, 2});
}

TEST_F(PackTest, ScalarsStringsAndBools) {
  ASSERT_OK(MakePack(DT_STRING, 2, 0));
  AddInput(Tensor::Scalar<std::string>("model"));
  AddInput(Tensor::Scalar<std::string>("ckpt"));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"model", "ckpt"}, {2});

  inputs_.clear();
  ASSERT_OK(MakePack(DT_BOOL, 1, 0));
  AddInput(Tensor::FromVector<bool>({true, false}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<bool>(GetOutput(0), {true, false}, {1, 2});
}

TEST_F(PackTest, MismatchedShapesNameTheInput) {
  ASSERT_OK(MakePack(DT_FLOAT, 3, 0));
  AddInput(Tensor(DT_FLOAT, TensorShape({2})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2})));
  AddInput(Tensor(DT_FLOAT, TensorShape({3})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "Pack input 2 has shape [3], but input 0 has shape [2]");
}

TEST_F(PackTest, AxisOutOfRange) {
  ASSERT_OK(MakePack(DT_FLOAT, 2, 2));
  AddInput(Tensor(DT_FLOAT, TensorShape({2})));
  AddInput(Tensor(DT_FLOAT, TensorShape({2})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "axis 2 is out of range [-2, 2)");
}

TEST_F(PackTest, UnpackAlongAxisZeroSharesTheBuffer) {
  ASSERT_OK(MakeUnpack(DT_FLOAT, 3, 0));
  AddInput(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1, 2}, {2});
  ExpectTensorEqual<float>(GetOutput(2), {5, 6}, {2});
  EXPECT_TRUE(GetOutput(1).SharesBufferWith(inputs_[0].tensor));
}

TEST_F(PackTest, UnpackAlongTheLastAxis) {
  ASSERT_OK(MakeUnpack(DT_STRING, 3, -1));
  AddInput(Tensor::FromVector<std::string>(std::vector<std::string>{"a", "b", "c", "d", "e", "f"},
                                           TensorShape({2, 3})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "d"}, {2});
  ExpectTensorEqual<std::string>(GetOutput(1), {"b", "e"}, {2});
  ExpectTensorEqual<std::string>(GetOutput(2), {"c", "f"}, {2});
}

TEST_F(PackTest, UnpackNeedsNumSlices) {
  ASSERT_OK(MakeUnpack(DT_FLOAT, 2, 1));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 3})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "needs dimension 1 to be num = 2");
  inputs_.clear();
  ASSERT_OK(MakeUnpack(DT_FLOAT, 2, -3));
  AddInput(Tensor(DT_FLOAT, TensorShape({2, 2})));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "axis -3 is out of range [-2, 2)");
}

}  // namespace
}  // namespace tensorgrid
