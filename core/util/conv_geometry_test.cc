#include "core/util/conv_geometry.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/platform/status_testutil.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

using Dims = std::vector<int64_t>;

NodeDefBuilder ConvNode(const std::string& padding, const std::string& format = "NHWC") {
  NodeDefBuilder b("c", "Conv2D");
  b.Attr("padding", padding).Attr("data_format", format);
  b.Attr("strides", std::vector<int64_t>{1, 1, 1, 1});
  return b;
}

Conv2DAttrs Parse(const NodeDefBuilder& b) {
  auto attrs = ParseConv2DAttrs(b.def());
  EXPECT_TRUE(attrs.ok()) << attrs.status();
  return attrs.ok() ? *attrs : Conv2DAttrs{};
}

TEST(ConvGeometryTest, ReadsStridesDilationsAndPaddingsInTheDataFormatsOrder) {
  NodeDefBuilder b = ConvNode("EXPLICIT", "NCHW");
  b.Attr("strides", std::vector<int64_t>{1, 1, 2, 3});
  b.Attr("dilations", std::vector<int64_t>{1, 1, 4, 5});
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 0, 0, 1, 2, 3, 4});
  Conv2DAttrs a = Parse(b);
  EXPECT_EQ(a.format, DataFormat::kNCHW);
  EXPECT_EQ(a.stride_rows, 2);
  EXPECT_EQ(a.stride_cols, 3);
  EXPECT_EQ(a.dilation_rows, 4);
  EXPECT_EQ(a.dilation_cols, 5);
  EXPECT_EQ(a.pad_top, 1);
  EXPECT_EQ(a.pad_bottom, 2);
  EXPECT_EQ(a.pad_left, 3);
  EXPECT_EQ(a.pad_right, 4);
}

TEST(ConvGeometryTest, BadAttrsSayWhatIsWrong) {
  NodeDefBuilder b = ConvNode("SAME");
  b.Attr("strides", std::vector<int64_t>{1, 2, 2});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument, "strides must have 4");
  b.Attr("strides", std::vector<int64_t>{2, 1, 1, 1});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument,
                "strides in the batch and depth dimensions must be 1");
  b.Attr("strides", std::vector<int64_t>{1, 0, 1, 1});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument, "strides must be positive");
  b.Attr("strides", std::vector<int64_t>{1, 1, 1, 1});
  b.Attr("dilations", std::vector<int64_t>{1, 1, 1, 2});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument,
                "dilations in the batch and depth dimensions must be 1");
  b.Attr("dilations", std::vector<int64_t>{1, 1, 1, 1});
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument,
                "must be empty unless padding is EXPLICIT");
  b.Attr("padding", std::string("EXPLICIT"));
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument, "must have 8 entries");
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, -1, 1, 1, 0, 0});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument, "must not be negative");
  b.Attr("explicit_paddings", std::vector<int64_t>{1, 0, 1, 1, 1, 1, 0, 0});
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument,
                "explicit_paddings in the batch and depth dimensions must be 0");
  b.Attr("padding", std::string("FULL"));
  EXPECT_STATUS(ParseConv2DAttrs(b.def()).status(), kInvalidArgument, "padding 'FULL'");
}

TEST(ConvGeometryTest, Conv2DOutputSizes) {
  NodeDefBuilder b = ConvNode("SAME");
  b.Attr("strides", std::vector<int64_t>{1, 2, 2, 1});
  auto g = ComputeConvGeometry(Parse(b), ConvKind::kConv2D, Dims{8, 28, 27, 3}, Dims{3, 3, 3, 16});
  ASSERT_OK(g.status());
  EXPECT_EQ(g->OutputDims(), (Dims{8, 14, 14, 16}));
  EXPECT_EQ(g->groups, 1);
  EXPECT_EQ(g->rows.pad_before, 0);
  EXPECT_EQ(g->rows.pad_after, 1);
  EXPECT_EQ(FilterDimsOf(*g, ConvKind::kConv2D), (Dims{3, 3, 3, 16}));
}

TEST(ConvGeometryTest, GroupsWhenTheInputHasAMultipleOfTheFiltersDepth) {
  auto g = ComputeConvGeometry(Parse(ConvNode("VALID", "NCHW")), ConvKind::kConv2D,
                               Dims{2, 6, 5, 5}, Dims{3, 3, 2, 9});
  ASSERT_OK(g.status());
  EXPECT_EQ(g->groups, 3);
  EXPECT_EQ(g->OutputDims(), (Dims{2, 9, 3, 3}));
}

TEST(ConvGeometryTest, DepthwiseMultipliesTheChannels) {
  auto g = ComputeConvGeometry(Parse(ConvNode("VALID")), ConvKind::kDepthwise, Dims{2, 5, 5, 4},
                               Dims{3, 3, 4, 2});
  ASSERT_OK(g.status());
  EXPECT_EQ(g->groups, 4);
  EXPECT_EQ(g->OutputDims(), (Dims{2, 3, 3, 8}));
  EXPECT_EQ(g->GroupedFilterDims(), (Dims{3, 3, 1, 8}));
  EXPECT_EQ(FilterDimsOf(*g, ConvKind::kDepthwise), (Dims{3, 3, 4, 2}));
}

TEST(ConvGeometryTest, UnknownSizesStayUnknown) {
  auto g = ComputeConvGeometry(Parse(ConvNode("SAME")), ConvKind::kConv2D, Dims{-1, 10, -1, 3},
                               Dims{3, 3, 3, -1});
  ASSERT_OK(g.status());
  EXPECT_EQ(g->OutputDims(), (Dims{-1, 10, -1, -1}));
}

TEST(ConvGeometryTest, BadShapesSayWhichDimension) {
  const Conv2DAttrs a = Parse(ConvNode("VALID"));
  EXPECT_STATUS(ComputeConvGeometry(a, ConvKind::kConv2D, Dims{1, 5, 5}, Dims{3, 3, 1, 1}).status(),
                kInvalidArgument, "input must be 4-D, got [1,5,5]");
  EXPECT_STATUS(ComputeConvGeometry(a, ConvKind::kConv2D, Dims{1, 5, 5, 4}, Dims{3, 3, 3, 1})
                    .status(),
                kInvalidArgument, "input depth 4 must be a multiple of the filter's depth 3");
  EXPECT_STATUS(ComputeConvGeometry(a, ConvKind::kConv2D, Dims{1, 5, 5, 4}, Dims{3, 3, 2, 3})
                    .status(),
                kInvalidArgument, "must be a multiple of the number of groups 2");
  EXPECT_STATUS(ComputeConvGeometry(a, ConvKind::kDepthwise, Dims{1, 5, 5, 4}, Dims{3, 3, 2, 1})
                    .status(),
                kInvalidArgument, "input depth 4 must equal the filter's 2");
  EXPECT_STATUS(ComputeConvGeometry(a, ConvKind::kConv2D, Dims{1, 5, 2, 1}, Dims{3, 3, 1, 1})
                    .status(),
                kInvalidArgument, "cols: window of 3");
}

}  // namespace
}  // namespace tensorgrid
