// The geometry of a sliding window over one spatial dimension, shared by the
// shape functions and kernels of the convolution and pooling ops (ops/,
// kernels/), as TensorFlow's GetWindowedOutputSize and its padding names:
//
//   Padding padding;
//   TG_RETURN_IF_ERROR(ParsePadding(padding_attr, &padding));
//   TG_ASSIGN_OR_RETURN(WindowDim rows,
//       ComputeWindowDim(/*input=*/28, /*window=*/3, /*stride=*/2,
//                        /*dilation=*/1, padding));
//   // rows.output == 14 for SAME; rows.pad_before == 0, rows.pad_after == 1
//
// Errors are InvalidArgument and say which value is wrong; the caller adds
// the node's name and the dimension ("Conv2D 'c1', rows: ...").
#ifndef TENSORGRID_CORE_UTIL_WINDOW_GEOMETRY_H_
#define TENSORGRID_CORE_UTIL_WINDOW_GEOMETRY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {

// TensorFlow's `padding` attr: VALID (none), SAME (output = ceil(input /
// stride), padded as evenly as possible with the odd one after), EXPLICIT
// (the amounts in `explicit_paddings`).
enum class Padding { kValid, kSame, kExplicit };
absl::Status ParsePadding(absl::string_view name, Padding* padding);

// TensorFlow's `data_format` attr for 4-D images: batch, rows, cols, channels
// (NHWC) or batch, channels, rows, cols (NCHW).
enum class DataFormat { kNHWC, kNCHW };
absl::Status ParseDataFormat(absl::string_view name, DataFormat* format);

// Where each of N, H, W, C sits in a 4-D tensor of `format`.
struct ImageAxes {
  int batch, rows, cols, channels;
};
ImageAxes AxesOf(DataFormat format);

// One spatial dimension of a windowed op. A window of `window` taps, each
// `dilation` apart, moves `stride` at a time over the input padded by
// pad_before and pad_after; `output` is the number of positions.
struct WindowDim {
  int64_t input = 0;
  int64_t window = 0;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
  int64_t output = 0;

  // The extent of the dilated window: (window - 1) * dilation + 1.
  int64_t EffectiveWindow() const { return (window - 1) * dilation + 1; }
};

// The output size and paddings for `padding`; `explicit_before/after` are used
// only for kExplicit. InvalidArgument for a non-positive window, stride or
// dilation, a negative input or explicit padding, or a window larger than the
// padded input (an output size below zero).
absl::StatusOr<WindowDim> ComputeWindowDim(int64_t input, int64_t window, int64_t stride,
                                           int64_t dilation, Padding padding,
                                           int64_t explicit_before = 0, int64_t explicit_after = 0);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_WINDOW_GEOMETRY_H_
