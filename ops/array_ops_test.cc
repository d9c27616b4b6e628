// The shape functions of Pad, Squeeze, Pack and Unpack.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/shape_fn_testutil.h"

namespace tensorgrid {
namespace {

NodeDefBuilder Squeeze(std::vector<int64_t> dims) {
  NodeDefBuilder b("s", "Squeeze");
  b.Attr("T", DT_FLOAT).Attr("squeeze_dims", dims);
  return b;
}

TEST(SqueezeShapeTest, NamedAndAllDims) {
  ShapeFnRun all = RunShapeFn(Squeeze({}), {{1, 3, 1, 2}});
  ASSERT_OK(all.status);
  EXPECT_EQ(all.outputs[0], "[3,2]");
  ShapeFnRun named = RunShapeFn(Squeeze({-1, 0}), {{1, 3, 1, 1}});
  ASSERT_OK(named.status);
  EXPECT_EQ(named.outputs[0], "[3,1]");
  ShapeFnRun unknown_named = RunShapeFn(Squeeze({1}), {{4, -1, 1}});
  ASSERT_OK(unknown_named.status);
  EXPECT_EQ(unknown_named.outputs[0], "[4,1]");
  ShapeFnRun unknown_all = RunShapeFn(Squeeze({}), {{4, -1, 1}});
  ASSERT_OK(unknown_all.status);
  EXPECT_EQ(unknown_all.outputs[0], "<unknown>");
}

TEST(SqueezeShapeTest, BadDimsNameTheNode) {
  EXPECT_STATUS(RunShapeFn(Squeeze({1}), {{1, 3}}).status, kInvalidArgument,
                "node 's' (Squeeze): cannot squeeze dimension 1 of size 3");
  EXPECT_STATUS(RunShapeFn(Squeeze({2}), {{1, 3}}).status, kInvalidArgument,
                "node 's' (Squeeze): squeeze_dims entry 2 is out of range");
  EXPECT_STATUS(RunShapeFn(Squeeze({-3}), {{1, 3}}).status, kInvalidArgument, "out of range");
}

TEST(PadShapeTest, RankFromInputOrPaddings) {
  NodeDefBuilder pad("p", "Pad");
  pad.Attr("T", DT_FLOAT);
  ShapeFnRun r = RunShapeFn(pad, {{2, 3}, {2, 2}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?,?]");
  ShapeFnRun from_paddings = RunShapeFn(pad, {PartialTensorShape(), {3, 2}});
  ASSERT_OK(from_paddings.status);
  EXPECT_EQ(from_paddings.outputs[0], "[?,?,?]");
  EXPECT_STATUS(RunShapeFn(pad, {{2, 3}, {3, 2}}).status, kInvalidArgument,
                "node 'p' (Pad): paddings must be [rank of input, 2], got [3,2]");
  EXPECT_STATUS(RunShapeFn(pad, {{2, 3}, {2, 3}}).status, kInvalidArgument, "paddings must be");
  EXPECT_STATUS(RunShapeFn(pad, {{2, 3}, {4}}).status, kInvalidArgument, "paddings must be");
}

TEST(PackShapeFnTest, InsertsNAtTheAxisAndMergesInputs) {
  ShapeFnRun r = RunShapeFn(
      NodeDefBuilder("p", "Pack").Attr("T", DT_FLOAT).Attr("N", 3).Attr("axis", int64_t{-1}),
      {PartialTensorShape({2, -1}), PartialTensorShape(), PartialTensorShape({-1, 5})});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,5,3]");
}

TEST(PackShapeFnTest, MismatchAndAxisErrorsNameTheNode) {
  auto pack = [](int64_t axis) {
    return NodeDefBuilder("stack", "Pack").Attr("T", DT_FLOAT).Attr("N", 2).Attr("axis", axis);
  };
  EXPECT_STATUS(RunShapeFn(pack(0), {{2, 3}, {2, 4}}).status, kInvalidArgument,
                "node 'stack' (Pack): Pack input 1 has shape [2,4], but input 0 has shape [2,3]");
  EXPECT_STATUS(RunShapeFn(pack(3), {{2, 3}, {2, 3}}).status, kInvalidArgument,
                "node 'stack' (Pack): axis 3 is out of range [-3, 3)");
}

TEST(UnpackShapeFnTest, DropsTheAxis) {
  auto unpack = [](int num, int64_t axis) {
    return NodeDefBuilder("u", "Unpack").Attr("T", DT_FLOAT).Attr("num", num).Attr("axis", axis);
  };
  ShapeFnRun r = RunShapeFn(unpack(2, 1), {{4, -1, 5}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs, (std::vector<std::string>{"[4,5]", "[4,5]"}));
  EXPECT_STATUS(RunShapeFn(unpack(3, 0), {{2, 5}}).status, kInvalidArgument,
                "dimension 0 of [2,5] must be num = 3");
}

}  // namespace
}  // namespace tensorgrid
