// Neural-network op definitions: activations, bias, softmax and its
// cross-entropy losses, pooling and batch normalization. Kernels:
// kernels/math/ (Relu, Relu6, BiasAdd) and kernels/nn/.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"
#include "core/util/pool_geometry.h"
#include "core/util/window_geometry.h"

namespace tensorgrid {
namespace {

constexpr char kReluTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}";

// Both inputs have one shape, which is the output's.
absl::Status SameShapeInputs(ShapeInferenceContext& c) {
  PartialTensorShape merged;
  if (!shape_fns::MergeShapes(c.input(0), c.input(1), &merged)) {
    return errors::InvalidArgument("node '", c.node().name(), "' (", c.node().op(),
                                   "): inputs must have the same shape, got ",
                                   c.input(0).DebugString(), " and ", c.input(1).DebugString());
  }
  c.set_output(0, merged);
  return absl::OkStatus();
}

TG_REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kReluTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("activations = max(features, 0)");

TG_REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(kReluTypes)
    .SetShapeFn(SameShapeInputs)
    .Doc("backprops = gradients where features > 0, else 0.");

TG_REGISTER_OP("Relu6")
    .Input("features: T")
    .Output("activations: T")
    .Attr(kReluTypes)
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("activations = min(max(features, 0), 6)");

TG_REGISTER_OP("Relu6Grad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr(kReluTypes)
    .SetShapeFn(SameShapeInputs)
    .Doc(R"doc(
backprops = gradients where 0 < features < 6, else 0. `features` may be the
Relu6's input or its output: both give the same result.
)doc");

// The output has value's shape; value must be at least a matrix and bias a vector.
absl::Status BiasAddShape(ShapeInferenceContext& c) {
  const PartialTensorShape& value = c.input(0);
  const PartialTensorShape& bias = c.input(1);
  if (!value.unknown_rank() && value.dims() < 2) {
    return errors::InvalidArgument("node '", c.node().name(),
                                   "' (BiasAdd): value must be at least 2-D, got ",
                                   value.DebugString());
  }
  if (!bias.unknown_rank() && bias.dims() != 1) {
    return errors::InvalidArgument("node '", c.node().name(), "' (BiasAdd): bias must be 1-D, got ",
                                   bias.DebugString());
  }
  c.set_output(0, value);
  return absl::OkStatus();
}

TG_REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddShape)
    .Doc(R"doc(
output = value + bias, `bias` (1-D) added along the channel dimension.

data_format: "NHWC" (channels last) or "NCHW".
)doc");

// A vector as long as the channel dimension.
absl::Status BiasAddGradShape(ShapeInferenceContext& c) {
  const PartialTensorShape& in = c.input(0);
  if (in.unknown_rank()) {
    c.set_output(0, PartialTensorShape({-1}));
    return absl::OkStatus();
  }
  if (in.dims() < 2) {
    return errors::InvalidArgument("node '", c.node().name(),
                                   "' (BiasAddGrad): out_backprop must be at least 2-D, got ",
                                   in.DebugString());
  }
  std::string data_format = "NHWC";
  if (HasNodeAttr(c.node(), "data_format")) {
    TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "data_format", &data_format));
  }
  c.set_output(0, PartialTensorShape({in.dim_size(data_format == "NCHW" ? 1 : in.dims() - 1)}));
  return absl::OkStatus();
}

TG_REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddGradShape)
    .Doc(R"doc(
The gradient of BiasAdd with respect to its bias: out_backprop summed over
every dimension but the channel one.

data_format: "NHWC" (channels last) or "NCHW".
)doc");

TG_REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("softmax = exp(logits) / sum(exp(logits)) along the last dimension.");

// The size two partial dimensions broadcast to (-1: unknown).
int64_t BroadcastDim(int64_t a, int64_t b) {
  if (a == 1) return b;
  if (b == 1) return a;
  return a >= 0 ? a : b;
}

absl::Status DenseXentShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& f = c.input(0);
  const PartialTensorShape& l = c.input(1);
  int64_t batch = -1, classes = -1;
  if (f.dims() == 2 && l.dims() == 2) {
    batch = BroadcastDim(f.dim_size(0), l.dim_size(0));
    classes = BroadcastDim(f.dim_size(1), l.dim_size(1));
  } else if (f.dims() == 2) {
    batch = f.dim_size(0);
    classes = f.dim_size(1);
  }
  c.set_output(0, PartialTensorShape({batch}));
  c.set_output(1, PartialTensorShape({batch, classes}));
  return absl::OkStatus();
}

absl::Status SparseXentShapeFn(ShapeInferenceContext& c) {
  const PartialTensorShape& f = c.input(0);
  const PartialTensorShape& l = c.input(1);
  int64_t batch = f.dims() == 2 ? f.dim_size(0) : -1;
  if (batch < 0 && l.dims() == 1) batch = l.dim_size(0);
  c.set_output(0, PartialTensorShape({batch}));
  c.set_output(1, PartialTensorShape({batch, f.dims() == 2 ? f.dim_size(1) : -1}));
  return absl::OkStatus();
}

