#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class SizeTest : public OpsTestBase {};

TEST_F(SizeTest, CountsElementsOfAnyDtype) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Size").Attr("T", DT_STRING)));
  AddInput(Tensor(DT_STRING, {2, 3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {6}, TensorShape());
  EXPECT_FALSE(kernel_->IsExpensive());
}

TEST_F(SizeTest, Int64OutputAndScalarAndEmpty) {
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Size").Attr("T", DT_FLOAT).Attr("out_type", DT_INT64)));
  AddInput(Tensor(DT_FLOAT, {}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1}, TensorShape());
  inputs_.clear();
  AddInput(Tensor(DT_FLOAT, {4, 0}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {0}, TensorShape());
}

TEST_F(SizeTest, ShapeFunctionGivesAScalar) {
  EXPECT_EQ(InferShapes("Size", {PartialTensorShape({2, -1})}), std::vector<std::string>{"[]"});
}

}  // namespace
}  // namespace tensorgrid
