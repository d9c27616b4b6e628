#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class InvertPermutationTest : public OpsTestBase {
 protected:
  absl::Status Run(std::vector<int32_t> x) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("p", "InvertPermutation")));
    AddInput(Tensor::FromVector<int32_t>(x, {static_cast<int64_t>(x.size())}));
    return RunOp();
  }
};

TEST_F(InvertPermutationTest, Inverts) {
  ASSERT_OK(Run({3, 4, 0, 2, 1}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {2, 4, 3, 0, 1}, {5});
  inputs_.clear();
  ASSERT_OK(Run({}));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0}));
}

TEST_F(InvertPermutationTest, Int64) {
  ASSERT_OK(MakeOp(NodeDefBuilder("p", "InvertPermutation").Attr("T", DT_INT64)));
  AddInput(Tensor::FromVector<int64_t>({1, 2, 0}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {2, 0, 1}, {3});
}

TEST_F(InvertPermutationTest, RejectsNonPermutations) {
  EXPECT_STATUS(Run({0, 3}), kInvalidArgument, "3 is not between 0 and 2");
  inputs_.clear();
  EXPECT_STATUS(Run({1, 1}), kInvalidArgument, "1 is duplicated in the input");
  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("p", "InvertPermutation")));
  AddInput(Tensor::FromVector<int32_t>({0, 1}, {1, 2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "expects a 1D vector, got shape [1,2]");
}

}  // namespace
}  // namespace tensorgrid
