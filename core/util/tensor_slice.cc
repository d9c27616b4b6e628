// TensorSlice, shape_and_slices parsing, slice keys and slice copies
// (tensor_slice.h).
#include "core/util/tensor_slice.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace checkpoint {
namespace {

// ---- TensorFlow's ordered code (the parts slice keys use)

// A length byte, then the value big-endian without leading zero bytes.
void WriteNumIncreasing(std::string* out, uint64_t v) {
  char buf[8];
  int n = 0;
  for (; v > 0; v >>= 8) buf[7 - n++] = static_cast<char>(v & 0xff);
  out->push_back(static_cast<char>(n));
  out->append(buf + 8 - n, n);
}

// The bytes, 0x00 escaped as 0x00 0xff and 0xff as 0xff 0x00, then 0x00 0x01.
void WriteString(std::string* out, absl::string_view s) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
    if (c == '\xff') out->push_back('\0');
  }
  out->append("\0\1", 2);
}

// The value in two's complement, big-endian, in the fewest bytes n that
// leave room for n + 1 leading bits that copy the sign: n - 1 of them
// inverted mark the length, one more (the first bit kept) marks its end.
// For n up to 8 the length bits are the first byte's top n bits; 9 and 10
// bytes spill into the second byte.
void WriteSignedNumIncreasing(std::string* out, int64_t v) {
  const uint64_t magnitude = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const int bits = magnitude == 0 ? 0 : 64 - __builtin_clzll(magnitude);  // significant bits
  const int n = bits / 7 + 1;                                              // 1..10 bytes
  unsigned char buf[10];
  const unsigned char sign = v < 0 ? 0xff : 0x00;
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i) buf[2 + i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (56 - 8 * i));
  unsigned char* begin = buf + 10 - n;
  static const unsigned char kHeader[11][2] = {{0, 0},       {0x80, 0}, {0xc0, 0},    {0xe0, 0},
                                               {0xf0, 0},    {0xf8, 0}, {0xfc, 0},    {0xfe, 0},
                                               {0xff, 0},    {0xff, 0x80}, {0xff, 0xc0}};
  begin[0] ^= kHeader[n][0];
  if (n >= 2) begin[1] ^= kHeader[n][1];
  out->append(reinterpret_cast<const char*>(begin), n);
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> Strides(const TensorShape& shape) {
  std::vector<int64_t> strides(shape.dims(), 1);
  for (int d = shape.dims() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim_size(d + 1);
  return strides;
}

}  // namespace

TensorSlice TensorSlice::Full(int rank) {
  TensorSlice s;
  s.extents_.resize(rank);
  return s;
}

absl::StatusOr<TensorSlice> TensorSlice::Parse(absl::string_view spec) {
  TensorSlice s;
  for (absl::string_view part : absl::StrSplit(spec, ':')) {
    Extent e;
    if (part != "-") {
      std::vector<absl::string_view> nums = absl::StrSplit(part, ',');
      if (nums.size() != 2 || !absl::SimpleAtoi(nums[0], &e.start) ||
          !absl::SimpleAtoi(nums[1], &e.length) || e.start < 0 || e.length < 1) {
        return errors::InvalidArgument("slice '", spec, "': extent '", part,
                                       "' is neither '-' nor 'start,length' with start >= 0 "
                                       "and length >= 1");
      }
    }
    s.extents_.push_back(e);
  }
  return s;
}

absl::StatusOr<TensorSlice> TensorSlice::FromProto(const TensorSliceProto& proto) {
  TensorSlice s;
  for (const TensorSliceProto::Extent& pe : proto.extent()) {
    Extent e;  // a whole dimension starts at 0, whatever `start` says
    if (pe.has_length_case() == TensorSliceProto::Extent::kLength) {
      e.start = pe.start();
      e.length = pe.length();
    }
    if (e.start < 0 || (e.length != kFullExtent && e.length < 1)) {
      return errors::InvalidArgument("slice extent start ", e.start, " length ", e.length,
                                     " is invalid");
    }
    s.extents_.push_back(e);
  }
  return s;
}

void TensorSlice::ToProto(TensorSliceProto* proto) const {
  proto->Clear();
  for (const Extent& e : extents_) {
    TensorSliceProto::Extent* pe = proto->add_extent();
    if (e.length != kFullExtent) {
      pe->set_start(e.start);
      pe->set_length(e.length);
    }
  }
}

bool TensorSlice::IsFull() const {
  return std::all_of(extents_.begin(), extents_.end(),
                     [](const Extent& e) { return e.length == kFullExtent; });
}

int64_t TensorSlice::End(int d, int64_t dim) const {
  const Extent& e = extents_[d];
  return e.length == kFullExtent ? dim : e.start + e.length;
}

absl::StatusOr<TensorShape> TensorSlice::SliceShape(const TensorShape& full) const {
  if (dims() != full.dims()) {
    return errors::InvalidArgument("slice '", DebugString(), "' has ", dims(),
                                   " extents for a tensor of shape ", full.DebugString());
  }
  TensorShape shape;
  for (int d = 0; d < dims(); ++d) {
    const Extent& e = extents_[d];
    if (e.length == kFullExtent) {
      shape.AddDim(full.dim_size(d));
    } else if (e.start > full.dim_size(d) || e.length > full.dim_size(d) - e.start) {
      return errors::InvalidArgument("slice '", DebugString(), "' runs past dimension ", d,
                                     " of shape ", full.DebugString());
    } else {
      shape.AddDim(e.length);
    }
  }
  return shape;
}

