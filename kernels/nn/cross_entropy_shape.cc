#include "kernels/nn/cross_entropy_shape.h"

#include "core/platform/status.h"

namespace tensorgrid {

absl::StatusOr<std::pair<int64_t, int64_t>> SoftmaxXentDims(const TensorShape& logits,
                                                            const TensorShape& labels) {
  auto incompatible = [&](absl::string_view why) {
    return errors::InvalidArgument("logits and labels must ", why, ", got logits shape ",
                                   logits.DebugString(), " and labels shape ",
                                   labels.DebugString());
  };
  if (logits.dims() != 2 || labels.dims() != 2) return incompatible("be 2-D");
  int64_t dims[2];
  for (int d = 0; d < 2; ++d) {
    const int64_t a = logits.dim_size(d), b = labels.dim_size(d);
    if (a != b && a != 1 && b != 1) return incompatible("be broadcastable");
    dims[d] = a == 1 ? b : a;
  }
  return std::make_pair(dims[0], dims[1]);
}

absl::Status CheckSparseXentShapes(const TensorShape& logits, const TensorShape& labels) {
  if (logits.dims() != 2) {
    return errors::InvalidArgument("logits must be 2-D, but got shape ", logits.DebugString());
  }
  if (labels.dims() != 1) {
    return errors::InvalidArgument("labels must be 1-D, but got shape ", labels.DebugString());
  }
  if (labels.dim_size(0) != logits.dim_size(0)) {
    return errors::InvalidArgument(
        "logits and labels must have the same first dimension, got logits shape ",
        logits.DebugString(), " and labels shape ", labels.DebugString());
  }
  if (logits.dim_size(1) == 0 && logits.dim_size(0) > 0) {
    return errors::InvalidArgument("Must have at least one class, but got logits shape ",
                                   logits.DebugString());
  }
  return absl::OkStatus();
}

absl::Status LabelOutOfRange(int64_t label, int64_t row, const TensorShape& logits) {
  return errors::InvalidArgument(
      "Received a label value of ", label, " which is outside the valid range of [0, ",
      logits.dim_size(1), ") (row ", row, " of labels, logits shape ", logits.DebugString(), ")");
}

}  // namespace tensorgrid
