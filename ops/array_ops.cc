// Array op definitions: constants, placeholders, identity and shape
// manipulation. Kernels: kernels/array/.
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .SetShapeFn(shape_fns::ShapeFromAttr)
    .Doc(R"doc(
A constant: the tensor `value`.

value: The tensor.
dtype: The type of `value`.
)doc");

TG_REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = <unknown>")
    .SetShapeFn(shape_fns::ShapeFromAttr)
    .Doc(R"doc(
A value that must be fed when the graph runs.

dtype: The type of the fed value.
shape: The shape fed values must have (dimensions may be -1).
)doc");

TG_REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetShapeFn(shape_fns::ShapeFromAttr)
    .Doc(R"doc(
`input` unless a value is fed in its place.

shape: The shape fed values must have (dimensions may be -1).
)doc");

TG_REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("output = input (the same buffer, no copy).");

TG_REGISTER_OP("NoOp").Doc("Does nothing; a target for control dependencies.");

TG_REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc(R"doc(
A step's feed: argument `index` of the executor's call frame. The master
turns fed tensors into these when it rewrites a graph for a step.
)doc");

TG_REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .Doc("A step's fetch: return value `index` of the executor's call frame.");

using shape_fns::AtNode;

absl::Status BroadcastGradientArgsShapeFn(ShapeInferenceContext& c) {
  c.set_output(0, PartialTensorShape({-1}));
  c.set_output(1, PartialTensorShape({-1}));
  return absl::OkStatus();
}

TG_REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastGradientArgsShapeFn)
    .Doc(R"doc(
For shapes s0 and s1 that broadcast together, the dimensions of the
result along which each was repeated: [2,3,5] and [3,1] give r0 = [] and
r1 = [0, 2]. A broadcasting op's gradient sums over them.

A dimension of size 1 in both shapes is listed in both, as TensorFlow does.
)doc");

// The output's shape is `shape` (its rank when only its length is known).
absl::Status BroadcastToShapeFn(ShapeInferenceContext& c) {
  PartialTensorShape shape;
  TG_RETURN_IF_ERROR(shape_fns::ShapeFromShapeInput(c, 1, &shape));
  c.set_output(0, shape);
  return absl::OkStatus();
}

// The dimensions of a shape of known rank (-1 for unknown ones).
std::vector<int64_t> DimsOf(const PartialTensorShape& shape) {
  std::vector<int64_t> dims;
  for (int d = 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
  return dims;
}

// `axis` (input i, a scalar) in [-rank, rank) made non-negative; false when
// it is not a constant. InvalidArgument when out of range.
absl::StatusOr<bool> ConstantAxis(const ShapeInferenceContext& c, int i, int rank, int* axis) {
  std::vector<int64_t> values;
  if (!shape_fns::InputInts(c, i, &values) || values.size() != 1) return false;
  TG_RETURN_IF_ERROR(shape_fns::CheckAxis(c, values[0], rank, axis));
  return true;
}

TG_REGISTER_OP("BroadcastTo")
    .Input("input: T")
    .Input("shape: Tidx")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastToShapeFn)
    .Doc(R"doc(
`input` repeated along dimensions of size 1 (and new leading ones) to the
shape `shape`, as numpy broadcasting does.
)doc");

// Every offset has the shape of its input's shape vector.
absl::Status ConcatOffsetShapeFn(ShapeInferenceContext& c) {
  for (int i = 1; i < c.num_inputs(); ++i) c.set_output(i - 1, c.input(i));
  return absl::OkStatus();
}

