// The attrs of TensorFlow's 2-D pooling ops (MaxPool, AvgPool, MaxPoolGrad,
// AvgPoolGrad) and the windows they describe over a 4-D input, shared by the
// ops' shape functions (ops/nn_ops.cc) and their kernels (kernels/nn/):
//
//   TG_ASSIGN_OR_RETURN(Pool2DAttrs attrs, ParsePool2DAttrs(node));
//   TG_ASSIGN_OR_RETURN(Pool2DGeometry g, ComputePool2DGeometry(attrs, {32, 28, 28, 16}));
//   // g.rows.output, g.cols.output, g.OutputDims() == {32, 14, 14, 16}
//
// Errors are InvalidArgument and say which attr or dimension is wrong; the
// caller names the node (the executor prefixes kernels' errors with it).
#ifndef TENSORGRID_CORE_UTIL_POOL_GEOMETRY_H_
#define TENSORGRID_CORE_UTIL_POOL_GEOMETRY_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "core/util/window_geometry.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

// ksize, strides, padding, explicit_paddings and data_format, checked: four
// entries each, batch and depth entries 1 (no pooling across examples or
// channels), explicit paddings (8 entries, EXPLICIT only) zero there.
struct Pool2DAttrs {
  DataFormat format = DataFormat::kNHWC;
  Padding padding = Padding::kValid;
  int64_t window_rows = 1, window_cols = 1;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // EXPLICIT
};

// Reads the attrs of `node`; explicit_paddings only when its op has one.
absl::StatusOr<Pool2DAttrs> ParsePool2DAttrs(const NodeDef& node);

// One pooling op over one input: sizes in natural order, windows per axis.
struct Pool2DGeometry {
  DataFormat format = DataFormat::kNHWC;
  int64_t batch = 0, channels = 0;
  WindowDim rows, cols;

  // The input's and output's dims in `format` order.
  std::array<int64_t, 4> InputDims() const;
  std::array<int64_t, 4> OutputDims() const;
};

// The geometry for input dims in attrs.format order. A dim of -1 (unknown, for
// shape functions) gives -1 for the output dims that depend on it.
absl::StatusOr<Pool2DGeometry> ComputePool2DGeometry(const Pool2DAttrs& attrs,
                                                     const std::array<int64_t, 4>& input_dims);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_POOL_GEOMETRY_H_
