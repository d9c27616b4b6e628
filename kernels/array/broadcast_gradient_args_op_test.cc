#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class BroadcastGradientArgsTest : public OpsTestBase {
 protected:
  absl::Status Run(std::vector<int32_t> s0, std::vector<int32_t> s1) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("b", "BroadcastGradientArgs")));
    AddInput(Tensor::FromVector<int32_t>(s0, {static_cast<int64_t>(s0.size())}));
    AddInput(Tensor::FromVector<int32_t>(s1, {static_cast<int64_t>(s1.size())}));
    return RunOp();
  }
  std::vector<int32_t> R(int i) {
    absl::Span<const int32_t> v = GetOutput(i).values<int32_t>();
    return std::vector<int32_t>(v.begin(), v.end());
  }
};

TEST_F(BroadcastGradientArgsTest, LowerRankInputReducesOverLeadingDimensions) {
  ASSERT_OK(Run({2, 3, 5}, {3, 1}));
  EXPECT_EQ(R(0), std::vector<int32_t>{});
  EXPECT_EQ(R(1), (std::vector<int32_t>{0, 2}));
}

TEST_F(BroadcastGradientArgsTest, BothSidesBroadcast) {
  ASSERT_OK(Run({1, 3}, {2, 1}));
  EXPECT_EQ(R(0), std::vector<int32_t>{0});
  EXPECT_EQ(R(1), std::vector<int32_t>{1});
}

TEST_F(BroadcastGradientArgsTest, SameShapesReduceNothingButOnes) {
  ASSERT_OK(Run({2, 3}, {2, 3}));
  EXPECT_EQ(R(0), std::vector<int32_t>{});
  EXPECT_EQ(R(1), std::vector<int32_t>{});
  inputs_.clear();
  ASSERT_OK(Run({1, 4}, {1, 4}));
  EXPECT_EQ(R(0), std::vector<int32_t>{0});
  EXPECT_EQ(R(1), std::vector<int32_t>{0});
}

TEST_F(BroadcastGradientArgsTest, ScalarAgainstMatrix) {
  ASSERT_OK(Run({}, {2, 3}));
  EXPECT_EQ(R(0), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(R(1), std::vector<int32_t>{});
}

TEST_F(BroadcastGradientArgsTest, Int64Shapes) {
  ASSERT_OK(MakeOp(NodeDefBuilder("b", "BroadcastGradientArgs").Attr("T", DT_INT64)));
  AddInput(Tensor::FromVector<int64_t>({4, 1}, {2}));
  AddInput(Tensor::FromVector<int64_t>({4, 6}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1}, {1});
  ExpectTensorEqual<int64_t>(GetOutput(1), {}, {0});
}

TEST_F(BroadcastGradientArgsTest, IncompatibleShapes) {
  EXPECT_STATUS(Run({2, 3}, {4, 3}), kInvalidArgument, "Incompatible shapes: [2,3] vs. [4,3]");
}

}  // namespace
}  // namespace tensorgrid