TG_REGISTER_OP("ConcatOffset")
    .Input("concat_dim: int32")
    .Input("shape: N * shape_type")
    .Output("offset: N * shape_type")
    .Attr("N: int >= 2")
    .Attr("shape_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ConcatOffsetShapeFn)
    .Doc(R"doc(
Where each of the tensors of shapes `shape` (N vectors) starts in their
concatenation along `concat_dim`: offset[i] is 0 but at concat_dim.

  concat_dim = 1, shape = {[2,3,5], [2,7,5]}  ->  offset = {[0,0,0], [0,3,0]}
)doc");

// The output has the inputs' rank. With a constant `axis`, the inputs agree
// in every other dimension (InvalidArgument naming the one that does not),
// and the output's `axis` is their sum.
absl::Status ConcatShapeFn(ShapeInferenceContext& c) {
  const int n = c.num_inputs() - 1;
  int rank = -1;
  for (int i = 0; i < n && rank < 0; ++i) rank = c.input(i).dims();
  if (rank < 0) return absl::OkStatus();
  int axis = 0;
  absl::StatusOr<bool> known = ConstantAxis(c, n, rank, &axis);
  TG_RETURN_IF_ERROR(known.status());
  std::vector<int64_t> dims(rank, -1);
  if (!*known) {
    c.set_output(0, PartialTensorShape(dims));
    return absl::OkStatus();
  }
  int64_t total = 0;
  PartialTensorShape common(dims);
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& in = c.input(i);
    if (in.unknown_rank()) {
      total = -1;
      continue;
    }
    if (in.dims() != rank) {
      return AtNode(
          c, errors::InvalidArgument("ConcatV2 input ", i, " has shape ", in.DebugString(),
                                     " of rank ", in.dims(), ", not ", rank, " as the others"));
    }
    std::vector<int64_t> others = DimsOf(in);
    others[axis] = -1;
    if (!shape_fns::MergeShapes(common, PartialTensorShape(others), &common)) {
      return AtNode(c, errors::InvalidArgument("ConcatV2 input ", i, " has shape ",
                                               in.DebugString(), ", which does not match ",
                                               common.DebugString(), " but along axis ", axis));
    }
    const int64_t d = in.dim_size(axis);
    total = total < 0 || d < 0 ? -1 : total + d;
  }
  dims = DimsOf(common);
  dims[axis] = total;
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("ConcatV2")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ConcatShapeFn)
    .Doc(R"doc(
`values` joined along `axis`.

values: N >= 2 tensors that agree in every dimension but `axis`.
)doc");

// The inputs' common shape with N inserted at `axis`; InvalidArgument
// naming the input whose shape disagrees, or an axis out of range.
absl::Status PackShapeFn(ShapeInferenceContext& c) {
  PartialTensorShape common;
  int first_known = -1;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const PartialTensorShape& in = c.input(i);
    if (in.unknown_rank()) continue;
    if (first_known < 0) {
      common = in;
      first_known = i;
      continue;
    }
    if (in.dims() != common.dims()) {
      return AtNode(c, errors::InvalidArgument("Pack input ", i, " has shape ", in.DebugString(),
                                               ", but input ", first_known, " has shape ",
                                               common.DebugString(), " (all must match)"));
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < in.dims(); ++d) {
      const int64_t a = common.dim_size(d), b = in.dim_size(d);
      if (a >= 0 && b >= 0 && a != b) {
        return AtNode(c, errors::InvalidArgument("Pack input ", i, " has shape ", in.DebugString(),
                                                 ", but input ", first_known, " has shape ",
                                                 common.DebugString(), " (all must match)"));
      }
      dims.push_back(a >= 0 ? a : b);
    }
    common = PartialTensorShape(dims);
  }
  if (first_known < 0) return absl::OkStatus();
  int64_t axis;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "axis", &axis));
  const int out_rank = common.dims() + 1;
  if (axis < -out_rank || axis >= out_rank) {
    return AtNode(
        c, errors::InvalidArgument("axis ", axis, " is out of range [", -out_rank, ", ", out_rank,
                                   ") for Pack of inputs of rank ", common.dims()));
  }
  if (axis < 0) axis += out_rank;
  std::vector<int64_t> dims;
  for (int d = 0; d < common.dims(); ++d) dims.push_back(common.dim_size(d));
  dims.insert(dims.begin() + axis, c.num_inputs());
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(PackShapeFn)
    .Doc(R"doc(
The N tensors `values`, all of one shape, stacked into one tensor of rank
one higher along a new dimension `axis` (negative counts from the end of
the output's dimensions): N inputs of shape [A, B] give [N, A, B] for
axis 0 and [A, B, N] for axis 2 or -1.

  values = {[1, 4], [2, 5], [3, 6]}, axis = 1  ->  [[1, 2, 3], [4, 5, 6]]
)doc");

// `num` outputs: the input without dimension `axis`, which must be `num` long.
absl::Status UnpackShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  if (in.unknown_rank()) return absl::OkStatus();
  int64_t axis, num;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "axis", &axis));
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "num", &num));
  if (axis < -in.dims() || axis >= in.dims()) {
    return AtNode(c, errors::InvalidArgument("axis ", axis, " is out of range [", -in.dims(), ", ",
                                             in.dims(), ") for Unpack of ", in.DebugString()));
  }
  if (axis < 0) axis += in.dims();
  if (in.dim_size(axis) >= 0 && in.dim_size(axis) != num) {
    return AtNode(c, errors::InvalidArgument("dimension ", axis, " of ", in.DebugString(),
                                             " must be num = ", num));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < in.dims(); ++d) {
    if (d != axis) dims.push_back(in.dim_size(d));
  }
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 0")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(UnpackShapeFn)
    .Doc(R"doc(
`value` cut along dimension `axis` into its `num` slices, each without that
dimension: the inverse of Pack. Dimension `axis` (negative counts from the
end) must be `num` long.

  value = [[1, 2, 3], [4, 5, 6]], num = 3, axis = 1  ->  {[1, 4], [2, 5], [3, 6]}
)doc");

