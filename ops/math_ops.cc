// Math op definitions: element-wise arithmetic, MatMul, reductions,
// comparison and Cast. Kernels: kernels/math/.
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

constexpr char kArithmeticTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}";

constexpr char kSignedTypes[] = "T: {bfloat16, half, float, double, int8, int16, int32, int64}";
constexpr char kFloatTypes[] = "T: {bfloat16, half, float, double}";

constexpr char kReductionTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}";

TG_REGISTER_OP("Neg")
    .Input("x: T")
    .Output("y: T")
    .Attr(kSignedTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = -x, element-wise.");

TG_REGISTER_OP("Square")
    .Input("x: T")
    .Output("y: T")
    .Attr(kSignedTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = x * x, element-wise.");

TG_REGISTER_OP("Sqrt")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = sqrt(x), element-wise.");

TG_REGISTER_OP("Rsqrt")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = 1 / sqrt(x), element-wise.");

TG_REGISTER_OP("Exp")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = e^x, element-wise.");

TG_REGISTER_OP("Log")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = ln(x), element-wise.");

TG_REGISTER_OP("Tanh")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = tanh(x), element-wise.");

TG_REGISTER_OP("Sigmoid")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = 1 / (1 + e^-x), element-wise.");

TG_REGISTER_OP("Reciprocal")
    .Input("x: T")
    .Output("y: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("y = 1 / x, element-wise.");

TG_REGISTER_OP("Add")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(kArithmeticTypes)
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc("z = x + y, element-wise with numpy broadcasting.");

TG_REGISTER_OP("AddV2")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(kArithmeticTypes)
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc(R"doc(
z = x + y, element-wise with numpy broadcasting (the op TensorFlow 2 emits;
same semantics as Add here).
)doc");

TG_REGISTER_OP("Sub")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(kArithmeticTypes)
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc("z = x - y, element-wise with numpy broadcasting.");

TG_REGISTER_OP("Mul")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(kArithmeticTypes)
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc("z = x * y, element-wise with numpy broadcasting.");

TG_REGISTER_OP("RealDiv")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}")
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc(R"doc(
z = x / y, element-wise with numpy broadcasting. On integers it truncates
toward zero and fails on a zero divisor rather than trapping.
)doc");

TG_REGISTER_OP("Maximum")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}")
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc("z = max(x, y), element-wise with numpy broadcasting; NaN propagates.");

TG_REGISTER_OP("Minimum")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}")
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc("z = min(x, y), element-wise with numpy broadcasting; NaN propagates.");

TG_REGISTER_OP("FloorMod")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {int8, int16, int32, int64, uint8, uint16, bfloat16, half, float, double}")
    .SetShapeFn(shape_fns::BroadcastBinary)
    .Doc(R"doc(
z = x - floor(x / y) * y, which has the sign of y (Python's %), element-wise
with numpy broadcasting. An integer y of 0 is an error.
)doc");

// BroadcastBinary; but with incompatible_shape_error = false, shapes that do
// not broadcast give a scalar, so the output is known only when both inputs
// are.
absl::Status EqualShape(ShapeInferenceContext& c) {
  bool incompatible_shape_error = true;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "incompatible_shape_error", &incompatible_shape_error));
  if (incompatible_shape_error) return shape_fns::BroadcastBinary(c);
  if (!c.input(0).IsFullyDefined() || !c.input(1).IsFullyDefined()) return absl::OkStatus();
  if (!shape_fns::BroadcastBinary(c).ok()) return shape_fns::ScalarShape(c);
  return absl::OkStatus();
}

TG_REGISTER_OP("Equal")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, bool, "
        "string}")
    .Attr("incompatible_shape_error: bool = true")
    .SetShapeFn(EqualShape)
    .Doc(R"doc(
z = (x == y), element-wise (bool) with numpy broadcasting.

incompatible_shape_error: Fail on shapes that do not broadcast; when false,
  they compare unequal (a scalar false).
)doc");

TG_REGISTER_OP("SigmoidGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
The gradient of Sigmoid from its output `y` and the gradient `dy` flowing
into it: z = dy * y * (1 - y).
)doc");

TG_REGISTER_OP("TanhGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
The gradient of Tanh from its output `y` and the gradient `dy` flowing into
it: z = dy * (1 - y^2).
)doc");

TG_REGISTER_OP("SqrtGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr(kFloatTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
The gradient of Sqrt from its output `y` and the gradient `dy` flowing into
it: z = dy / (2y).
)doc");

// Every input has one shape: the first fully known one, else input 0's.
absl::Status AddNShape(ShapeInferenceContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (c.input(i).IsFullyDefined()) {
      c.set_output(0, c.input(i));
      return absl::OkStatus();
    }
  }
  return shape_fns::UnchangedShape(c);
}

TG_REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}")
    .SetShapeFn(AddNShape)
    .Doc("sum = inputs[0] + ... + inputs[N-1], for N tensors of one shape.");

TG_REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {bfloat16, half, float, double, int32, int64}")
    .SetShapeFn(shape_fns::MatMul)
    .Doc(R"doc(
product = a x b, each optionally transposed, for matrices.

transpose_a: Multiply by the transpose of `a`.
transpose_b: Multiply by the transpose of `b`.
)doc");

// Dimensions `axes` (each in [-rank, rank)) of a rank-`rank` input, as a
// mask; InvalidArgument naming the axis out of range.
absl::StatusOr<std::vector<bool>> AxesMask(const ShapeInferenceContext& c,
                                           const std::vector<int64_t>& axes, int rank) {
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    int axis;
    TG_RETURN_IF_ERROR(shape_fns::CheckAxis(c, a, rank, &axis));
    reduced[axis] = true;
  }
  return reduced;
}

