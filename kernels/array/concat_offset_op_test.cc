#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class ConcatOffsetTest : public OpsTestBase {
 protected:
  absl::Status Run(int32_t axis, std::vector<std::vector<int32_t>> shapes) {
    TG_RETURN_IF_ERROR(
        MakeOp(NodeDefBuilder("c", "ConcatOffset").Attr("N", static_cast<int64_t>(shapes.size()))));
    AddInput(Tensor::Scalar<int32_t>(axis));
    for (const auto& s : shapes) {
      AddInput(Tensor::FromVector<int32_t>(s, {static_cast<int64_t>(s.size())}));
    }
    return RunOp();
  }
};

TEST_F(ConcatOffsetTest, OffsetsAlongTheAxis) {
  ASSERT_OK(Run(1, {{2, 3, 5}, {2, 7, 5}, {2, 1, 5}}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 0, 0}, {3});
  ExpectTensorEqual<int32_t>(GetOutput(1), {0, 3, 0}, {3});
  ExpectTensorEqual<int32_t>(GetOutput(2), {0, 10, 0}, {3});
}

TEST_F(ConcatOffsetTest, NegativeAxisCountsFromTheEnd) {
  ASSERT_OK(Run(-2, {{4, 2}, {1, 2}}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 0}, {2});
  ExpectTensorEqual<int32_t>(GetOutput(1), {4, 0}, {2});
}

TEST_F(ConcatOffsetTest, Int64Shapes) {
  ASSERT_OK(MakeOp(NodeDefBuilder("c", "ConcatOffset").Attr("N", 2).Attr("shape_type", DT_INT64)));
  AddInput(Tensor::Scalar<int32_t>(0));
  AddInput(Tensor::FromVector<int64_t>({3, 2}, {2}));
  AddInput(Tensor::FromVector<int64_t>({5, 2}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(1), {3, 0}, {2});
}

TEST_F(ConcatOffsetTest, Errors) {
  EXPECT_STATUS(Run(2, {{2, 3}, {2, 3}}), kInvalidArgument, "Concat dim is out of range: 2 vs. 2");
  inputs_.clear();
  EXPECT_STATUS(Run(1, {{2, 3}, {4, 3}}), kInvalidArgument,
                "All dimensions except 1 must match. Input 1 has shape [4,3] and doesn't match "
                "input 0 with shape [2,3]");
  inputs_.clear();
  EXPECT_STATUS(Run(0, {{2, 3}, {2}}), kInvalidArgument, "input 1 should contain 2 elements");
}

}  // namespace
}  // namespace tensorgrid
