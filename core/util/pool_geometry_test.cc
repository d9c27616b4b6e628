#include "core/util/pool_geometry.h"

#include <gtest/gtest.h>

#include "core/framework/attr_value_util.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

NodeDef PoolNode(std::vector<int64_t> ksize, std::vector<int64_t> strides, const char* padding,
                 const char* format) {
  NodeDef node;
  node.set_name("p");
  node.set_op("MaxPool");
  SetAttr(&node, "ksize", ksize);
  SetAttr(&node, "strides", strides);
  SetAttr(&node, "padding", padding);
  SetAttr(&node, "data_format", format);
  return node;
}

TEST(PoolGeometryTest, ReadsTheSpatialEntriesOfEachFormat) {
  auto nhwc = ParsePool2DAttrs(PoolNode({1, 3, 2, 1}, {1, 2, 1, 1}, "SAME", "NHWC"));
  ASSERT_OK(nhwc.status());
  EXPECT_EQ(nhwc->window_rows, 3);
  EXPECT_EQ(nhwc->window_cols, 2);
  EXPECT_EQ(nhwc->stride_rows, 2);
  EXPECT_EQ(nhwc->stride_cols, 1);
  auto nchw = ParsePool2DAttrs(PoolNode({1, 1, 3, 2}, {1, 1, 2, 1}, "VALID", "NCHW"));
  ASSERT_OK(nchw.status());
  EXPECT_EQ(nchw->window_rows, 3);
  EXPECT_EQ(nchw->stride_rows, 2);
  EXPECT_EQ(nchw->format, DataFormat::kNCHW);
}

TEST(PoolGeometryTest, OutputDimsInFormatOrder) {
  auto attrs = ParsePool2DAttrs(PoolNode({1, 1, 3, 3}, {1, 1, 2, 2}, "SAME", "NCHW"));
  ASSERT_OK(attrs.status());
  auto g = ComputePool2DGeometry(*attrs, {4, 6, 7, 9});
  ASSERT_OK(g.status());
  EXPECT_EQ(g->batch, 4);
  EXPECT_EQ(g->channels, 6);
  EXPECT_EQ(g->OutputDims(), (std::array<int64_t, 4>{4, 6, 4, 5}));
  EXPECT_EQ(g->InputDims(), (std::array<int64_t, 4>{4, 6, 7, 9}));
  EXPECT_EQ(g->rows.pad_before, 1);
}

TEST(PoolGeometryTest, Errors) {
  EXPECT_STATUS(ParsePool2DAttrs(PoolNode({1, 1, 3, 3}, {1, 2, 2, 1}, "SAME", "NCHW")).status(),
                kInvalidArgument, "strides must be 1 in the batch and depth dimensions");
  EXPECT_STATUS(ParsePool2DAttrs(PoolNode({1, 3, 3, 1}, {1, 2, 2, 1}, "FULL", "NHWC")).status(),
                kInvalidArgument, "padding 'FULL'");
  auto attrs = ParsePool2DAttrs(PoolNode({1, 3, 9, 1}, {1, 1, 1, 1}, "VALID", "NHWC"));
  ASSERT_OK(attrs.status());
  EXPECT_STATUS(ComputePool2DGeometry(*attrs, {1, 5, 5, 1}).status(), kInvalidArgument,
                "cols: window of 9");
}

}  // namespace
}  // namespace tensorgrid
