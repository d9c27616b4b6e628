// Convolution op definitions, in TensorFlow's spelling: Conv2D,
// DepthwiseConv2dNative and the backprops of each with respect to input and
// filter. Geometry (attrs, output sizes): core/util/conv_geometry.h. Kernels:
// kernels/conv/ (oneDNN); gradients: client/gradients/conv_grad.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"
#include "core/util/conv_geometry.h"

namespace tensorgrid {
namespace {

constexpr char kConvAttrs[] = R"doc(
strides: The stride of the sliding window for each dimension of `input`, in
  `data_format`'s order; 1 in the batch and depth dimensions.
padding: VALID (none), SAME (output = ceil(input / stride)) or EXPLICIT
  (`explicit_paddings`).
explicit_paddings: With EXPLICIT padding, before and after amounts for each
  dimension in `data_format`'s order (8 entries, 0 for batch and depth).
data_format: "NHWC" ([batch, rows, cols, channels]) or "NCHW".
dilations: The spacing of the filter's taps in each dimension of `input`
  (1: adjacent); 1 in the batch and depth dimensions.
)doc";

std::string NodePrefix(const ShapeInferenceContext& c) {
  return absl::StrCat("node '", c.node().name(), "' (", c.node().op(), ")");
}

// The 4 dims of input `i` (-1 where unknown); InvalidArgument naming `what`
// when its rank is known and not 4.
absl::Status FourDims(const ShapeInferenceContext& c, int i, const char* what,
                      std::vector<int64_t>* dims) {
  const PartialTensorShape& s = c.input(i);
  if (s.unknown_rank()) {
    *dims = {-1, -1, -1, -1};
    return absl::OkStatus();
  }
  if (s.dims() != 4) {
    return errors::InvalidArgument(NodePrefix(c), ": ", what, " must be 4-D, got ",
                                   s.DebugString());
  }
  *dims = {s.dim_size(0), s.dim_size(1), s.dim_size(2), s.dim_size(3)};
  return absl::OkStatus();
}

// input_sizes / filter_sizes: a vector of 4 int32s.
absl::Status CheckSizesInput(const ShapeInferenceContext& c, int i, const char* what) {
  const PartialTensorShape& s = c.input(i);
  if (s.unknown_rank()) return absl::OkStatus();
  if (s.dims() != 1 || (s.dim_size(0) >= 0 && s.dim_size(0) != 4)) {
    return errors::InvalidArgument(NodePrefix(c), ": ", what, " must be a vector of 4 sizes, got ",
                                   "shape ", s.DebugString());
  }
  return absl::OkStatus();
}

absl::Status ConvForwardShape(ShapeInferenceContext& c, ConvKind kind) {
  absl::StatusOr<Conv2DAttrs> attrs = ParseConv2DAttrs(c.node());
  if (!attrs.ok()) return WithContext(attrs.status(), NodePrefix(c));
  std::vector<int64_t> input, filter;
  TG_RETURN_IF_ERROR(FourDims(c, 0, "input", &input));
  TG_RETURN_IF_ERROR(FourDims(c, 1, "filter", &filter));
  absl::StatusOr<ConvGeometry> g = ComputeConvGeometry(*attrs, kind, input, filter);
  if (!g.ok()) return WithContext(g.status(), NodePrefix(c));
  c.set_output(0, PartialTensorShape(g->OutputDims()));
  return absl::OkStatus();
}

// Depth of out_backprop against the filter's output depth.
absl::Status CheckOutBackpropDepth(const ShapeInferenceContext& c, ConvKind kind,
                                   const Conv2DAttrs& attrs, const std::vector<int64_t>& filter,
                                   const std::vector<int64_t>& out_backprop) {
  const int64_t got = out_backprop[AxesOf(attrs.format).channels];
  int64_t want = filter[3];
  if (kind == ConvKind::kDepthwise) want = filter[2] >= 0 && filter[3] >= 0 ? filter[2] * filter[3] : -1;
  if (got >= 0 && want >= 0 && got != want) {
    return errors::InvalidArgument(NodePrefix(c), ": out_backprop depth ", got,
                                   " must equal the filter's output depth ", want);
  }
  return absl::OkStatus();
}

// Inputs: input_sizes, filter, out_backprop. Output: the input's shape, of
// which the batch (and for depthwise the depth) is known here.
absl::Status BackpropInputShape(ShapeInferenceContext& c, ConvKind kind) {
  absl::StatusOr<Conv2DAttrs> attrs = ParseConv2DAttrs(c.node());
  if (!attrs.ok()) return WithContext(attrs.status(), NodePrefix(c));
  TG_RETURN_IF_ERROR(CheckSizesInput(c, 0, "input_sizes"));
  std::vector<int64_t> filter, out_backprop;
  TG_RETURN_IF_ERROR(FourDims(c, 1, "filter", &filter));
  TG_RETURN_IF_ERROR(FourDims(c, 2, "out_backprop", &out_backprop));
  TG_RETURN_IF_ERROR(CheckOutBackpropDepth(c, kind, *attrs, filter, out_backprop));
  const ImageAxes axes = AxesOf(attrs->format);
  std::vector<int64_t> dims = {-1, -1, -1, -1};
  dims[axes.batch] = out_backprop[axes.batch];
  if (kind == ConvKind::kDepthwise) dims[axes.channels] = filter[2];
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// Inputs: input, filter_sizes, out_backprop. Output: the filter's shape.
absl::Status BackpropFilterShape(ShapeInferenceContext& c, ConvKind kind) {
  absl::StatusOr<Conv2DAttrs> attrs = ParseConv2DAttrs(c.node());
  if (!attrs.ok()) return WithContext(attrs.status(), NodePrefix(c));
  std::vector<int64_t> input, out_backprop;
  TG_RETURN_IF_ERROR(FourDims(c, 0, "input", &input));
  TG_RETURN_IF_ERROR(CheckSizesInput(c, 1, "filter_sizes"));
  TG_RETURN_IF_ERROR(FourDims(c, 2, "out_backprop", &out_backprop));
  const ImageAxes axes = AxesOf(attrs->format);
  const int64_t in_batch = input[axes.batch], out_batch = out_backprop[axes.batch];
  if (in_batch >= 0 && out_batch >= 0 && in_batch != out_batch) {
    return errors::InvalidArgument(NodePrefix(c), ": input batch ", in_batch,
                                   " must equal out_backprop's ", out_batch);
  }
  std::vector<int64_t> dims = {-1, -1, -1, -1};
  if (kind == ConvKind::kDepthwise) {
    dims[2] = input[axes.channels];
  } else {
    dims[3] = out_backprop[axes.channels];
  }
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status Conv2DShape(ShapeInferenceContext& c) { return ConvForwardShape(c, ConvKind::kConv2D); }
absl::Status DepthwiseShape(ShapeInferenceContext& c) {
  return ConvForwardShape(c, ConvKind::kDepthwise);
}
absl::Status Conv2DBackpropInputShape(ShapeInferenceContext& c) {
  return BackpropInputShape(c, ConvKind::kConv2D);
}
absl::Status DepthwiseBackpropInputShape(ShapeInferenceContext& c) {
  return BackpropInputShape(c, ConvKind::kDepthwise);
}
absl::Status Conv2DBackpropFilterShape(ShapeInferenceContext& c) {
  return BackpropFilterShape(c, ConvKind::kConv2D);
}
absl::Status DepthwiseBackpropFilterShape(ShapeInferenceContext& c) {
  return BackpropFilterShape(c, ConvKind::kDepthwise);
}

TG_REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DShape)
    .Doc(absl::StrCat(R"doc(
A 2-D convolution of a 4-D `input` with a 4-D `filter` [rows, cols, in_depth,
out_depth] (cross-correlation, as in TensorFlow). An input with k times the
filter's in_depth is convolved in k groups.

input: [batch, rows, cols, in_depth] (NHWC) or [batch, in_depth, rows, cols].
filter: [filter_rows, filter_cols, in_depth / groups, out_depth].
use_cudnn_on_gpu: Accepted for TensorFlow's GraphDefs; has no effect.
)doc",
                      kConvAttrs));

TG_REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropInputShape)
    .Doc(absl::StrCat(R"doc(
The gradient of Conv2D with respect to its input.

input_sizes: The input's shape (4 sizes in `data_format`'s order).
filter: The convolution's filter.
out_backprop: The gradient with respect to Conv2D's output.
output: The gradient with respect to the input, of shape `input_sizes`.
use_cudnn_on_gpu: Accepted for TensorFlow's GraphDefs; has no effect.
)doc",
                      kConvAttrs));

