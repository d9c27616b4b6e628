#include "kernels/parsing/example_parser.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "proto/example.pb.h"

namespace tensorgrid {
namespace {

// One pass over the batch per feature: examples are parsed once, up front.
struct Batch {
  std::vector<Example> examples;
  std::vector<int64_t> dims;  // the batch's shape: {} or {n}
  const Tensor* names = nullptr;

  int64_t size() const { return static_cast<int64_t>(examples.size()); }
  // "example 3" or "example 3 ('name')", for error messages.
  std::string Label(int64_t i) const {
    if (names == nullptr || names->NumElements() == 0) return absl::StrCat("example ", i);
    return absl::StrCat("example ", i, " ('", names->data<std::string>()[i], "')");
  }
};

DataType KindOf(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kFloatList: return DT_FLOAT;
    case Feature::kInt64List: return DT_INT64;
    case Feature::kBytesList: return DT_STRING;
    default: return DT_INVALID;
  }
}

int64_t CountOf(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kFloatList: return f.float_list().value_size();
    case Feature::kInt64List: return f.int64_list().value_size();
    case Feature::kBytesList: return f.bytes_list().value_size();
    default: return 0;
  }
}

// Writes f's values (of the matching dtype) at element `offset` of `out`.
void CopyValues(const Feature& f, Tensor& out, int64_t offset) {
  switch (f.kind_case()) {
    case Feature::kFloatList:
      std::copy(f.float_list().value().begin(), f.float_list().value().end(),
                out.data<float>() + offset);
      break;
    case Feature::kInt64List:
      std::copy(f.int64_list().value().begin(), f.int64_list().value().end(),
                out.data<int64_t>() + offset);
      break;
    case Feature::kBytesList:
      std::copy(f.bytes_list().value().begin(), f.bytes_list().value().end(),
                out.data<std::string>() + offset);
      break;
    default: break;
  }
}

// Copies `count` elements of t from `from` to `to` (same tensor or another
// of its dtype).
void CopyElements(const Tensor& src, int64_t from, Tensor& dst, int64_t to, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DT_STRING) {
    std::copy_n(src.data<std::string>() + from, count, dst.data<std::string>() + to);
  } else {
    const int64_t size = DataTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst.raw_data()) + to * size,
                static_cast<const char*>(src.raw_data()) + from * size, count * size);
  }
}

// The feature `key` of example i, null if absent; InvalidArgument if it
// holds values of another dtype than `dtype` (a feature with no list set
// counts as an empty list of any dtype).
absl::StatusOr<const Feature*> FindFeature(const Batch& batch, int64_t i, const std::string& key,
                                           DataType dtype) {
  const auto& map = batch.examples[i].features().feature();
  auto it = map.find(key);
  if (it == map.end()) return nullptr;
  const DataType kind = KindOf(it->second);
  if (kind != DT_INVALID && kind != dtype) {
    return errors::InvalidArgument(batch.Label(i), ": feature '", key, "' holds ",
                                   DataTypeString(kind), " values, but ", DataTypeString(dtype),
                                   " is expected");
  }
  return &it->second;
}

absl::StatusOr<Tensor> AllocateOutput(DataType dtype, std::vector<int64_t> dims) {
  TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(dims));
  return Tensor::Allocate(dtype, shape);
}

