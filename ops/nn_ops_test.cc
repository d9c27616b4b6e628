// The shape functions of the pooling, batch-norm and Relu6 ops.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/shape_fn_testutil.h"

namespace tensorgrid {
namespace {

NodeDefBuilder Pool(const std::string& op, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                    const std::string& padding, const std::string& format = "NHWC") {
  NodeDefBuilder b("p", op);
  b.Attr("T", DT_FLOAT).Attr("ksize", ksize).Attr("strides", strides).Attr("padding", padding);
  b.Attr("data_format", format);
  return b;
}

TEST(PoolShapeTest, SameAndValidOutputSizes) {
  ShapeFnRun same = RunShapeFn(Pool("MaxPool", {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME"), {{8, 7, 9, 5}});
  ASSERT_OK(same.status);
  EXPECT_EQ(same.outputs[0], "[8,4,5,5]");
  ShapeFnRun valid =
      RunShapeFn(Pool("AvgPool", {1, 3, 3, 1}, {1, 2, 2, 1}, "VALID"), {{8, 7, 9, 5}});
  ASSERT_OK(valid.status);
  EXPECT_EQ(valid.outputs[0], "[8,3,4,5]");
}

TEST(PoolShapeTest, NCHWAndUnknownDims) {
  ShapeFnRun r =
      RunShapeFn(Pool("MaxPool", {1, 1, 2, 2}, {1, 1, 2, 2}, "VALID", "NCHW"), {{-1, 3, 8, -1}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[?,3,4,?]");
  ShapeFnRun unknown =
      RunShapeFn(Pool("MaxPool", {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"), {PartialTensorShape()});
  ASSERT_OK(unknown.status);
  EXPECT_EQ(unknown.outputs[0], "[?,?,?,?]");
}

TEST(PoolShapeTest, ExplicitPaddings) {
  NodeDefBuilder b = Pool("MaxPool", {1, 3, 3, 1}, {1, 1, 1, 1}, "EXPLICIT");
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 2, 0, 1, 0, 0});
  ShapeFnRun r = RunShapeFn(b, {{2, 5, 5, 3}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,6,4,3]");
  b.Attr("explicit_paddings", std::vector<int64_t>{1, 0, 1, 2, 0, 1, 0, 0});
  EXPECT_STATUS(RunShapeFn(b, {{2, 5, 5, 3}}).status, kInvalidArgument,
                "node 'p' (MaxPool): explicit_paddings must be 0 in the batch and depth");
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0});
  EXPECT_STATUS(RunShapeFn(b, {{2, 5, 5, 3}}).status, kInvalidArgument,
                "smaller than the window (3)");
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1});
  EXPECT_STATUS(RunShapeFn(b, {{2, 5, 5, 3}}).status, kInvalidArgument, "8 entries");
}

TEST(PoolShapeTest, BadAttrsAndRanksNameTheNode) {
  EXPECT_STATUS(
      RunShapeFn(Pool("MaxPool", {2, 2, 2, 1}, {1, 2, 2, 1}, "VALID"), {{4, 8, 8, 3}}).status,
      kInvalidArgument, "node 'p' (MaxPool): ksize must be 1 in the batch and depth");
  EXPECT_STATUS(
      RunShapeFn(Pool("AvgPool", {1, 2, 2, 1}, {1, 2, 2, 2}, "VALID"), {{4, 8, 8, 3}}).status,
      kInvalidArgument, "node 'p' (AvgPool): strides must be 1 in the batch and depth");
  EXPECT_STATUS(
      RunShapeFn(Pool("AvgPool", {1, 2, 2, 1, 1}, {1, 2, 2, 1}, "VALID"), {{4, 8, 8, 3}}).status,
      kInvalidArgument, "ksize must have 4 entries, got 5");
  EXPECT_STATUS(
      RunShapeFn(Pool("MaxPool", {1, 2, 0, 1}, {1, 2, 2, 1}, "VALID"), {{4, 8, 8, 3}}).status,
      kInvalidArgument, "ksize entries must be positive");
  EXPECT_STATUS(
      RunShapeFn(Pool("MaxPool", {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"), {{8, 8, 3}}).status,
      kInvalidArgument, "node 'p' (MaxPool): input must be 4-D, got [8,8,3]");
  EXPECT_STATUS(
      RunShapeFn(Pool("MaxPool", {1, 5, 2, 1}, {1, 1, 1, 1}, "VALID"), {{1, 4, 4, 1}}).status,
      kInvalidArgument, "node 'p' (MaxPool): rows: window of 5");
  // AvgPool has no EXPLICIT padding, as in TensorFlow.
  EXPECT_STATUS(
      RunShapeFn(Pool("AvgPool", {1, 2, 2, 1}, {1, 1, 1, 1}, "EXPLICIT"), {{1, 4, 4, 1}}).status,
      kInvalidArgument, "padding");
}

TEST(PoolShapeTest, Gradients) {
  ShapeFnRun max = RunShapeFn(Pool("MaxPoolGrad", {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"),
                              {{2, 6, 6, 3}, {2, 3, 3, 3}, {2, 3, 3, 3}});
  ASSERT_OK(max.status);
  EXPECT_EQ(max.outputs[0], "[2,6,6,3]");
  ShapeFnRun avg =
      RunShapeFn(Pool("AvgPoolGrad", {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"), {{4}, {2, 3, 3, 3}});
  ASSERT_OK(avg.status);
  EXPECT_EQ(avg.outputs[0], "[?,?,?,?]");
  EXPECT_STATUS(
      RunShapeFn(Pool("AvgPoolGrad", {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"), {{3}, {2, 3, 3, 3}})
          .status,
      kInvalidArgument, "node 'p' (AvgPoolGrad): orig_input_shape must be a vector of 4");
  EXPECT_STATUS(RunShapeFn(Pool("MaxPoolGrad", {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"),
                           {{2, 6, 6, 3}, {2, 3, 3, 3}, {2, 3, 3}})
                    .status,
                kInvalidArgument, "grad must be 4-D");
}

NodeDefBuilder BatchNorm(const std::string& op, bool training, const std::string& format = "NHWC") {
  NodeDefBuilder b("bn", op);
  b.Attr("T", DT_FLOAT).Attr("U", DT_FLOAT).Attr("is_training", training);
  b.Attr("data_format", format);
  return b;
}

TEST(BatchNormShapeTest, OutputsPerChannel) {
  ShapeFnRun r =
      RunShapeFn(BatchNorm("FusedBatchNormV3", true, "NCHW"), {{8, 4, 5, 5}, {4}, {4}, {0}, {0}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs, (std::vector<std::string>{"[8,4,5,5]", "[4]", "[4]", "[4]", "[4]", "[0]"}));
  ShapeFnRun grad = RunShapeFn(BatchNorm("FusedBatchNormGradV3", true),
                               {{8, 5, 5, 4}, {8, 5, 5, 4}, {4}, {4}, {4}, {0}});
  ASSERT_OK(grad.status);
  EXPECT_EQ(grad.outputs, (std::vector<std::string>{"[8,5,5,4]", "[4]", "[4]", "[0]", "[0]"}));
}

TEST(BatchNormShapeTest, BadShapesNameTheNode) {
  EXPECT_STATUS(
      RunShapeFn(BatchNorm("FusedBatchNormV3", true), {{8, 5, 4}, {4}, {4}, {4}, {4}}).status,
      kInvalidArgument, "node 'bn' (FusedBatchNormV3): x must be 4-D");
  EXPECT_STATUS(
      RunShapeFn(BatchNorm("FusedBatchNormV3", true), {{8, 5, 5, 4}, {3}, {4}, {4}, {4}}).status,
      kInvalidArgument, "scale must have one entry per channel (4), got [3]");
  // Inference needs the moving statistics.
  EXPECT_STATUS(
      RunShapeFn(BatchNorm("FusedBatchNormV3", false), {{8, 5, 5, 4}, {4}, {4}, {0}, {4}}).status,
      kInvalidArgument, "mean must have one entry per channel");
  EXPECT_STATUS(RunShapeFn(BatchNorm("FusedBatchNormGradV3", true),
                           {{8, 5, 5, 4}, {8, 5, 5, 4}, {4, 1}, {4}, {4}, {0}})
                    .status,
                kInvalidArgument, "node 'bn' (FusedBatchNormGradV3): scale must be 1-D");
}

TEST(Relu6ShapeTest, SameShape) {
  ShapeFnRun r = RunShapeFn(NodeDefBuilder("r", "Relu6").Attr("T", DT_FLOAT), {{2, -1}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs[0], "[2,?]");
  EXPECT_STATUS(
      RunShapeFn(NodeDefBuilder("r", "Relu6Grad").Attr("T", DT_FLOAT), {{2, 3}, {2, 4}}).status,
      kInvalidArgument, "same shape");
}

}  // namespace
}  // namespace tensorgrid
