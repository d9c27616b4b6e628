#include "core/util/window_geometry.h"

#include <algorithm>
#include <string>

#include "core/platform/status.h"

namespace tensorgrid {

absl::Status ParsePadding(absl::string_view name, Padding* padding) {
  if (name == "VALID") {
    *padding = Padding::kValid;
  } else if (name == "SAME") {
    *padding = Padding::kSame;
  } else if (name == "EXPLICIT") {
    *padding = Padding::kExplicit;
  } else {
    return errors::InvalidArgument("padding '", name, "' is not one of VALID, SAME, EXPLICIT");
  }
  return absl::OkStatus();
}

absl::Status ParseDataFormat(absl::string_view name, DataFormat* format) {
  if (name == "NHWC") {
    *format = DataFormat::kNHWC;
  } else if (name == "NCHW") {
    *format = DataFormat::kNCHW;
  } else {
    return errors::InvalidArgument("data_format '", name, "' is not one of NHWC, NCHW");
  }
  return absl::OkStatus();
}

ImageAxes AxesOf(DataFormat format) {
  if (format == DataFormat::kNHWC) return {0, 1, 2, 3};
  return {0, 2, 3, 1};
}

absl::StatusOr<WindowDim> ComputeWindowDim(int64_t input, int64_t window, int64_t stride,
                                           int64_t dilation, Padding padding,
                                           int64_t explicit_before, int64_t explicit_after) {
  if (window <= 0) return errors::InvalidArgument("window size ", window, " is not positive");
  if (stride <= 0) return errors::InvalidArgument("stride ", stride, " is not positive");
  if (dilation <= 0) return errors::InvalidArgument("dilation ", dilation, " is not positive");
  if (input < 0) return errors::InvalidArgument("input size ", input, " is negative");
  WindowDim dim;
  dim.input = input;
  dim.window = window;
  dim.stride = stride;
  dim.dilation = dilation;
  const int64_t effective = dim.EffectiveWindow();
  switch (padding) {
    case Padding::kValid:
      dim.output = (input - effective + stride) / stride;
      if (input < effective) dim.output = -1;
      break;
    case Padding::kSame: {
      dim.output = (input + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (dim.output - 1) * stride + effective - input);
      dim.pad_before = needed / 2;
      dim.pad_after = needed - dim.pad_before;
      break;
    }
    case Padding::kExplicit: {
      if (explicit_before < 0 || explicit_after < 0) {
        return errors::InvalidArgument("explicit padding (", explicit_before, ", ", explicit_after,
                                       ") is negative");
      }
      dim.pad_before = explicit_before;
      dim.pad_after = explicit_after;
      const int64_t padded = input + explicit_before + explicit_after;
      dim.output = padded < effective ? -1 : (padded - effective) / stride + 1;
      break;
    }
  }
  if (dim.output < 0) {
    return errors::InvalidArgument("window of ", effective, " (size ", window, ", dilation ",
                                   dilation, ") is larger than the padded input of ",
                                   input + dim.pad_before + dim.pad_after,
                                   ": the output size would be negative");
  }
  return dim;
}

}  // namespace tensorgrid
