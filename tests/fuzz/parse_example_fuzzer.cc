// ParseExample's parsing (kernels/parsing/example_parser.h): serialized
// tf.Example protos from a model's clients, the bytes a SavedModel's
// classify and regress signatures take. Every batch is parsed or refused
// with InvalidArgument (ResourceExhausted past the tensor size limit); a
// parsed batch has the shapes ParseExamples promises.
//
// Input: one byte picks the spec (which features are dense, required,
// variable-length, sparse or ragged; a scalar or a vector batch); the rest
// is the batch, examples separated by "\n--\n".
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/parsing/example_parser.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

ExampleParseSpec SpecFor(uint8_t bits) {
  ExampleParseSpec spec;
  DenseFeatureSpec x{"x", DT_FLOAT, PartialTensorShape({2}), Tensor()};
  if (bits & 1) x.default_value = Tensor::FromVector<float>({0, 0}, {2});
  spec.dense.push_back(x);
  if (bits & 2) {
    spec.dense.push_back(
        {"ids", DT_INT64, PartialTensorShape({-1, 2}), Tensor::Scalar<int64_t>(-1)});
  }
  if (bits & 4) spec.sparse.push_back({"tags", DT_STRING});
  if (bits & 8) spec.sparse.push_back({"x", DT_FLOAT});
  if (bits & 16) {
    spec.ragged.push_back({"ids", DT_INT64});
    spec.ragged_split_types.push_back((bits & 32) ? DT_INT32 : DT_INT64);
  }
  return spec;
}

void Check(bool ok, const std::string& what) {
  if (!ok) fuzz::Fail(what);
}

void CheckShapes(const ExampleParseSpec& spec, const ParsedExamples& out, int64_t batch,
                 bool scalar) {
  const int rank = scalar ? 1 : 2;
  Check(out.dense_values.size() == spec.dense.size(), "one dense output per dense feature");
  Check(out.dense_values[0].dims() == rank && out.dense_values[0].dim_size(rank - 1) == 2,
        absl::StrCat("dense x has shape ", out.dense_values[0].shape().DebugString()));
  if (!scalar) Check(out.dense_values[0].dim_size(0) == batch, "dense x has the batch's size");
  for (size_t j = 0; j < spec.sparse.size(); ++j) {
    const Tensor& indices = out.sparse_indices[j];
    Check(indices.dims() == 2 && indices.dim_size(1) == rank &&
              indices.dim_size(0) == out.sparse_values[j].NumElements(),
          "one index row per sparse value");
    Check(out.sparse_shapes[j].NumElements() == rank, "sparse shape of the batch's rank + 1");
  }
  for (size_t j = 0; j < spec.ragged.size(); ++j) {
    const Tensor& splits = out.ragged_splits[j];
    Check(splits.NumElements() == batch + 1, "batch + 1 row splits");
    const int64_t last =
        splits.dtype() == DT_INT32 ? splits.data<int32_t>()[batch] : splits.data<int64_t>()[batch];
    Check(last == out.ragged_values[j].NumElements(), "the last split counts every value");
  }
}

void FuzzParseExample(fuzz::Input& in) {
  const uint8_t bits = in.Byte();
  const bool scalar = bits & 64;
  std::vector<std::string> examples;
  while (in.remaining() > 0 && examples.size() < 16) examples.push_back(in.Until("\n--\n"));
  if (scalar) examples.resize(1);
  Tensor serialized = scalar ? Tensor::Scalar<std::string>(examples[0])
                             : Tensor::FromVector<std::string>(
                                   examples, TensorShape({static_cast<int64_t>(examples.size())}));
  const ExampleParseSpec spec = SpecFor(bits);
  absl::StatusOr<ParsedExamples> out = ParseExamples(spec, serialized, Tensor(DT_STRING, {0}));
  if (!out.ok()) {
    fuzz::ExpectError(out.status(),
                      {absl::StatusCode::kInvalidArgument, absl::StatusCode::kResourceExhausted},
                      "ParseExamples");
    return;
  }
  CheckShapes(spec, *out, scalar ? 1 : static_cast<int64_t>(examples.size()), scalar);
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorgrid::fuzz::Input in(data, size);
  tensorgrid::FuzzParseExample(in);
  return 0;
}
