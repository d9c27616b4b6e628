// The shape functions of the convolution ops (ops/conv_ops.cc).
#include <string>
#include <vector>

#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// The op's shape function on `inputs` for a node "c" with these attrs
// (strides 1 and SAME unless set); the output's DebugString or the error.
absl::StatusOr<std::string> Infer(NodeDefBuilder b, std::vector<PartialTensorShape> inputs) {
  NodeDef node = b.def();
  const OpDef* op = OpRegistry::Global()->Find(node.op());
  if (op == nullptr) return errors::NotFound(node.op());
  if (!node.attr().contains("strides")) SetAttr(&node, "strides", std::vector<int64_t>{1, 1, 1, 1});
  if (!node.attr().contains("padding")) SetAttr(&node, "padding", "SAME");
  ShapeInferenceContext c(node, std::move(inputs), 1);
  TG_RETURN_IF_ERROR(op->shape_fn(c));
  return c.output(0).DebugString();
}

using P = PartialTensorShape;

TEST(ConvShapeTest, Conv2DOutputs) {
  NodeDefBuilder b("c", "Conv2D");
  b.Attr("strides", std::vector<int64_t>{1, 2, 2, 1}).Attr("padding", "VALID");
  EXPECT_EQ(*Infer(b, {P({8, 9, 9, 3}), P({3, 3, 3, 16})}), "[8,4,4,16]");
  EXPECT_EQ(*Infer(b, {P({-1, 9, -1, 3}), P({3, 3, 3, 16})}), "[?,4,?,16]");
  EXPECT_EQ(*Infer(b, {P(), P({3, 3, 3, 16})}), "[?,?,?,16]");
  b.Attr("data_format", "NCHW").Attr("strides", std::vector<int64_t>{1, 1, 1, 2});
  b.Attr("dilations", std::vector<int64_t>{1, 1, 2, 1});
  EXPECT_EQ(*Infer(b, {P({8, 3, 9, 9}), P({3, 3, 3, 16})}), "[8,16,5,4]");
}

TEST(ConvShapeTest, ExplicitPaddingAndDepthwise) {
  NodeDefBuilder b("c", "Conv2D");
  b.Attr("padding", "EXPLICIT").Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 2, 0, 0, 0, 0});
  EXPECT_EQ(*Infer(b, {P({1, 5, 5, 2}), P({3, 3, 2, 4})}), "[1,6,3,4]");
  NodeDefBuilder d("d", "DepthwiseConv2dNative");
  EXPECT_EQ(*Infer(d, {P({2, 7, 7, 6}), P({3, 3, 6, 2})}), "[2,7,7,12]");
  EXPECT_EQ(*Infer(d, {P({2, 7, 7, -1}), P({3, 3, 6, 2})}), "[2,7,7,12]");
}

TEST(ConvShapeTest, BackpropShapes) {
  NodeDefBuilder bi("c", "Conv2DBackpropInput");
  EXPECT_EQ(*Infer(bi, {P({4}), P({3, 3, 2, 4}), P({5, 7, 7, 4})}), "[5,?,?,?]");
  NodeDefBuilder di("d", "DepthwiseConv2dNativeBackpropInput");
  EXPECT_EQ(*Infer(di, {P({4}), P({3, 3, 2, 4}), P({5, 7, 7, 8})}), "[5,?,?,2]");
  NodeDefBuilder bf("c", "Conv2DBackpropFilter");
  EXPECT_EQ(*Infer(bf, {P({5, 7, 7, 2}), P({4}), P({5, 7, 7, 4})}), "[?,?,?,4]");
  NodeDefBuilder df("d", "DepthwiseConv2dNativeBackpropFilter");
  EXPECT_EQ(*Infer(df, {P({5, 7, 7, 2}), P({4}), P({5, 7, 7, 4})}), "[?,?,2,?]");
}

TEST(ConvShapeTest, ErrorsNameTheNodeAndWhatIsWrong) {
  NodeDefBuilder b("c1", "Conv2D");
  EXPECT_STATUS(Infer(b, {P({9, 9, 3}), P({3, 3, 3, 16})}).status(), kInvalidArgument,
                "node 'c1' (Conv2D): input must be 4-D, got [9,9,3]");
  EXPECT_STATUS(Infer(b, {P({1, 9, 9, 4}), P({3, 3, 3, 16})}).status(), kInvalidArgument,
                "node 'c1' (Conv2D): input depth 4 must be a multiple of the filter's depth 3");
  b.Attr("padding", "VALID");
  EXPECT_STATUS(Infer(b, {P({1, 2, 9, 3}), P({3, 3, 3, 16})}).status(), kInvalidArgument,
                "node 'c1' (Conv2D): rows: window of 3");
  b.Attr("strides", std::vector<int64_t>{1, 1, 1, 2, 1});
  EXPECT_STATUS(Infer(b, {P({1, 9, 9, 3}), P({3, 3, 3, 16})}).status(), kInvalidArgument,
                "node 'c1' (Conv2D): strides must have 4 entries");
  b.Attr("strides", std::vector<int64_t>{1, 1, 1, 1}).Attr("dilations", std::vector<int64_t>{2, 1, 1, 1});
  EXPECT_STATUS(Infer(b, {P({1, 9, 9, 3}), P({3, 3, 3, 16})}).status(), kInvalidArgument,
                "dilations in the batch and depth dimensions must be 1");
  NodeDefBuilder bi("c2", "Conv2DBackpropInput");
  EXPECT_STATUS(Infer(bi, {P({3}), P({3, 3, 2, 4}), P({5, 7, 7, 4})}).status(), kInvalidArgument,
                "node 'c2' (Conv2DBackpropInput): input_sizes must be a vector of 4 sizes");
  EXPECT_STATUS(Infer(bi, {P({4}), P({3, 3, 2, 4}), P({5, 7, 7, 5})}).status(), kInvalidArgument,
                "out_backprop depth 5 must equal the filter's output depth 4");
  NodeDefBuilder bf("c3", "DepthwiseConv2dNativeBackpropFilter");
  EXPECT_STATUS(Infer(bf, {P({5, 7, 7, 2}), P({4}), P({4, 7, 7, 4})}).status(), kInvalidArgument,
                "node 'c3' (DepthwiseConv2dNativeBackpropFilter): input batch 5 must equal "
                "out_backprop's 4");
}

}  // namespace
}  // namespace tensorgrid
