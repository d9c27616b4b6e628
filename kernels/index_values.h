// Reading the small int32/int64 tensors that ops take as their shape, perm,
// dims, axis or label inputs (the op's Tshape/Tperm/index_type/Tidx/Tlabels
// attr picks which of the two it is), and checking a permutation.
//
//   std::vector<int64_t> perm = IndexValues(ctx.input(1));
#ifndef TENSORGRID_KERNELS_INDEX_VALUES_H_
#define TENSORGRID_KERNELS_INDEX_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "core/framework/tensor.h"
#include "core/platform/status.h"

namespace tensorgrid {

// The values of an int32 or int64 tensor, widened to int64.
inline std::vector<int64_t> IndexValues(const Tensor& t) {
  if (t.dtype() == DT_INT32) {
    absl::Span<const int32_t> v = t.values<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  absl::Span<const int64_t> v = t.values<int64_t>();
  return std::vector<int64_t>(v.begin(), v.end());
}

// "[2,-1,3]", spelled like TensorShape::DebugString, for error messages.
inline std::string IndexValuesString(const std::vector<int64_t>& values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

// Transpose's check (CPU and GPU): `perm` is a permutation of [0, rank).
inline absl::Status ValidatePermutation(const std::vector<int64_t>& perm, int rank) {
  if (static_cast<int>(perm.size()) != rank) {
    return errors::InvalidArgument("transpose expects a vector of size ", rank,
                                   " (the input's rank), but perm ", IndexValuesString(perm),
                                   " has size ", perm.size());
  }
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = perm[i];
    if (d < 0 || d >= rank) {
      return errors::InvalidArgument("perm[", i, "] = ", d, " is out of range [0, ", rank, ")");
    }
    if (seen[d]) {
      return errors::InvalidArgument("perm ", IndexValuesString(perm), " names dimension ", d,
                                     " twice");
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_INDEX_VALUES_H_
