// The shape functions of the variable ops.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/shape_fn_testutil.h"

namespace tensorgrid {
namespace {

NodeDefBuilder VariableNode(const std::string& op, const PartialTensorShape& shape) {
  NodeDefBuilder b("v", op);
  b.Attr("dtype", DT_FLOAT).Attr("shape", shape);
  return b;
}

TEST(VariableShapeTest, LegacyVariableWithoutDimsHasAnUnknownShape) {
  const PartialTensorShape no_dims(std::vector<int64_t>{});
  ShapeFnRun legacy = RunShapeFn(VariableNode("Variable", no_dims), {});
  ASSERT_OK(legacy.status);
  EXPECT_EQ(legacy.outputs[0], "<unknown>");
  ShapeFnRun v2 = RunShapeFn(VariableNode("VariableV2", no_dims), {});
  ASSERT_OK(v2.status);
  EXPECT_EQ(v2.outputs[0], "[]");
  ShapeFnRun with_dims = RunShapeFn(VariableNode("Variable", {2, -1}), {});
  ASSERT_OK(with_dims.status);
  EXPECT_EQ(with_dims.outputs[0], "[2,?]");
}

}  // namespace
}  // namespace tensorgrid