TG_REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropFilterShape)
    .Doc(absl::StrCat(R"doc(
The gradient of Conv2D with respect to its filter.

input: The convolution's input.
filter_sizes: The filter's shape, [rows, cols, in_depth / groups, out_depth].
out_backprop: The gradient with respect to Conv2D's output.
output: The gradient with respect to the filter, of shape `filter_sizes`.
use_cudnn_on_gpu: Accepted for TensorFlow's GraphDefs; has no effect.
)doc",
                      kConvAttrs));

TG_REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(DepthwiseShape)
    .Doc(absl::StrCat(R"doc(
A depthwise 2-D convolution: each input channel is convolved with its own
`channel_multiplier` filters; output channel k * channel_multiplier + m comes
from input channel k and filter [:, :, k, m].

input: [batch, rows, cols, in_depth] (NHWC) or [batch, in_depth, rows, cols].
filter: [filter_rows, filter_cols, in_depth, channel_multiplier].
output: in_depth * channel_multiplier channels.
)doc",
                      kConvAttrs));

TG_REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(DepthwiseBackpropInputShape)
    .Doc(absl::StrCat(R"doc(
The gradient of DepthwiseConv2dNative with respect to its input.

input_sizes: The input's shape (4 sizes in `data_format`'s order).
filter: The convolution's filter, [rows, cols, in_depth, channel_multiplier].
out_backprop: The gradient with respect to the convolution's output.
output: The gradient with respect to the input, of shape `input_sizes`.
)doc",
                      kConvAttrs));

TG_REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(DepthwiseBackpropFilterShape)
    .Doc(absl::StrCat(R"doc(
The gradient of DepthwiseConv2dNative with respect to its filter.

input: The convolution's input.
filter_sizes: The filter's shape, [rows, cols, in_depth, channel_multiplier].
out_backprop: The gradient with respect to the convolution's output.
output: The gradient with respect to the filter, of shape `filter_sizes`.
)doc",
                      kConvAttrs));

}  // namespace
}  // namespace tensorgrid