// Rank 1 + rank(C) when data[0] and indices[0] have known ranks.
absl::Status DynamicStitchShapeFn(ShapeInferenceContext& c) {
  const int n = c.num_inputs() / 2;
  const PartialTensorShape& indices = c.input(0);
  const PartialTensorShape& data = c.input(n);
  if (indices.unknown_rank() || data.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> dims = {-1};
  for (int d = indices.dims(); d < data.dims(); ++d) dims.push_back(data.dim_size(d));
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("DynamicStitch")
    .Input("indices: N * int32")
    .Input("data: N * T")
    .Output("merged: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .SetShapeFn(DynamicStitchShapeFn)
    .Doc(R"doc(
merged[indices[m][i], ...] = data[m][i, ...] for N (indices, data) pairs.

A later (m, i) wins over an earlier one with the same index; positions no
index names are zero.

  indices = {[0, 1, 2, 3], [1, 2]}, data = {[2, 3, 5, 7], [1, 1]}
  merged  = [2, 1, 1, 7]
)doc");

// The output's shape is `dims` (its rank when only its length is known).
absl::Status FillShapeFn(ShapeInferenceContext& c) {
  PartialTensorShape shape;
  TG_RETURN_IF_ERROR(shape_fns::ShapeFromShapeInput(c, 0, &shape));
  c.set_output(0, shape);
  return absl::OkStatus();
}

TG_REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {int32, int64} = DT_INT32")
    .SetShapeFn(FillShapeFn)
    .Doc("A tensor of shape `dims` filled with the scalar `value`.");

TG_REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("A tensor of zeros with the shape and type of `x`.");

TG_REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, int64, bool}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("A tensor of ones with the shape and type of `x`.");

TG_REGISTER_OP("InvertPermutation")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y[x[i]] = i for a permutation x of [0, n).");

// The output's shape is `shape` when it is a constant, its one -1 worked out
// when the input's size is known (InvalidArgument for sizes that cannot
// match, as TensorFlow's "Cannot reshape"); else its rank is the length of
// `shape`, and a length-1 shape of a fully known input is the flattened input.
absl::Status ReshapeShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  const bool in_known = in.IsFullyDefined();
  int64_t in_size = 1;
  for (int d = 0; in_known && d < in.dims(); ++d) in_size *= in.dim_size(d);
  std::vector<int64_t> dims;
  if (shape_fns::InputInts(c, 1, &dims)) {
    const std::string asked = absl::StrCat("[", absl::StrJoin(dims, ","), "]");
    int unknown = -1;
    int64_t product = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == -1 && unknown < 0) {
        unknown = static_cast<int>(d);
      } else if (dims[d] < 0) {
        return AtNode(c,
                      errors::InvalidArgument("the shape ", asked,
                                              " may have one -1 and no other negative dimension"));
      } else if (__builtin_mul_overflow(product, dims[d], &product)) {
        return AtNode(c, errors::InvalidArgument("the shape ", asked, " has too many elements"));
      }
    }
    if (in_known) {
      const bool fits =
          unknown < 0 ? product == in_size : (product == 0 ? in_size == 0 : in_size % product == 0);
      if (!fits) {
        return AtNode(c,
                      errors::InvalidArgument("cannot reshape a tensor of ", in_size, " elements (",
                                              in.DebugString(), ") into ", asked));
      }
      if (unknown >= 0 && product > 0) dims[unknown] = in_size / product;
    }
    c.set_output(0, PartialTensorShape(dims));
    return absl::OkStatus();
  }
  const PartialTensorShape& sizes = c.input(1);
  if (sizes.dims() != 1 || sizes.dim_size(0) < 0) return absl::OkStatus();
  if (sizes.dim_size(0) == 1 && in_known) {
    c.set_output(0, PartialTensorShape({in_size}));
    return absl::OkStatus();
  }
  c.set_output(0, PartialTensorShape(std::vector<int64_t>(sizes.dim_size(0), -1)));
  return absl::OkStatus();
}