// With constant axes, the input without them (or with them 1, keep_dims).
// Without, only the output's rank can be known: with keep_dims, with a
// single (scalar) axis, or when no axes are given.
absl::Status ReductionShape(ShapeInferenceContext& c) {
  bool keep_dims = false;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "keep_dims", &keep_dims));
  const PartialTensorShape& input = c.input(0);
  const PartialTensorShape& axes = c.input(1);
  if (input.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> values;
  if (shape_fns::InputInts(c, 1, &values)) {
    TG_ASSIGN_OR_RETURN(const std::vector<bool> reduced, AxesMask(c, values, input.dims()));
    std::vector<int64_t> dims;
    for (int d = 0; d < input.dims(); ++d) {
      if (!reduced[d]) {
        dims.push_back(input.dim_size(d));
      } else if (keep_dims) {
        dims.push_back(1);
      }
    }
    c.set_output(0, PartialTensorShape(dims));
    return absl::OkStatus();
  }
  if (axes.dims() == 1 && axes.dim_size(0) == 0) return shape_fns::UnchangedShape(c);
  std::vector<int64_t> dims;
  if (keep_dims) {
    dims.assign(input.dims(), -1);
  } else if (axes.dims() == 0 && input.dims() > 0) {
    dims.assign(input.dims() - 1, -1);
  } else {
    return absl::OkStatus();
  }
  c.set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

TG_REGISTER_OP("Sum")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr(kReductionTypes)
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc(R"doc(
The sum of `input` over the dimensions in `reduction_indices` (a scalar or
a vector).

keep_dims: Keep reduced dimensions with size 1.
)doc");

TG_REGISTER_OP("Mean")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr(kReductionTypes)
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc(R"doc(
The mean of `input` over the dimensions in `reduction_indices` (a scalar or
a vector).

keep_dims: Keep reduced dimensions with size 1.
)doc");

TG_REGISTER_OP("Max")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr(kReductionTypes)
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc(R"doc(
The maximum of `input` over the dimensions in `reduction_indices` (a scalar or
a vector).

keep_dims: Keep reduced dimensions with size 1.
)doc");

// The input without dimension `dimension` (when a constant; else one
// dimension fewer, all unknown).
absl::Status ArgMaxShape(ShapeInferenceContext& c) {
  const PartialTensorShape& input = c.input(0);
  if (input.unknown_rank() || input.dims() == 0) return absl::OkStatus();
  std::vector<int64_t> values;
  if (shape_fns::InputInts(c, 1, &values) && values.size() == 1) {
    TG_ASSIGN_OR_RETURN(const std::vector<bool> reduced, AxesMask(c, values, input.dims()));
    std::vector<int64_t> dims;
    for (int d = 0; d < input.dims(); ++d) {
      if (!reduced[d]) dims.push_back(input.dim_size(d));
    }
    c.set_output(0, PartialTensorShape(dims));
    return absl::OkStatus();
  }
  c.set_output(0, PartialTensorShape(std::vector<int64_t>(input.dims() - 1, -1)));
  return absl::OkStatus();
}

TG_REGISTER_OP("ArgMax")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, bool}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("output_type: {int32, int64} = DT_INT64")
    .SetShapeFn(ArgMaxShape)
    .Doc(R"doc(
The index of the largest value along `dimension`. Ties go to the smallest
index; a NaN beats every number (the first NaN wins), as in numpy.

output_type: DT_INT64 or DT_INT32.
)doc");

TG_REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: type")
    .Attr("DstT: type")
    .Attr("Truncate: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
`x` converted to `DstT`.

Every input converts: floating to integer truncates toward zero, saturates
at the integer's range and maps NaN to 0; integer to integer wraps; x to
bool is x != 0; bool to x is 0 or 1.

DstT: The type to convert to.
Truncate: Narrowing floating-point conversions drop the extra mantissa bits
  (toward zero) instead of rounding to nearest even.
)doc");

// A vector; its length is known only from the values.
// A vector; its length when start, limit and delta are integer constants
// (InvalidArgument for the values the kernel refuses, as TensorFlow's).
absl::Status RangeShape(ShapeInferenceContext& c) {
  std::vector<int64_t> start, limit, delta;
  if (!shape_fns::InputInts(c, 0, &start) || !shape_fns::InputInts(c, 1, &limit) ||
      !shape_fns::InputInts(c, 2, &delta) || start.size() != 1 || limit.size() != 1 ||
      delta.size() != 1) {
    c.set_output(0, PartialTensorShape({-1}));
    return absl::OkStatus();
  }
  const int64_t from = start[0], to = limit[0], by = delta[0];
  if (by == 0) return shape_fns::AtNode(c, errors::InvalidArgument("Requires delta != 0"));
  if ((by > 0 && from > to) || (by < 0 && from < to)) {
    return shape_fns::AtNode(
        c, errors::InvalidArgument("Requires start ", by > 0 ? "<=" : ">=", " limit when delta ",
                                   by > 0 ? "> 0: " : "< 0: ", from, "/", to));
  }
  // The values are int32 or int64, so the span fits in an unsigned int64.
  const uint64_t span = by > 0 ? static_cast<uint64_t>(to) - static_cast<uint64_t>(from)
                               : static_cast<uint64_t>(from) - static_cast<uint64_t>(to);
  const uint64_t step = by > 0 ? static_cast<uint64_t>(by) : 0 - static_cast<uint64_t>(by);
  c.set_output(0, PartialTensorShape({static_cast<int64_t>(span / step + (span % step != 0))}));
  return absl::OkStatus();
}

TG_REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64} = DT_INT32")
    .SetShapeFn(RangeShape)
    .Doc("The vector start, start + delta, ... up to but not including limit.");

}  // namespace
}  // namespace tensorgrid
