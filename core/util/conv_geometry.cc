#include "core/util/conv_geometry.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// A 4-entry per-dimension attr (strides, dilations): positive, 1 in batch
// and depth. Returns the rows and cols entries.
absl::Status ReadSpatialPair(const NodeDef& node, const char* name, const ImageAxes& axes,
                             int64_t* rows, int64_t* cols) {
  std::vector<int64_t> v = {1, 1, 1, 1};
  if (HasNodeAttr(node, name)) TG_RETURN_IF_ERROR(GetNodeAttr(node, name, &v));
  if (v.size() != 4) {
    return errors::InvalidArgument(name, " must have 4 entries (one per dimension), got ",
                                   v.size(), ": [", absl::StrJoin(v, ","), "]");
  }
  for (int64_t x : v) {
    if (x <= 0) {
      return errors::InvalidArgument(name, " must be positive, got [", absl::StrJoin(v, ","),
                                     "]");
    }
  }
  if (v[axes.batch] != 1 || v[axes.channels] != 1) {
    return errors::InvalidArgument(name, " in the batch and depth dimensions must be 1, got [",
                                   absl::StrJoin(v, ","), "]");
  }
  *rows = v[axes.rows];
  *cols = v[axes.cols];
  return absl::OkStatus();
}

absl::Status ReadExplicitPaddings(const NodeDef& node, const ImageAxes& axes, Conv2DAttrs* attrs) {
  std::vector<int64_t> p;
  if (HasNodeAttr(node, "explicit_paddings")) {
    TG_RETURN_IF_ERROR(GetNodeAttr(node, "explicit_paddings", &p));
  }
  if (attrs->padding != Padding::kExplicit) {
    if (!p.empty()) {
      return errors::InvalidArgument("explicit_paddings must be empty unless padding is EXPLICIT, "
                                     "got [", absl::StrJoin(p, ","), "]");
    }
    return absl::OkStatus();
  }
  if (p.size() != 8) {
    return errors::InvalidArgument("explicit_paddings must have 8 entries (before and after for "
                                   "each of 4 dimensions) with padding EXPLICIT, got ",
                                   p.size());
  }
  for (int64_t x : p) {
    if (x < 0) {
      return errors::InvalidArgument("explicit_paddings must not be negative, got [",
                                     absl::StrJoin(p, ","), "]");
    }
  }
  if (p[2 * axes.batch] || p[2 * axes.batch + 1] || p[2 * axes.channels] ||
      p[2 * axes.channels + 1]) {
    return errors::InvalidArgument("explicit_paddings in the batch and depth dimensions must be "
                                   "0, got [", absl::StrJoin(p, ","), "]");
  }
  attrs->pad_top = p[2 * axes.rows];
  attrs->pad_bottom = p[2 * axes.rows + 1];
  attrs->pad_left = p[2 * axes.cols];
  attrs->pad_right = p[2 * axes.cols + 1];
  return absl::OkStatus();
}

// One spatial dimension; output -1 when input or window is unknown.
absl::StatusOr<WindowDim> SpatialDim(const char* which, int64_t input, int64_t window,
                                     int64_t stride, int64_t dilation, Padding padding,
                                     int64_t before, int64_t after) {
  if (input < 0 || window < 0) {
    WindowDim d;
    d.input = input;
    d.window = window;
    d.stride = stride;
    d.dilation = dilation;
    d.output = -1;
    return d;
  }
  absl::StatusOr<WindowDim> d =
      ComputeWindowDim(input, window, stride, dilation, padding, before, after);
  if (!d.ok()) return WithContext(d.status(), which);
  return d;
}

std::string DimsString(absl::Span<const int64_t> dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

}  // namespace

absl::StatusOr<Conv2DAttrs> ParseConv2DAttrs(const NodeDef& node) {
  Conv2DAttrs attrs;
  std::string text = "NHWC";
  if (HasNodeAttr(node, "data_format")) TG_RETURN_IF_ERROR(GetNodeAttr(node, "data_format", &text));
  TG_RETURN_IF_ERROR(ParseDataFormat(text, &attrs.format));
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "padding", &text));
  TG_RETURN_IF_ERROR(ParsePadding(text, &attrs.padding));
  const ImageAxes axes = AxesOf(attrs.format);
  TG_RETURN_IF_ERROR(ReadSpatialPair(node, "strides", axes, &attrs.stride_rows, &attrs.stride_cols));
  TG_RETURN_IF_ERROR(
      ReadSpatialPair(node, "dilations", axes, &attrs.dilation_rows, &attrs.dilation_cols));
  TG_RETURN_IF_ERROR(ReadExplicitPaddings(node, axes, &attrs));
  return attrs;
}