TG_REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(DenseXentShapeFn)
    .Doc(R"doc(
Per-example cross-entropy of softmax(features) against the distributions
`labels` ([batch, classes] both); `backprop` is its gradient wrt `features`.
)doc");

TG_REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .SetShapeFn(SparseXentShapeFn)
    .Doc(R"doc(
As SoftmaxCrossEntropyWithLogits with `labels` class indices ([batch],
int32 or int64).
)doc");

// ---------------------------------------------------------------------------
// Pooling.

using shape_fns::AtNode;

// InvalidArgument unless input `i` is of unknown rank or has rank `rank`.
absl::Status CheckRank(const ShapeInferenceContext& c, int i, const char* what, int rank) {
  const PartialTensorShape& s = c.input(i);
  if (s.unknown_rank() || s.dims() == rank) return absl::OkStatus();
  return AtNode(c, errors::InvalidArgument(what, " must be ", rank, "-D, got ", s.DebugString()));
}

// The 4 dims of input `i`, -1 where unknown.
std::array<int64_t, 4> Dims4(const ShapeInferenceContext& c, int i) {
  std::array<int64_t, 4> dims = {-1, -1, -1, -1};
  const PartialTensorShape& s = c.input(i);
  if (!s.unknown_rank()) {
    for (int d = 0; d < 4; ++d) dims[d] = s.dim_size(d);
  }
  return dims;
}

absl::Status PoolShape(ShapeInferenceContext& c) {
  TG_RETURN_IF_ERROR(CheckRank(c, 0, "input", 4));
  auto attrs = ParsePool2DAttrs(c.node());
  if (!attrs.ok()) return AtNode(c, attrs.status());
  auto geometry = ComputePool2DGeometry(*attrs, Dims4(c, 0));
  if (!geometry.ok()) return AtNode(c, geometry.status());
  const std::array<int64_t, 4> out = geometry->OutputDims();
  c.set_output(0, PartialTensorShape(std::vector<int64_t>(out.begin(), out.end())));
  return absl::OkStatus();
}

// orig_input, orig_output and grad are 4-D; the output has orig_input's shape.
absl::Status MaxPoolGradShape(ShapeInferenceContext& c) {
  TG_RETURN_IF_ERROR(CheckRank(c, 0, "orig_input", 4));
  TG_RETURN_IF_ERROR(CheckRank(c, 1, "orig_output", 4));
  TG_RETURN_IF_ERROR(CheckRank(c, 2, "grad", 4));
  auto attrs = ParsePool2DAttrs(c.node());
  if (!attrs.ok()) return AtNode(c, attrs.status());
  auto geometry = ComputePool2DGeometry(*attrs, Dims4(c, 0));
  if (!geometry.ok()) return AtNode(c, geometry.status());
  const std::array<int64_t, 4> in = Dims4(c, 0);
  c.set_output(0, PartialTensorShape(std::vector<int64_t>(in.begin(), in.end())));
  return absl::OkStatus();
}

// orig_input_shape is a 4-vector, grad 4-D; the output is 4-D (its sizes are
// orig_input_shape's values).
absl::Status AvgPoolGradShape(ShapeInferenceContext& c) {
  const PartialTensorShape& shape = c.input(0);
  if (!shape.unknown_rank() &&
      (shape.dims() != 1 || (shape.dim_size(0) >= 0 && shape.dim_size(0) != 4))) {
    return AtNode(c, errors::InvalidArgument("orig_input_shape must be a vector of 4, got ",
                                             shape.DebugString()));
  }
  TG_RETURN_IF_ERROR(CheckRank(c, 1, "grad", 4));
  auto attrs = ParsePool2DAttrs(c.node());
  if (!attrs.ok()) return AtNode(c, attrs.status());
  c.set_output(0, PartialTensorShape({-1, -1, -1, -1}));
  return absl::OkStatus();
}

constexpr char kPoolTypes[] =
    "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16} = DT_FLOAT";

TG_REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr(kPoolTypes)
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(PoolShape)
    .Doc(R"doc(
The maximum of each `ksize` window of a 4-D `input`, moved `strides` at a
time over the rows and columns. Padding never wins: a window's maximum is
over the input values it covers.

ksize: Window size per dimension of `input`; 1 for batch and depth.
strides: Step per dimension of `input`; 1 for batch and depth.
padding: VALID (windows inside the input), SAME (output = ceil(input /
  stride)) or EXPLICIT (`explicit_paddings`).
explicit_paddings: For EXPLICIT: 8 values, (before, after) per dimension
  of `input` in data_format order; 0 for batch and depth.
data_format: "NHWC" (channels last) or "NCHW".
)doc");

TG_REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(PoolShape)
    .Doc(R"doc(
The mean of each `ksize` window of a 4-D `value`, moved `strides` at a time
over the rows and columns. A window that overlaps SAME padding is the mean
of the input values it covers (padding is not counted).

ksize: Window size per dimension of `value`; 1 for batch and depth.
strides: Step per dimension of `value`; 1 for batch and depth.
data_format: "NHWC" (channels last) or "NCHW".
)doc");

