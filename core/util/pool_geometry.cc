#include "core/util/pool_geometry.h"

#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// A 4-entry list attr, checked: positive, 1 at batch and channels.
absl::Status ReadWindowList(const NodeDef& node, const char* name, const ImageAxes& axes,
                            std::vector<int64_t>* out) {
  TG_RETURN_IF_ERROR(GetNodeAttr(node, name, out));
  if (out->size() != 4) {
    return errors::InvalidArgument(name, " must have 4 entries, got ", out->size());
  }
  for (int64_t v : *out) {
    if (v <= 0) return errors::InvalidArgument(name, " entries must be positive, got ", v);
  }
  if ((*out)[axes.batch] != 1 || (*out)[axes.channels] != 1) {
    return errors::InvalidArgument(name, " must be 1 in the batch and depth dimensions, got [",
                                   (*out)[0], ", ", (*out)[1], ", ", (*out)[2], ", ", (*out)[3],
                                   "]: pooling across examples or channels is not supported");
  }
  return absl::OkStatus();
}

absl::Status ReadExplicitPaddings(const NodeDef& node, const ImageAxes& axes, Pool2DAttrs* a) {
  std::vector<int64_t> pads;
  if (HasNodeAttr(node, "explicit_paddings")) {
    TG_RETURN_IF_ERROR(GetNodeAttr(node, "explicit_paddings", &pads));
  }
  if (a->padding != Padding::kExplicit) {
    if (!pads.empty()) {
      return errors::InvalidArgument("explicit_paddings must be empty unless padding is EXPLICIT");
    }
    return absl::OkStatus();
  }
  if (pads.size() != 8) {
    return errors::InvalidArgument(
        "explicit_paddings must have 8 entries for EXPLICIT padding, got ", pads.size());
  }
  for (int64_t p : pads) {
    if (p < 0) return errors::InvalidArgument("explicit_paddings entries must be >= 0, got ", p);
  }
  if (pads[2 * axes.batch] != 0 || pads[2 * axes.batch + 1] != 0 || pads[2 * axes.channels] != 0 ||
      pads[2 * axes.channels + 1] != 0) {
    return errors::InvalidArgument("explicit_paddings must be 0 in the batch and depth dimensions");
  }
  for (int axis : {axes.rows, axes.cols}) {
    const int64_t window = axis == axes.rows ? a->window_rows : a->window_cols;
    if (pads[2 * axis] >= window || pads[2 * axis + 1] >= window) {
      return errors::InvalidArgument("explicit_paddings must be smaller than the window (", window,
                                     "), got ", pads[2 * axis], " and ", pads[2 * axis + 1]);
    }
  }
  a->pad_top = pads[2 * axes.rows];
  a->pad_bottom = pads[2 * axes.rows + 1];
  a->pad_left = pads[2 * axes.cols];
  a->pad_right = pads[2 * axes.cols + 1];
  return absl::OkStatus();
}

// The window along one spatial axis; unknown (-1) input gives unknown output.
absl::StatusOr<WindowDim> SpatialDim(const char* axis, int64_t input, int64_t window,
                                     int64_t stride, Padding padding, int64_t before,
                                     int64_t after) {
  if (input < 0) {
    WindowDim unknown;
    unknown.input = unknown.output = -1;
    unknown.window = window;
    unknown.stride = stride;
    return unknown;
  }
  auto dim = ComputeWindowDim(input, window, stride, /*dilation=*/1, padding, before, after);
  if (!dim.ok()) return WithContext(dim.status(), axis);
  return dim;
}

}  // namespace

absl::StatusOr<Pool2DAttrs> ParsePool2DAttrs(const NodeDef& node) {
  Pool2DAttrs a;
  std::string text = "NHWC";
  if (HasNodeAttr(node, "data_format")) TG_RETURN_IF_ERROR(GetNodeAttr(node, "data_format", &text));
  TG_RETURN_IF_ERROR(ParseDataFormat(text, &a.format));
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "padding", &text));
  TG_RETURN_IF_ERROR(ParsePadding(text, &a.padding));
  const ImageAxes axes = AxesOf(a.format);
  std::vector<int64_t> ksize, strides;
  TG_RETURN_IF_ERROR(ReadWindowList(node, "ksize", axes, &ksize));
  TG_RETURN_IF_ERROR(ReadWindowList(node, "strides", axes, &strides));
  a.window_rows = ksize[axes.rows];
  a.window_cols = ksize[axes.cols];
  a.stride_rows = strides[axes.rows];
  a.stride_cols = strides[axes.cols];
  TG_RETURN_IF_ERROR(ReadExplicitPaddings(node, axes, &a));
  return a;
}

std::array<int64_t, 4> Pool2DGeometry::InputDims() const {
  const ImageAxes axes = AxesOf(format);
  std::array<int64_t, 4> dims;
  dims[axes.batch] = batch;
  dims[axes.rows] = rows.input;
  dims[axes.cols] = cols.input;
  dims[axes.channels] = channels;
  return dims;
}

std::array<int64_t, 4> Pool2DGeometry::OutputDims() const {
  const ImageAxes axes = AxesOf(format);
  std::array<int64_t, 4> dims;
  dims[axes.batch] = batch;
  dims[axes.rows] = rows.output;
  dims[axes.cols] = cols.output;
  dims[axes.channels] = channels;
  return dims;
}

absl::StatusOr<Pool2DGeometry> ComputePool2DGeometry(const Pool2DAttrs& attrs,
                                                     const std::array<int64_t, 4>& input_dims) {
  const ImageAxes axes = AxesOf(attrs.format);
  Pool2DGeometry g;
  g.format = attrs.format;
  g.batch = input_dims[axes.batch];
  g.channels = input_dims[axes.channels];
  TG_ASSIGN_OR_RETURN(
      g.rows, SpatialDim("rows", input_dims[axes.rows], attrs.window_rows, attrs.stride_rows,
                         attrs.padding, attrs.pad_top, attrs.pad_bottom));
  TG_ASSIGN_OR_RETURN(
      g.cols, SpatialDim("cols", input_dims[axes.cols], attrs.window_cols, attrs.stride_cols,
                         attrs.padding, attrs.pad_left, attrs.pad_right));
  return g;
}

}  // namespace tensorgrid
