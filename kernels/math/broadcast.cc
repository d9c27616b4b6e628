#include "kernels/math/broadcast.h"

#include <algorithm>

#include "core/platform/status.h"

namespace tensorgrid {
namespace math {

absl::StatusOr<BinaryBroadcast> BinaryBroadcast::Make(const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.dims(), y.dims());
  BinaryBroadcast b;
  // Merged dims with each input's extent along them (1 where it broadcasts).
  Dims x_extent, y_extent;
  bool prev_x_bcast = false, prev_y_bcast = false;
  for (int i = 0; i < rank; ++i) {
    const int ix = x.dims() - rank + i, iy = y.dims() - rank + i;
    const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
    const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      return errors::InvalidArgument("Incompatible shapes: ", x.DebugString(), " vs. ",
                                     y.DebugString());
    }
    const int64_t d = dx == 1 ? dy : dx;
    b.output_shape_.AddDim(d);
    if (d == 1) continue;  // contributes nothing to the loop
    const bool x_bcast = dx == 1, y_bcast = dy == 1;
    if (!b.dims_.empty() && x_bcast == prev_x_bcast && y_bcast == prev_y_bcast) {
      b.dims_.back() *= d;
      x_extent.back() *= dx;
      y_extent.back() *= dy;
    } else {
      b.dims_.push_back(d);
      x_extent.push_back(dx);
      y_extent.push_back(dy);
    }
    prev_x_bcast = x_bcast;
    prev_y_bcast = y_bcast;
  }
  const size_t n = b.dims_.size();
  b.x_strides_.resize(n);
  b.y_strides_.resize(n);
  int64_t sx = 1, sy = 1;
  for (size_t i = n; i-- > 0;) {
    b.x_strides_[i] = x_extent[i] == 1 ? 0 : sx;
    b.y_strides_[i] = y_extent[i] == 1 ? 0 : sy;
    sx *= x_extent[i];
    sy *= y_extent[i];
  }
  return b;
}

}  // namespace math
}  // namespace tensorgrid
