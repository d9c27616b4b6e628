// Parsing op definitions: ParseExample and ParseExampleV2, which turn
// serialized tf.Example protos into tensors (docs/parsing.md). Kernels:
// kernels/parsing/.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

using shape_fns::AtNode;

// The outputs of both ops: `num_sparse` sparse features of rank
// batch_rank + 1, the dense features prefixed by the batch's shape, and
// (V2) the ragged features' values and row splits.
absl::Status ParseExampleOutputs(ShapeInferenceContext& c, int num_sparse,
                                 const PartialTensorShape& batch, int num_ragged) {
  std::vector<PartialTensorShape> dense_shapes;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "dense_shapes", &dense_shapes));
  const int64_t sparse_rank = batch.unknown_rank() ? -1 : batch.dims() + 1;
  int out = 0;
  for (int i = 0; i < num_sparse; ++i) c.set_output(out++, PartialTensorShape({-1, sparse_rank}));
  for (int i = 0; i < num_sparse; ++i) c.set_output(out++, PartialTensorShape({-1}));
  for (int i = 0; i < num_sparse; ++i) c.set_output(out++, PartialTensorShape({sparse_rank}));
  for (const PartialTensorShape& shape : dense_shapes) {
    if (shape.unknown_rank()) {
      return AtNode(c, errors::InvalidArgument("dense_shapes may not have an unknown rank"));
    }
    if (!batch.unknown_rank() && out < c.num_outputs()) {
      std::vector<int64_t> dims;
      for (int d = 0; d < batch.dims(); ++d) dims.push_back(batch.dim_size(d));
      for (int d = 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
      c.set_output(out, PartialTensorShape(dims));
    }
    ++out;
  }
  const int64_t splits = batch.dims() == 1 && batch.dim_size(0) >= 0 ? batch.dim_size(0) + 1 : -1;
  for (int i = 0; i < num_ragged && out < c.num_outputs(); ++i) {
    c.set_output(out++, PartialTensorShape({-1}));
  }
  for (int i = 0; i < num_ragged && out < c.num_outputs(); ++i) {
    c.set_output(out++, PartialTensorShape({splits}));
  }
  return absl::OkStatus();
}

absl::Status ParseExampleShapeFn(ShapeInferenceContext& c) {
  int64_t num_sparse;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "Nsparse", &num_sparse));
  const PartialTensorShape& serialized = c.input(0);
  if (!serialized.unknown_rank() && serialized.dims() != 1) {
    return AtNode(
        c, errors::InvalidArgument("serialized must be a vector, got ", serialized.DebugString()));
  }
  const PartialTensorShape batch =
      serialized.unknown_rank() ? PartialTensorShape({-1}) : serialized;
  return ParseExampleOutputs(c, static_cast<int>(num_sparse), batch, 0);
}

absl::Status ParseExampleV2ShapeFn(ShapeInferenceContext& c) {
  int64_t num_sparse;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "num_sparse", &num_sparse));
  std::vector<DataType> ragged_types;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "ragged_value_types", &ragged_types));
  const PartialTensorShape& serialized = c.input(0);
  if (!serialized.unknown_rank() && serialized.dims() > 1) {
    return AtNode(c, errors::InvalidArgument("serialized must be a scalar or a vector, got ",
                                             serialized.DebugString()));
  }
  return ParseExampleOutputs(c, static_cast<int>(num_sparse), serialized,
                             static_cast<int>(ragged_types.size()));
}

TG_REGISTER_OP("ParseExample")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: Nsparse * string")
    .Input("dense_keys: Ndense * string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: Nsparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: Nsparse * int64")
    .Output("dense_values: Tdense")
    .Attr("Nsparse: int >= 0")
    .Attr("Ndense: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleShapeFn)
    .Doc(R"doc(
Parses a vector of serialized tf.Example protos into tensors: for each
dense key a tensor [batch] + dense_shapes[j] (missing features take
dense_defaults[j]; an empty default makes the feature required), and for
each sparse key a SparseTensor of its values (indices [n, 2], values [n],
shape [batch, most values in one example]).

serialized: A vector of serialized Example protos.
names: Empty, or one name per example, for error messages.
sparse_keys: Nsparse scalars: the features read as variable-length lists.
dense_keys: Ndense scalars: the features read as fixed-shape tensors.
dense_defaults: Ndense tensors: the value of a missing feature, or empty
  if the feature is required. For a dense shape whose first dimension is -1
  (a variable-length feature, padded), a single padding value.
sparse_types: The dtype of each sparse feature (float, int64 or string).
Tdense: The dtype of each dense feature.
dense_shapes: The shape of each dense feature in one example.
)doc");

TG_REGISTER_OP("ParseExampleV2")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: string")
    .Input("dense_keys: string")
    .Input("ragged_keys: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Output("ragged_values: ragged_value_types")
    .Output("ragged_row_splits: ragged_split_types")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("ragged_value_types: list({float,int64,string}) >= 0")
    .Attr("ragged_split_types: list({int32,int64}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleV2ShapeFn)
    .Doc(R"doc(
ParseExample with its keys as vectors, a scalar or vector `serialized`
(a scalar gives outputs without the batch dimension), and ragged features:
each ragged key gives its values across the batch and row splits
[batch + 1] where example i's values are values[splits[i]:splits[i+1]].

sparse_keys: A vector of num_sparse keys.
dense_keys: A vector of one key per dense default.
ragged_keys: A vector of one key per ragged value type.
)doc");

}  // namespace
}  // namespace tensorgrid