bool TensorSlice::Overlaps(const TensorSlice& other, const TensorShape& full) const {
  return IntersectionSize(full, *this, other) > 0;
}

std::string TensorSlice::DebugString() const {
  return absl::StrJoin(extents_, ":", [](std::string* out, const Extent& e) {
    if (e.length == kFullExtent) {
      out->append("-");
    } else {
      absl::StrAppend(out, e.start, ",", e.length);
    }
  });
}

bool TensorSlice::operator==(const TensorSlice& other) const {
  if (dims() != other.dims()) return false;
  for (int d = 0; d < dims(); ++d) {
    if (extents_[d].length != other.extents_[d].length) return false;
    if (extents_[d].length != kFullExtent && extents_[d].start != other.extents_[d].start) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<ShapeAndSlice> ParseShapeAndSlice(absl::string_view spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ' ');
  if (parts.size() < 2) {
    return errors::InvalidArgument("shape_and_slices '", spec,
                                   "' needs the dimensions and a slice, separated by spaces");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d;
    if (!absl::SimpleAtoi(parts[i], &d)) {
      return errors::InvalidArgument("shape_and_slices '", spec, "': dimension '", parts[i],
                                     "' is not a number");
    }
    dims.push_back(d);
  }
  ShapeAndSlice out;
  auto shape = BuildTensorShape(dims);
  if (!shape.ok()) {
    return errors::InvalidArgument("shape_and_slices '", spec, "': ", shape.status().message());
  }
  out.full_shape = *std::move(shape);
  TG_ASSIGN_OR_RETURN(out.slice, TensorSlice::Parse(parts.back()));
  auto slice_shape = out.slice.SliceShape(out.full_shape);
  if (!slice_shape.ok()) {
    return errors::InvalidArgument("shape_and_slices '", spec, "': ",
                                   slice_shape.status().message());
  }
  out.slice_shape = *std::move(slice_shape);
  return out;
}

std::string EncodeTensorNameSlice(const std::string& name, const TensorSlice& slice) {
  std::string key;
  WriteNumIncreasing(&key, 0);
  WriteString(&key, name);
  WriteNumIncreasing(&key, static_cast<uint64_t>(slice.dims()));
  for (int d = 0; d < slice.dims(); ++d) {
    WriteSignedNumIncreasing(&key, slice.extent(d).start);
    WriteSignedNumIncreasing(&key, slice.extent(d).length);
  }
  return key;
}

int64_t IntersectionSize(const TensorShape& full, const TensorSlice& a, const TensorSlice& b) {
  int64_t n = 1;
  for (int d = 0; d < full.dims(); ++d) {
    const int64_t lo = std::max(a.Begin(d), b.Begin(d));
    const int64_t hi = std::min(a.End(d, full.dim_size(d)), b.End(d, full.dim_size(d)));
    if (hi <= lo) return 0;
    n *= hi - lo;
  }
  return n;
}

int64_t CopyIntersection(const TensorShape& full, const TensorSlice& src_slice, const Tensor& src,
                         const TensorSlice& dst_slice, Tensor* dst) {
  const int rank = full.dims();
  std::vector<int64_t> lo(rank), hi(rank);
  for (int d = 0; d < rank; ++d) {
    lo[d] = std::max(src_slice.Begin(d), dst_slice.Begin(d));
    hi[d] = std::min(src_slice.End(d, full.dim_size(d)), dst_slice.End(d, full.dim_size(d)));
    if (hi[d] <= lo[d]) return 0;
  }
  const std::vector<int64_t> src_strides = Strides(src.shape());
  const std::vector<int64_t> dst_strides = Strides(dst->shape());
  const bool strings = src.dtype() == DT_STRING;
  const size_t elem = strings ? 0 : static_cast<size_t>(DataTypeSize(src.dtype()));
  // One contiguous run along the last dimension per step of an odometer
  // over the others.
  const int64_t run = rank == 0 ? 1 : hi[rank - 1] - lo[rank - 1];
  std::vector<int64_t> at = lo;
  int64_t copied = 0;
  while (true) {
    int64_t s = 0, t = 0;
    for (int d = 0; d < rank; ++d) {
      s += (at[d] - src_slice.Begin(d)) * src_strides[d];
      t += (at[d] - dst_slice.Begin(d)) * dst_strides[d];
    }
    if (strings) {
      std::copy_n(src.data<std::string>() + s, run, dst->data<std::string>() + t);
    } else {
      std::memcpy(static_cast<char*>(dst->raw_data()) + t * elem,
                  static_cast<const char*>(src.raw_data()) + s * elem, run * elem);
    }
    copied += run;
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++at[d] < hi[d]) break;
      at[d] = lo[d];
    }
    if (d < 0) break;
  }
  return copied;
}

}  // namespace checkpoint
}  // namespace tensorgrid