// Number of elements of one row (all dimensions but the first) of `shape`.
absl::StatusOr<int64_t> RowSize(const PartialTensorShape& shape) {
  std::vector<int64_t> dims;
  for (int d = 1; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
  TG_ASSIGN_OR_RETURN(TensorShape row, BuildTensorShape(dims));
  return row.num_elements();
}

// `out` is the allocated output: batch shape + spec.shape.
absl::Status ParseFixedDense(const Batch& batch, const DenseFeatureSpec& spec, Tensor& out) {
  std::vector<int64_t> dims;
  for (int d = 0; d < spec.shape.dims(); ++d) dims.push_back(spec.shape.dim_size(d));
  TG_ASSIGN_OR_RETURN(TensorShape example_shape, BuildTensorShape(dims));
  const int64_t per_example = example_shape.num_elements();
  for (int64_t i = 0; i < batch.size(); ++i) {
    TG_ASSIGN_OR_RETURN(const Feature* f, FindFeature(batch, i, spec.key, spec.dtype));
    if (f == nullptr) {
      if (spec.default_value.NumElements() == 0) {
        return errors::InvalidArgument(batch.Label(i), ": feature '", spec.key, "' (",
                                       DataTypeString(spec.dtype),
                                       ") is required but missing, and it has no default");
      }
      CopyElements(spec.default_value, 0, out, i * per_example, per_example);
      continue;
    }
    if (CountOf(*f) != per_example) {
      return errors::InvalidArgument(batch.Label(i), ": feature '", spec.key, "' has ", CountOf(*f),
                                     " ", DataTypeString(spec.dtype),
                                     " values, but its dense shape ", spec.shape.DebugString(),
                                     " needs ", per_example);
    }
    CopyValues(*f, out, i * per_example);
  }
  return absl::OkStatus();
}

// A variable-length dense feature: each example's values are rows of
// RowSize(shape) elements; the output is padded to the most rows.
absl::StatusOr<Tensor> ParseVariableDense(const Batch& batch, const DenseFeatureSpec& spec) {
  TG_ASSIGN_OR_RETURN(const int64_t row, RowSize(spec.shape));
  std::vector<const Feature*> found(batch.size());
  int64_t most_rows = 0;
  for (int64_t i = 0; i < batch.size(); ++i) {
    TG_ASSIGN_OR_RETURN(found[i], FindFeature(batch, i, spec.key, spec.dtype));
    const int64_t n = found[i] == nullptr ? 0 : CountOf(*found[i]);
    if (row == 0 ? n != 0 : n % row != 0) {
      return errors::InvalidArgument(batch.Label(i), ": feature '", spec.key, "' has ", n, " ",
                                     DataTypeString(spec.dtype),
                                     " values, not a whole number of rows of ", row,
                                     " for its dense shape ", spec.shape.DebugString());
    }
    if (row > 0) most_rows = std::max(most_rows, n / row);
  }
  std::vector<int64_t> dims = batch.dims;
  dims.push_back(most_rows);
  for (int d = 1; d < spec.shape.dims(); ++d) dims.push_back(spec.shape.dim_size(d));
  TG_ASSIGN_OR_RETURN(Tensor out, AllocateOutput(spec.dtype, dims));
  const int64_t per_example = most_rows * row;
  for (int64_t i = 0; i < batch.size(); ++i) {
    const int64_t n = found[i] == nullptr ? 0 : CountOf(*found[i]);
    if (found[i] != nullptr) CopyValues(*found[i], out, i * per_example);
    for (int64_t e = n; e < per_example; ++e) {
      CopyElements(spec.default_value, 0, out, i * per_example + e, 1);
    }
  }
  return out;
}

absl::Status ParseSparse(const Batch& batch, const ListFeatureSpec& spec, ParsedExamples& out) {
  std::vector<const Feature*> found(batch.size());
  int64_t total = 0, longest = 0;
  for (int64_t i = 0; i < batch.size(); ++i) {
    TG_ASSIGN_OR_RETURN(found[i], FindFeature(batch, i, spec.key, spec.dtype));
    const int64_t n = found[i] == nullptr ? 0 : CountOf(*found[i]);
    total += n;
    longest = std::max(longest, n);
  }
  const int64_t rank = static_cast<int64_t>(batch.dims.size()) + 1;
  TG_ASSIGN_OR_RETURN(Tensor indices, AllocateOutput(DT_INT64, {total, rank}));
  TG_ASSIGN_OR_RETURN(Tensor values, AllocateOutput(spec.dtype, {total}));
  TG_ASSIGN_OR_RETURN(Tensor shape, AllocateOutput(DT_INT64, {rank}));
  int64_t* index = indices.data<int64_t>();
  int64_t at = 0;
  for (int64_t i = 0; i < batch.size(); ++i) {
    if (found[i] == nullptr) continue;
    const int64_t n = CountOf(*found[i]);
    CopyValues(*found[i], values, at);
    for (int64_t k = 0; k < n; ++k) {
      if (rank == 2) *index++ = i;
      *index++ = k;
    }
    at += n;
  }
  for (size_t d = 0; d < batch.dims.size(); ++d) shape.data<int64_t>()[d] = batch.dims[d];
  shape.data<int64_t>()[rank - 1] = longest;
  out.sparse_indices.push_back(std::move(indices));
  out.sparse_values.push_back(std::move(values));
  out.sparse_shapes.push_back(std::move(shape));
  return absl::OkStatus();
}

absl::Status ParseRagged(const Batch& batch, const ListFeatureSpec& spec, DataType split_type,
                         ParsedExamples& out) {
  std::vector<const Feature*> found(batch.size());
  std::vector<int64_t> splits = {0};
  for (int64_t i = 0; i < batch.size(); ++i) {
    TG_ASSIGN_OR_RETURN(found[i], FindFeature(batch, i, spec.key, spec.dtype));
    splits.push_back(splits.back() + (found[i] == nullptr ? 0 : CountOf(*found[i])));
  }
  if (split_type == DT_INT32 && splits.back() > INT32_MAX) {
    return errors::InvalidArgument("ragged feature '", spec.key, "' has ", splits.back(),
                                   " values, too many for int32 row splits");
  }
  TG_ASSIGN_OR_RETURN(Tensor values, AllocateOutput(spec.dtype, {splits.back()}));
  TG_ASSIGN_OR_RETURN(Tensor row_splits,
                      AllocateOutput(split_type, {static_cast<int64_t>(splits.size())}));
  for (int64_t i = 0; i < batch.size(); ++i) {
    if (found[i] != nullptr) CopyValues(*found[i], values, splits[i]);
  }
  for (size_t k = 0; k < splits.size(); ++k) {
    if (split_type == DT_INT32) {
      row_splits.data<int32_t>()[k] = static_cast<int32_t>(splits[k]);
    } else {
      row_splits.data<int64_t>()[k] = splits[k];
    }
  }
  out.ragged_values.push_back(std::move(values));
  out.ragged_splits.push_back(std::move(row_splits));
  return absl::OkStatus();
}

absl::Status CheckDtype(const std::string& key, DataType dtype) {
  if (dtype == DT_FLOAT || dtype == DT_INT64 || dtype == DT_STRING) return absl::OkStatus();
  return errors::InvalidArgument("feature '", key, "' has dtype ", DataTypeString(dtype),
                                 "; features are float, int64 or string");
}

absl::Status CheckDense(const DenseFeatureSpec& spec) {
  TG_RETURN_IF_ERROR(CheckDtype(spec.key, spec.dtype));
  if (spec.shape.unknown_rank()) {
    return errors::InvalidArgument("dense feature '", spec.key, "' has a shape of unknown rank");
  }
  for (int d = 0; d < spec.shape.dims(); ++d) {
    if (spec.shape.dim_size(d) < 0 && d > 0) {
      return errors::InvalidArgument("dense feature '", spec.key, "' has shape ",
                                     spec.shape.DebugString(),
                                     ": only the first dimension may be unknown");
    }
  }
  const Tensor& def = spec.default_value;
  if (def.IsInitialized() && def.NumElements() > 0 && def.dtype() != spec.dtype) {
    return errors::InvalidArgument("the default of dense feature '", spec.key, "' is ",
                                   DataTypeString(def.dtype()), ", not ",
                                   DataTypeString(spec.dtype));
  }
  const bool variable = spec.shape.dims() > 0 && spec.shape.dim_size(0) < 0;
  if (variable && def.NumElements() != 1) {
    return errors::InvalidArgument("dense feature '", spec.key, "' has the variable-length shape ",
                                   spec.shape.DebugString(),
                                   ", so its default must be one padding value, not a tensor of "
                                   "shape ",
                                   def.shape().DebugString());
  }
  if (!variable && def.NumElements() > 0 && !spec.shape.IsCompatibleWith(def.shape())) {
    return errors::InvalidArgument("the default of dense feature '", spec.key, "' has shape ",
                                   def.shape().DebugString(), ", but the feature's shape is ",
                                   spec.shape.DebugString());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckExampleParseSpec(const ExampleParseSpec& spec) {
  for (const ListFeatureSpec& s : spec.sparse) TG_RETURN_IF_ERROR(CheckDtype(s.key, s.dtype));
  for (const ListFeatureSpec& s : spec.ragged) TG_RETURN_IF_ERROR(CheckDtype(s.key, s.dtype));
  for (const DenseFeatureSpec& s : spec.dense) TG_RETURN_IF_ERROR(CheckDense(s));
  if (spec.ragged_split_types.size() != spec.ragged.size()) {
    return errors::InvalidArgument(spec.ragged.size(), " ragged features but ",
                                   spec.ragged_split_types.size(), " row split types");
  }
  for (DataType t : spec.ragged_split_types) {
    if (t != DT_INT32 && t != DT_INT64) {
      return errors::InvalidArgument("ragged row splits are int32 or int64, not ",
                                     DataTypeString(t));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ParsedExamples> ParseExamples(const ExampleParseSpec& spec, const Tensor& serialized,
                                             const Tensor& names) {
  TG_RETURN_IF_ERROR(CheckExampleParseSpec(spec));
  if (serialized.dtype() != DT_STRING || serialized.dims() > 1) {
    return errors::InvalidArgument("serialized must be a string scalar or vector, got ",
                                   DataTypeString(serialized.dtype()), " ",
                                   serialized.shape().DebugString());
  }
  Batch batch;
  if (serialized.dims() == 1) batch.dims.push_back(serialized.dim_size(0));
  const int64_t n = serialized.NumElements();
  if (names.NumElements() > 0) {
    if (names.dtype() != DT_STRING || names.NumElements() != n || names.dims() > 1) {
      return errors::InvalidArgument("names must be empty or hold one string per example (", n,
                                     "), got ", DataTypeString(names.dtype()), " ",
                                     names.shape().DebugString());
    }
    batch.names = &names;
  }
  batch.examples.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const std::string& bytes = serialized.data<std::string>()[i];
    if (!batch.examples[i].ParseFromString(bytes)) {
      return errors::InvalidArgument(batch.Label(i), ": its ", bytes.size(),
                                     " bytes are not a serialized tf.Example");
    }
  }

  ParsedExamples out;
  for (const ListFeatureSpec& s : spec.sparse) TG_RETURN_IF_ERROR(ParseSparse(batch, s, out));
  for (const DenseFeatureSpec& s : spec.dense) {
    if (s.shape.dims() > 0 && s.shape.dim_size(0) < 0) {
      TG_ASSIGN_OR_RETURN(Tensor values, ParseVariableDense(batch, s));
      out.dense_values.push_back(std::move(values));
      continue;
    }
    std::vector<int64_t> dims = batch.dims;
    for (int d = 0; d < s.shape.dims(); ++d) dims.push_back(s.shape.dim_size(d));
    TG_ASSIGN_OR_RETURN(Tensor values, AllocateOutput(s.dtype, dims));
    TG_RETURN_IF_ERROR(ParseFixedDense(batch, s, values));
    out.dense_values.push_back(std::move(values));
  }
  for (size_t j = 0; j < spec.ragged.size(); ++j) {
    TG_RETURN_IF_ERROR(ParseRagged(batch, spec.ragged[j], spec.ragged_split_types[j], out));
  }
  return out;
}

}  // namespace tensorgrid
