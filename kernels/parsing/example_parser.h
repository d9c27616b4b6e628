// Reading batches of serialized tf.Example protos into tensors: the work of
// ParseExample and ParseExampleV2 (docs/parsing.md), apart from the kernels
// so that tests and the fuzz target (tests/fuzz/parse_example_fuzzer.cc)
// call it directly.
//
//   ExampleParseSpec spec;
//   spec.dense.push_back({"x", DT_FLOAT, PartialTensorShape({1}), Tensor()});
//   TG_ASSIGN_OR_RETURN(ParsedExamples out, ParseExamples(spec, serialized, names));
//   // out.dense_values[0]: float [batch, 1]
//
// Bad input (bytes that are no Example, a feature of the wrong dtype or
// length, a required feature missing) is InvalidArgument naming the example
// (its index, and its name when names are given) and the feature's key.
#ifndef TENSORGRID_KERNELS_PARSING_EXAMPLE_PARSER_H_
#define TENSORGRID_KERNELS_PARSING_EXAMPLE_PARSER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

// A feature read as a tensor of one shape per example.
struct DenseFeatureSpec {
  std::string key;
  DataType dtype = DT_FLOAT;  // float, int64 or string
  // Known dimensions, but for a first dimension of -1: a variable-length
  // feature, padded with `default_value` to the longest in the batch.
  PartialTensorShape shape;
  // Empty: the feature is required. Otherwise the value of a missing
  // feature (shape `shape`), or the single padding value of a
  // variable-length one.
  Tensor default_value;
};

// A feature read as a list of any length per example (sparse and ragged).
struct ListFeatureSpec {
  std::string key;
  DataType dtype = DT_FLOAT;
};

struct ExampleParseSpec {
  std::vector<ListFeatureSpec> sparse;
  std::vector<DenseFeatureSpec> dense;
  std::vector<ListFeatureSpec> ragged;
  std::vector<DataType> ragged_split_types;  // int32 or int64, one per ragged feature
};

// For `serialized` of shape [batch] (or a scalar: one example, and outputs
// without the batch dimension):
//   sparse_indices[j]  int64 [n, rank + 1]: (example, position) of each value
//   sparse_values[j]   [n]
//   sparse_shapes[j]   int64 [rank + 1]: batch shape, then the longest list
//   dense_values[j]    batch shape + dense shape (first dimension: the
//                      longest in the batch for variable-length features)
//   ragged_values[j]   [n]; ragged_splits[j] [batch + 1] (a scalar input
//                      counts as a batch of one)
struct ParsedExamples {
  std::vector<Tensor> sparse_indices, sparse_values, sparse_shapes;
  std::vector<Tensor> dense_values;
  std::vector<Tensor> ragged_values, ragged_splits;
};

// InvalidArgument for a spec that cannot describe a feature (an unknown
// rank, unknown dimensions but the first, a default of the wrong size or
// dtype).
absl::Status CheckExampleParseSpec(const ExampleParseSpec& spec);

// `names` is empty or has one string per example.
absl::StatusOr<ParsedExamples> ParseExamples(const ExampleParseSpec& spec, const Tensor& serialized,
                                             const Tensor& names);

}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_PARSING_EXAMPLE_PARSER_H_
