// The geometry of a 2-D convolution (Conv2D, DepthwiseConv2dNative and their
// backprops), shared by the ops' shape functions (ops/conv_ops.cc) and the
// kernels (kernels/conv/): the node's attrs read and checked once, then the
// input, filter and output sizes, built on window_geometry.h.
//
//   TG_ASSIGN_OR_RETURN(Conv2DAttrs attrs, ParseConv2DAttrs(node));
//   TG_ASSIGN_OR_RETURN(ConvGeometry g,
//       ComputeConvGeometry(attrs, ConvKind::kConv2D, {32, 28, 28, 3}, {3, 3, 3, 16}));
//   // g.OutputDims() == {32, 28, 28, 16} for SAME, stride 1, NHWC
//
// Sizes may be -1 (unknown, as in a shape function's partial shapes): what
// depends on them comes out -1 and is not checked. Errors are InvalidArgument
// and say which attr or dimension is wrong; the caller names the node.
#ifndef TENSORGRID_CORE_UTIL_CONV_GEOMETRY_H_
#define TENSORGRID_CORE_UTIL_CONV_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/util/window_geometry.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

// The attrs TensorFlow's convolutions share: strides, dilations, padding,
// explicit_paddings and data_format, reduced to the two spatial dimensions.
struct Conv2DAttrs {
  DataFormat format = DataFormat::kNHWC;
  Padding padding = Padding::kValid;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  // Only for Padding::kExplicit.
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

// Reads the attrs of a convolution node (dilations, explicit_paddings and
// data_format take TensorFlow's defaults when absent). As TensorFlow requires:
// strides and dilations have 4 positive entries, 1 in the batch and depth
// dimensions; explicit_paddings has 8 non-negative entries, 0 for batch and
// depth, with EXPLICIT padding and none otherwise.
absl::StatusOr<Conv2DAttrs> ParseConv2DAttrs(const NodeDef& node);

// Conv2D's filter is [rows, cols, in_depth / groups, out_depth] (groups > 1
// when the input has a multiple of the filter's depth, as TensorFlow allows);
// DepthwiseConv2dNative's is [rows, cols, in_depth, multiplier], one group per
// input channel, out_depth = in_depth * multiplier.
enum class ConvKind { kConv2D, kDepthwise };

struct ConvGeometry {
  DataFormat format = DataFormat::kNHWC;
  int64_t batch = -1;
  int64_t in_depth = -1;
  int64_t out_depth = -1;
  int64_t groups = -1;
  WindowDim rows, cols;  // input, window (the filter), stride, dilation, padding, output

  // In `format`'s order.
  std::vector<int64_t> InputDims() const;
  std::vector<int64_t> OutputDims() const;
  // The filter as a grouped convolution's: [rows, cols, in_depth / groups,
  // out_depth] (a depthwise filter is this, read in the same memory order).
  std::vector<int64_t> GroupedFilterDims() const;
};

// The geometry of `kind` for an input and filter of these sizes (4 each, -1
// where unknown). InvalidArgument when a rank is not 4, the filter's depth
// does not match (or divide) the input's, or a window does not fit.
absl::StatusOr<ConvGeometry> ComputeConvGeometry(const Conv2DAttrs& attrs, ConvKind kind,
                                                 absl::Span<const int64_t> input,
                                                 absl::Span<const int64_t> filter);

// The filter dims `kind` expects for `geometry` (what FilterDims of a
// BackpropFilter must match): [rows, cols, in/groups, out] or [rows, cols, in,
// multiplier].
std::vector<int64_t> FilterDimsOf(const ConvGeometry& geometry, ConvKind kind);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_CONV_GEOMETRY_H_
