#include "core/framework/tensor_shape.h"

#include "absl/strings/str_join.h"
#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {
// Returns false on negative dims or int64 overflow.
bool MultiplyDims(absl::Span<const int64_t> dims, int64_t* out) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (__builtin_mul_overflow(n, d, &n)) return false;
  }
  *out = n;
  return true;
}
}  // namespace

TensorShape::TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) { Recompute(); }

TensorShape::TensorShape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {
  Recompute();
}

void TensorShape::Recompute() {
  TG_CHECK(dims_.size() <= kMaxTensorRank);
  TG_CHECK(MultiplyDims(dims_, &num_elements_));
}

void TensorShape::AddDim(int64_t size) {
  dims_.push_back(size);
  Recompute();
}

void TensorShape::set_dim(int d, int64_t size) {
  dims_[d] = size;
  Recompute();
}

void TensorShape::RemoveDim(int d) {
  dims_.erase(dims_.begin() + d);
  Recompute();
}

void TensorShape::InsertDim(int d, int64_t size) {
  dims_.insert(dims_.begin() + d, size);
  Recompute();
}

void TensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

absl::StatusOr<TensorShape> BuildTensorShape(absl::Span<const int64_t> dims) {
  if (dims.size() > kMaxTensorRank) {
    return errors::InvalidArgument("shape has rank ", dims.size(), ", more than the maximum ",
                                   kMaxTensorRank);
  }
  int64_t n;
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::InvalidArgument("shape [", absl::StrJoin(dims, ","),
                                     "] has a negative dimension");
    }
  }
  if (!MultiplyDims(dims, &n)) {
    return errors::InvalidArgument("shape [", absl::StrJoin(dims, ","),
                                   "] has more elements than fit in int64");
  }
  return TensorShape(dims);
}

absl::StatusOr<TensorShape> TensorShapeFromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    return errors::InvalidArgument("expected a fully defined shape, got unknown rank");
  }
  absl::InlinedVector<int64_t, 4> dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return BuildTensorShape(dims);
}

absl::StatusOr<PartialTensorShape> PartialTensorShape::FromProto(const TensorShapeProto& proto) {
  // Made in place: moving an empty InlinedVector into the StatusOr trips
  // GCC 12's -Wmaybe-uninitialized (a false report inside Abseil).
  if (proto.unknown_rank()) return absl::StatusOr<PartialTensorShape>(absl::in_place);
  if (proto.dim_size() > kMaxTensorRank) {
    return errors::InvalidArgument("shape has rank ", proto.dim_size(), ", more than the maximum ",
                                   kMaxTensorRank);
  }
  absl::InlinedVector<int64_t, 4> dims;
  for (const auto& d : proto.dim()) {
    if (d.size() < -1) return errors::InvalidArgument("shape has dimension ", d.size());
    dims.push_back(d.size());
  }
  // Made in place: GCC 12 warns falsely about moving an inlined
  // absl::InlinedVector at -O3.
  return absl::StatusOr<PartialTensorShape>(absl::in_place, dims);
}

bool PartialTensorShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool PartialTensorShape::IsCompatibleWith(const TensorShape& shape) const {
  if (unknown_rank_) return true;
  if (static_cast<int>(dims_.size()) != shape.dims()) return false;
  for (int i = 0; i < shape.dims(); ++i) {
    if (dims_[i] >= 0 && dims_[i] != shape.dim_size(i)) return false;
  }
  return true;
}

std::string PartialTensorShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += dims_[i] < 0 ? "?" : std::to_string(dims_[i]);
  }
  return s + "]";
}

}  // namespace tensorgrid
