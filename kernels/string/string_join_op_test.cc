#include <string>
#include <vector>

#include "core/platform/status_testutil.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class StringJoinTest : public OpsTestBase {
 protected:
  absl::Status MakeJoin(int n, const std::string& separator) {
    return MakeOp(NodeDefBuilder("j", "StringJoin").Attr("N", n).Attr("separator", separator));
  }
  static Tensor Strings(std::vector<std::string> values, const TensorShape& shape) {
    return Tensor::FromVector<std::string>(values, shape);
  }
};

TEST_F(StringJoinTest, ScalarsGiveAScalar) {
  ASSERT_OK(MakeJoin(3, ""));
  AddInput(Tensor::Scalar<std::string>("/tmp/model"));
  AddInput(Tensor::Scalar<std::string>("_temp_"));
  AddInput(Tensor::Scalar<std::string>("abc/part"));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"/tmp/model_temp_abc/part"}, {});
}

TEST_F(StringJoinTest, ScalarsBroadcastWithASeparator) {
  ASSERT_OK(MakeJoin(3, "/"));
  AddInput(Tensor::Scalar<std::string>("model"));
  AddInput(Strings({"a", "b", "c", "d"}, {2, 2}));
  AddInput(Strings({"1", "2", "3", "4"}, {2, 2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<std::string>(GetOutput(0), {"model/a/1", "model/b/2", "model/c/3", "model/d/4"},
                                 {2, 2});
}

TEST_F(StringJoinTest, NoInputsIsInvalidAsInTensorFlow) {
  // N counts the inputs, so (as in TensorFlow) it is at least 1.
  EXPECT_STATUS(MakeJoin(0, ","), kInvalidArgument, "is 0, less than the minimum 1");
}

TEST_F(StringJoinTest, MismatchedShapesNameTheInputs) {
  ASSERT_OK(MakeJoin(3, ""));
  AddInput(Strings({"a", "b"}, {2}));
  AddInput(Tensor::Scalar<std::string>("x"));
  AddInput(Strings({"a", "b", "c"}, {3}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "StringJoin input 2 has shape [3], but input 0 has shape [2]");
}

TEST(StringJoinShapeFnTest, ScalarsAndMergedShapes) {
  EXPECT_EQ(InferShapes("StringJoin", {PartialTensorShape({}), PartialTensorShape({})}),
            std::vector<std::string>{"[]"});
  EXPECT_EQ(InferShapes("StringJoin", {PartialTensorShape({}), PartialTensorShape({-1, 3}),
                                       PartialTensorShape({2, -1})}),
            std::vector<std::string>{"[2,3]"});
  EXPECT_EQ(InferShapes("StringJoin", {PartialTensorShape({}), PartialTensorShape()}),
            std::vector<std::string>{"<unknown>"});
}

}  // namespace
}  // namespace tensorgrid
