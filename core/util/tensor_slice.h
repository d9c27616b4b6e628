// Slices of tensors as TensorFlow's checkpoints name them: the
// `shape_and_slices` strings of SaveV2/RestoreV2 ("4 4 0,2:-": a 4x4 tensor,
// rows 0 and 1, every column), the TensorSliceProto of a bundle entry, and
// the table key under which a tensor bundle stores one slice of a tensor
// (TensorFlow's EncodeTensorNameSlice, in its "ordered code").
//
//   TG_ASSIGN_OR_RETURN(ShapeAndSlice s, ParseShapeAndSlice("4 4 0,2:-"));
//   // s.full_shape [4,4], s.slice "0,2:-", s.slice_shape [2,4]
//   Tensor part(DT_FLOAT, s.slice_shape);
//   CopyIntersection(s.full_shape, TensorSlice::Full(2), whole, s.slice, &part);
#ifndef TENSORGRID_CORE_UTIL_TENSOR_SLICE_H_
#define TENSORGRID_CORE_UTIL_TENSOR_SLICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/tensor.h"
#include "proto/tensor_bundle.pb.h"

namespace tensorgrid {
namespace checkpoint {

// One extent per dimension: [start, start + length), or the whole dimension.
class TensorSlice {
 public:
  static constexpr int64_t kFullExtent = -1;
  struct Extent {
    int64_t start = 0;
    int64_t length = kFullExtent;
  };

  TensorSlice() = default;
  static TensorSlice Full(int rank);
  // TensorFlow's syntax: extents joined by ':', each "-" (the whole
  // dimension) or "start,length" (start >= 0, length >= 1).
  // InvalidArgument quoting the spec.
  static absl::StatusOr<TensorSlice> Parse(absl::string_view spec);
  // InvalidArgument for a negative start or a length below 1.
  static absl::StatusOr<TensorSlice> FromProto(const TensorSliceProto& proto);
  void ToProto(TensorSliceProto* proto) const;

  int dims() const { return static_cast<int>(extents_.size()); }
  const Extent& extent(int d) const { return extents_[d]; }
  bool IsFull() const;
  // Where extent `d` begins and ends in a dimension of size `dim`.
  int64_t Begin(int d) const { return extents_[d].start; }
  int64_t End(int d, int64_t dim) const;
  // The shape of this slice of a tensor of `full` shape; InvalidArgument
  // when the ranks differ or an extent runs past its dimension.
  absl::StatusOr<TensorShape> SliceShape(const TensorShape& full) const;
  // Whether the two slices of a tensor of `full` shape share an element.
  bool Overlaps(const TensorSlice& other, const TensorShape& full) const;
  // "0,2:-".
  std::string DebugString() const;

  bool operator==(const TensorSlice& other) const;

 private:
  std::vector<Extent> extents_;
};

struct ShapeAndSlice {
  TensorShape full_shape;
  TensorSlice slice;
  TensorShape slice_shape;
};
// "dim0 dim1 ... slice": the full shape, then the slice (TensorSlice::Parse).
// InvalidArgument quoting the spec.
absl::StatusOr<ShapeAndSlice> ParseShapeAndSlice(absl::string_view spec);

// The table key of slice `slice` of tensor `name` in a tensor bundle: ordered
// code of 0, the name, the rank, then each extent's start and length (-1 for
// a whole dimension). Such keys begin with a 0 byte, so they sort before
// every tensor name that does not.
std::string EncodeTensorNameSlice(const std::string& name, const TensorSlice& slice);

// Copies the elements that slice `src_slice` (held by `src`) and slice
// `dst_slice` (held by `dst`) of a tensor of shape `full` share from `src`
// into `dst`. Both slices must be valid for `full`, the tensors shaped like
// them and of one dtype. Returns the number of elements copied.
int64_t CopyIntersection(const TensorShape& full, const TensorSlice& src_slice, const Tensor& src,
                         const TensorSlice& dst_slice, Tensor* dst);
// The number of elements the two slices of a tensor of `full` shape share.
int64_t IntersectionSize(const TensorShape& full, const TensorSlice& a, const TensorSlice& b);

}  // namespace checkpoint
}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_TENSOR_SLICE_H_
