// TensorShape: the dimensions of a fully known tensor shape, with
// overflow-checked element counts; PartialTensorShape allows unknown (-1)
// dimensions and unknown rank (for placeholders and shape inference).
#ifndef TENSORGRID_CORE_FRAMEWORK_TENSOR_SHAPE_H_
#define TENSORGRID_CORE_FRAMEWORK_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/tensor_shape.pb.h"

namespace tensorgrid {

constexpr int kMaxTensorRank = 32;

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  // Dimensions must be valid (use BuildTensorShape for untrusted input).
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(absl::Span<const int64_t> dims);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int d) const { return dims_[d]; }
  int64_t num_elements() const { return num_elements_; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }

  // Valid dims only (checked with CHECK: validated input is a precondition).
  void AddDim(int64_t size);
  void set_dim(int d, int64_t size);
  void RemoveDim(int d);
  void InsertDim(int d, int64_t size);

  bool IsSameSize(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator==(const TensorShape& o) const { return dims_ == o.dims_; }
  bool operator!=(const TensorShape& o) const { return dims_ != o.dims_; }

  void AsProto(TensorShapeProto* proto) const;
  std::string DebugString() const;  // "[2,3]"

 private:
  void Recompute();
  absl::InlinedVector<int64_t, 4> dims_;
  int64_t num_elements_ = 1;
};

// Validated construction: rank <= 32, no negative dims, element count fits int64.
absl::StatusOr<TensorShape> BuildTensorShape(absl::Span<const int64_t> dims);
absl::StatusOr<TensorShape> TensorShapeFromProto(const TensorShapeProto& proto);

// A shape that may have unknown dimensions (-1) or unknown rank.
class PartialTensorShape {
 public:
  PartialTensorShape() : unknown_rank_(true) {}
  explicit PartialTensorShape(absl::Span<const int64_t> dims)
      : unknown_rank_(false), dims_(dims.begin(), dims.end()) {}
  PartialTensorShape(std::initializer_list<int64_t> dims)
      : unknown_rank_(false), dims_(dims.begin(), dims.end()) {}
  static absl::StatusOr<PartialTensorShape> FromProto(const TensorShapeProto& proto);

  bool unknown_rank() const { return unknown_rank_; }
  int dims() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  int64_t dim_size(int d) const { return dims_[d]; }
  bool IsFullyDefined() const;
  // True when `shape` could be an instance of this partial shape.
  bool IsCompatibleWith(const TensorShape& shape) const;
  std::string DebugString() const;  // "[?,3]" or "<unknown>"

 private:
  bool unknown_rank_;
  absl::InlinedVector<int64_t, 4> dims_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_TENSOR_SHAPE_H_