absl::Status ShapeShapeFn(ShapeInferenceContext& c) {
  c.set_output(0, PartialTensorShape({c.input(0).dims()}));  // -1 for unknown rank
  return absl::OkStatus();
}

TG_REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn(ReshapeShapeFn)
    .Doc("`tensor` with the shape `shape` (one dimension may be -1).");

TG_REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeShapeFn)
    .Doc(R"doc(
The shape of `input` as a 1-D tensor.

out_type: DT_INT32 or DT_INT64.
)doc");

TG_REGISTER_OP("Size")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(R"doc(
The number of elements of `input`, as a scalar.

out_type: DT_INT32 or DT_INT64.
)doc");

// The output has the input's rank. A constant `size` gives its dimensions
// (a -1 the rest of the input's dimension past a constant `begin`);
// InvalidArgument for a begin or size that does not fit a known dimension.
absl::Status SliceShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  std::vector<int64_t> begin, size;
  const bool have_begin = shape_fns::InputInts(c, 1, &begin);
  const bool have_size = shape_fns::InputInts(c, 2, &size);
  int rank = in.dims();
  if (rank < 0 && have_size) rank = static_cast<int>(size.size());
  if (rank < 0) return absl::OkStatus();
  std::vector<int64_t> dims(rank, -1);
  if ((have_begin && begin.size() != dims.size()) || (have_size && size.size() != dims.size())) {
    return AtNode(c, errors::InvalidArgument("begin and size must have one entry per dimension "
                                             "of the input ",
                                             in.DebugString()));
  }
  for (int d = 0; d < rank && have_size; ++d) {
    const int64_t extent = in.unknown_rank() ? -1 : in.dim_size(d);
    const int64_t b = have_begin ? begin[d] : -1;
    if (have_begin && (b < 0 || (extent >= 0 && b > extent))) {
      return AtNode(c, errors::InvalidArgument("slice begin ", b, " is out of range for dimension ",
                                               d, " of ", in.DebugString()));
    }
    if (size[d] == -1) {
      dims[d] = extent >= 0 && b >= 0 ? extent - b : -1;
    } else if (size[d] < 0 || (extent >= 0 && b >= 0 && b + size[d] > extent)) {
      return AtNode(
          c, errors::InvalidArgument("slice size ", size[d], " at begin ", b,
                                     " does not fit dimension ", d, " of ", in.DebugString()));
    } else {
      dims[d] = size[d];
    }
  }
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .SetShapeFn(SliceShapeFn)
    .Doc(R"doc(
The block of `input` that starts at `begin` and has shape `size` (a size
of -1 takes the rest of that dimension).
)doc");

// The output has the input's rank; with a constant `perm` (which must be a
// permutation of the input's dimensions), dimension i is the input's perm[i].
absl::Status TransposeShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  std::vector<int64_t> perm;
  if (shape_fns::InputInts(c, 1, &perm)) {
    const int rank = static_cast<int>(perm.size());
    std::vector<bool> seen(rank, false);
    bool valid = in.unknown_rank() || in.dims() == rank;
    for (int64_t p : perm) {
      valid = valid && p >= 0 && p < rank && !seen[p];
      if (valid) seen[p] = true;
    }
    if (!valid) {
      return AtNode(c, errors::InvalidArgument("perm [", absl::StrJoin(perm, ","),
                                               "] is not a permutation of the dimensions of ",
                                               in.DebugString()));
    }
    std::vector<int64_t> dims(rank, -1);
    for (int i = 0; i < rank && !in.unknown_rank(); ++i) dims[i] = in.dim_size(perm[i]);
    c.set_output(0, PartialTensorShape(dims));
    return absl::OkStatus();
  }
  if (in.unknown_rank()) return absl::OkStatus();
  if (in.dims() <= 1) {
    c.set_output(0, in);
  } else {
    c.set_output(0, PartialTensorShape(std::vector<int64_t>(in.dims(), -1)));
  }
  return absl::OkStatus();
}

