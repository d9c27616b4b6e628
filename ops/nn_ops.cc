// Neural-network op definitions: activations, bias, softmax and its
// cross-entropy losses. Kernels: kernels/math/ (Relu, BiasAdd) and kernels/nn/.
#include <cstdint>
#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

constexpr char kReluTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64}";

// Both inputs have one shape, which is the output's.
absl::Status SameShapeInputs(ShapeInferenceContext& c) {
  const PartialTensorShape& a = c.input(0);
  const PartialTensorShape& b = c.input(1);
  if (a.unknown_rank()) {
    c.set_output(0, b);
    return absl::OkStatus();
  }
  if (b.unknown_rank()) {
    c.set_output(0, a);
    return absl::OkStatus();
  }
  if (a.dims() != b.dims()) {
    return errors::InvalidArgument("node '", c.node().name(), "' (", c.node().op(),
                                   "): inputs must have the same shape, got ", a.DebugString(),
                                   " and ", b.DebugString());
  }
  std::vector<int64_t> dims(a.dims());
  for (int i = 0; i < a.dims(); ++i) {
    const int64_t da = a.dim_size(i), db = b.dim_size(i);
    if (da >= 0 && db >= 0 && da != db) {
      return errors::InvalidArgument("node '", c.node().name(), "' (", c.node().op(),
                                     "): inputs must have the same shape, got ", a.DebugString(),
                                     " and ", b.DebugString());
    }
    dims[i] = da >= 0 ? da : db;
  }
  c.set_output(0, PartialTensorShape(dims));
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

}  // namespace
}  // namespace tensorgrid