absl::StatusOr<ConvGeometry> ComputeConvGeometry(const Conv2DAttrs& attrs, ConvKind kind,
                                                 absl::Span<const int64_t> input,
                                                 absl::Span<const int64_t> filter) {
  if (input.size() != 4) {
    return errors::InvalidArgument("input must be 4-D, got ", DimsString(input));
  }
  if (filter.size() != 4) {
    return errors::InvalidArgument("filter must be 4-D, got ", DimsString(filter));
  }
  const ImageAxes axes = AxesOf(attrs.format);
  ConvGeometry g;
  g.format = attrs.format;
  g.batch = input[axes.batch];
  g.in_depth = input[axes.channels];
  const int64_t filter_depth = filter[2];
  if (filter_depth == 0) return errors::InvalidArgument("filter depth is 0: ", DimsString(filter));
  if (kind == ConvKind::kDepthwise) {
    if (g.in_depth >= 0 && filter_depth >= 0 && g.in_depth != filter_depth) {
      return errors::InvalidArgument("input depth ", g.in_depth, " must equal the filter's ",
                                     filter_depth, " (input ", DimsString(input), ", filter ",
                                     DimsString(filter), ")");
    }
    const int64_t depth = g.in_depth >= 0 ? g.in_depth : filter_depth;
    g.in_depth = depth;
    g.groups = depth;
    g.out_depth = depth >= 0 && filter[3] >= 0 ? depth * filter[3] : -1;
  } else {
    if (g.in_depth >= 0 && filter_depth > 0 && g.in_depth % filter_depth != 0) {
      return errors::InvalidArgument("input depth ", g.in_depth,
                                     " must be a multiple of the filter's depth ", filter_depth,
                                     " (input ", DimsString(input), ", filter ",
                                     DimsString(filter), ")");
    }
    g.groups = g.in_depth >= 0 && filter_depth > 0 ? g.in_depth / filter_depth : -1;
    g.out_depth = filter[3];
    if (g.groups > 0 && g.out_depth >= 0 && g.out_depth % g.groups != 0) {
      return errors::InvalidArgument("filter's out depth ", g.out_depth,
                                     " must be a multiple of the number of groups ", g.groups,
                                     " (input ", DimsString(input), ", filter ",
                                     DimsString(filter), ")");
    }
  }
  TG_ASSIGN_OR_RETURN(g.rows, SpatialDim("rows", input[axes.rows], filter[0], attrs.stride_rows,
                                         attrs.dilation_rows, attrs.padding, attrs.pad_top,
                                         attrs.pad_bottom));
  TG_ASSIGN_OR_RETURN(g.cols, SpatialDim("cols", input[axes.cols], filter[1], attrs.stride_cols,
                                         attrs.dilation_cols, attrs.padding, attrs.pad_left,
                                         attrs.pad_right));
  return g;
}

std::vector<int64_t> ConvGeometry::InputDims() const {
  if (format == DataFormat::kNHWC) return {batch, rows.input, cols.input, in_depth};
  return {batch, in_depth, rows.input, cols.input};
}

std::vector<int64_t> ConvGeometry::OutputDims() const {
  if (format == DataFormat::kNHWC) return {batch, rows.output, cols.output, out_depth};
  return {batch, out_depth, rows.output, cols.output};
}

std::vector<int64_t> ConvGeometry::GroupedFilterDims() const {
  const int64_t per_group = in_depth >= 0 && groups > 0 ? in_depth / groups : -1;
  return {rows.window, cols.window, per_group, out_depth};
}

std::vector<int64_t> FilterDimsOf(const ConvGeometry& g, ConvKind kind) {
  if (kind == ConvKind::kConv2D) return g.GroupedFilterDims();
  const int64_t multiplier = g.in_depth > 0 && g.out_depth >= 0 ? g.out_depth / g.in_depth : -1;
  return {g.rows.window, g.cols.window, g.in_depth, multiplier};
}

}  // namespace tensorgrid