TG_REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16} = DT_FLOAT")
    .SetShapeFn(MaxPoolGradShape)
    .Doc(R"doc(
The gradient of MaxPool: each window's `grad` goes to the position of its
maximum in `orig_input` (the first one, in row-major window order, on a tie);
`orig_output` is the MaxPool's output.
)doc");

TG_REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(AvgPoolGradShape)
    .Doc(R"doc(
The gradient of AvgPool: each window's `grad`, divided by the number of
input values the window covered, added to each of them. The output has the
shape `orig_input_shape` (the AvgPool's input shape).
)doc");

// ---------------------------------------------------------------------------
// Batch normalization.

// The channel count of 4-D input `i` under the node's data_format (-1 unknown).
absl::StatusOr<int64_t> Channels(const ShapeInferenceContext& c, int i) {
  std::string text = "NHWC";
  if (HasNodeAttr(c.node(), "data_format")) {
    TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "data_format", &text));
  }
  DataFormat format;
  absl::Status s = ParseDataFormat(text, &format);
  if (!s.ok()) return AtNode(c, s);
  const PartialTensorShape& x = c.input(i);
  return x.unknown_rank() ? -1 : x.dim_size(AxesOf(format).channels);
}

// Input `i` is a vector of `channels` (unknown allowed); `may_be_empty` also
// accepts a vector of 0 (the unused moving statistics of training mode).
absl::Status CheckChannelVector(const ShapeInferenceContext& c, int i, const char* what,
                                int64_t channels, bool may_be_empty) {
  TG_RETURN_IF_ERROR(CheckRank(c, i, what, 1));
  const PartialTensorShape& v = c.input(i);
  if (v.unknown_rank() || v.dim_size(0) < 0 || channels < 0) return absl::OkStatus();
  if (v.dim_size(0) == channels || (may_be_empty && v.dim_size(0) == 0)) return absl::OkStatus();
  return AtNode(c, errors::InvalidArgument(what, " must have one entry per channel (", channels,
                                           "), got ", v.DebugString()));
}

absl::Status FusedBatchNormShape(ShapeInferenceContext& c) {
  TG_RETURN_IF_ERROR(CheckRank(c, 0, "x", 4));
  TG_ASSIGN_OR_RETURN(int64_t channels, Channels(c, 0));
  bool is_training = true;
  TG_RETURN_IF_ERROR(GetNodeAttr(c.node(), "is_training", &is_training));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 1, "scale", channels, false));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 2, "offset", channels, false));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 3, "mean", channels, is_training));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 4, "variance", channels, is_training));
  if (channels < 0 && !c.input(1).unknown_rank()) channels = c.input(1).dim_size(0);
  c.set_output(0, c.input(0).unknown_rank() ? PartialTensorShape({-1, -1, -1, -1}) : c.input(0));
  for (int i = 1; i <= 4; ++i) c.set_output(i, PartialTensorShape({channels}));
  c.set_output(5, PartialTensorShape({0}));
  return absl::OkStatus();
}

absl::Status FusedBatchNormGradShape(ShapeInferenceContext& c) {
  TG_RETURN_IF_ERROR(CheckRank(c, 0, "y_backprop", 4));
  TG_RETURN_IF_ERROR(CheckRank(c, 1, "x", 4));
  TG_ASSIGN_OR_RETURN(int64_t channels, Channels(c, 1));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 2, "scale", channels, false));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 3, "reserve_space_1", channels, false));
  TG_RETURN_IF_ERROR(CheckChannelVector(c, 4, "reserve_space_2", channels, false));
  if (channels < 0 && !c.input(2).unknown_rank()) channels = c.input(2).dim_size(0);
  c.set_output(0, c.input(1).unknown_rank() ? PartialTensorShape({-1, -1, -1, -1}) : c.input(1));
  c.set_output(1, PartialTensorShape({channels}));
  c.set_output(2, PartialTensorShape({channels}));
  c.set_output(3, PartialTensorShape({0}));
  c.set_output(4, PartialTensorShape({0}));
  return absl::OkStatus();
}

TG_REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {bfloat16, float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc(R"doc(
Batch normalization of a 4-D `x` per channel:
y = scale * (x - m) / sqrt(v + epsilon) + offset.

Training (is_training): m and v are the batch's mean and (biased) variance
over N, H and W. batch_mean = (1 - f) * mean + f * m and batch_variance =
(1 - f) * variance + f * v * n / (n - 1) (the unbiased variance; n = N*H*W),
f = exponential_avg_factor; with f = 1 `mean` and `variance` are unused and
may be empty. reserve_space_1 and _2 are m and v, for FusedBatchNormGradV3.
Inference: m = mean and v = variance; batch_mean, batch_variance and the
reserve spaces are those two. reserve_space_3 is empty.

data_format: "NHWC" (channels last) or "NCHW".
)doc");

TG_REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc(R"doc(
The gradient of FusedBatchNormV3 with respect to x, scale and offset.
reserve_space_1 and _2 are the forward op's: the mean and variance it
normalized with (the batch's when is_training, else the moving ones).
reserve_space_4 and _5 are empty.
)doc");

}  // namespace
}  // namespace tensorgrid