TG_REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32")
    .SetShapeFn(TransposeShapeFn)
    .Doc("Dimension i of `y` is dimension perm[i] of `x`.");

// paddings is [rank(input), 2]; the output has the input's rank.
absl::Status PadShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  const PartialTensorShape& paddings = c.input(1);
  if (!paddings.unknown_rank()) {
    const bool bad =
        paddings.dims() != 2 || (paddings.dim_size(1) >= 0 && paddings.dim_size(1) != 2) ||
        (!in.unknown_rank() && paddings.dim_size(0) >= 0 && paddings.dim_size(0) != in.dims());
    if (bad) {
      return AtNode(
          c, errors::InvalidArgument("paddings must be [rank of input, 2], got ",
                                     paddings.DebugString(), " for input ", in.DebugString()));
    }
  }
  int rank = in.unknown_rank() ? -1 : in.dims();
  if (rank < 0 && !paddings.unknown_rank()) rank = static_cast<int>(paddings.dim_size(0));
  if (rank < 0) return absl::OkStatus();
  std::vector<int64_t> dims(rank, -1);
  std::vector<int64_t> pads;
  if (shape_fns::InputInts(c, 1, &pads) && pads.size() == 2 * dims.size()) {
    for (int d = 0; d < rank; ++d) {
      if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
        return AtNode(c, errors::InvalidArgument("paddings must be >= 0, got [", pads[2 * d], ", ",
                                                 pads[2 * d + 1], "] for dimension ", d));
      }
      const int64_t extent = in.unknown_rank() ? -1 : in.dim_size(d);
      if (extent >= 0) dims[d] = extent + pads[2 * d] + pads[2 * d + 1];
    }
  }
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadShapeFn)
    .Doc(R"doc(
`input` with zeros around it: paddings[d] = [before, after] zeros are added
before and after dimension d (both >= 0).

paddings: [rank of input, 2].
)doc");

// The dims of `in` (known rank) that `squeeze_dims` names, each in [0, rank).
absl::StatusOr<std::vector<bool>> SqueezedDims(const ShapeInferenceContext& c,
                                               const PartialTensorShape& in) {
  std::vector<int64_t> dims;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "squeeze_dims", &dims));
  std::vector<bool> squeezed(in.dims(), dims.empty());
  for (int64_t d : dims) {
    if (d < -in.dims() || d >= in.dims()) {
      return AtNode(c, errors::InvalidArgument("squeeze_dims entry ", d, " is out of range for ",
                                               in.DebugString()));
    }
    squeezed[d < 0 ? d + in.dims() : d] = true;
  }
  return squeezed;
}

// The input without the named dims of size 1 (all of them if none is named).
absl::Status SqueezeShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  if (in.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> named;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "squeeze_dims", &named));
  TG_ASSIGN_OR_RETURN(std::vector<bool> squeezed, SqueezedDims(c, in));
  std::vector<int64_t> out;
  for (int d = 0; d < in.dims(); ++d) {
    const int64_t size = in.dim_size(d);
    if (!squeezed[d]) {
      out.push_back(size);
    } else if (named.empty()) {
      if (size < 0) return absl::OkStatus();  // unknown whether it goes: unknown rank
      if (size != 1) out.push_back(size);
    } else if (size >= 0 && size != 1) {
      return AtNode(c, errors::InvalidArgument("cannot squeeze dimension ", d, " of size ", size,
                                               " of ", in.DebugString()));
    }
  }
  c.set_output(0, PartialTensorShape(out));
  return absl::OkStatus();
}

TG_REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) >= 0 = []")
    .SetShapeFn(SqueezeShapeFn)
    .Doc(R"doc(
`input` without dimensions of size 1: those in `squeeze_dims` (negative
counts from the end; each must have size 1), or every one if it is empty.
The output shares the input's buffer.
)doc");

}  // namespace
}  // namespace tensorgrid
