#include <string>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class ShardedFilenameTest : public OpsTestBase {};

TEST_F(ShardedFilenameTest, FiveDigitsEach) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "ShardedFilename")));
  AddInput(Tensor::Scalar<std::string>("/tmp/ckpt_temp/part"));
  AddInput(Tensor::Scalar<int32_t>(2));
  AddInput(Tensor::Scalar<int32_t>(5));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"/tmp/ckpt_temp/part-00002-of-00005"}, {});
}

TEST_F(ShardedFilenameTest, WiderNumbersAreNotCut) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "ShardedFilename")));
  AddInput(Tensor::Scalar<std::string>("m"));
  AddInput(Tensor::FromVector<int32_t>({123456}, {1}));  // a legacy scalar
  AddInput(Tensor::Scalar<int32_t>(1234567));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"m-123456-of-1234567"}, {});
}

TEST_F(ShardedFilenameTest, InputsMustBeScalars) {
  ASSERT_OK(MakeOp(NodeDefBuilder("f", "ShardedFilename")));
  AddInput(Tensor::Scalar<std::string>("m"));
  AddInput(Tensor::FromVector<int32_t>({1, 2}, {2}));
  AddInput(Tensor::Scalar<int32_t>(3));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "shard must be a scalar, got a tensor of shape [2]");
}

TEST_F(ShardedFilenameTest, FilespecMatchesEveryShard) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "ShardedFilespec")));
  AddInput(Tensor::Scalar<std::string>("/tmp/model"));
  AddInput(Tensor::Scalar<int32_t>(3));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0),
                                 {"/tmp/model-?????"
                                  "-of-00003"},
                                 {});
  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "ShardedFilespec")));
  AddInput(Tensor(DT_STRING, TensorShape({0})));
  AddInput(Tensor::Scalar<int32_t>(3));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "basename must be a scalar");
}

}  // namespace
}  // namespace tensorgrid
