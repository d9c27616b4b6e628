// Gradients of the convolution ops, as TensorFlow registers them: a
// convolution's are its two backprops; each backprop is linear in its two
// tensor inputs, so its gradients are the forward convolution and the other
// backprop. Every op built here carries the forward node's geometry attrs.
#include <string>
#include <vector>

#include "client/gradients/grad_op_registry.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

using Grads = std::vector<Output>;

// The geometry attrs shared by all six ops.
struct ConvAttrs {
  std::vector<int64_t> strides, explicit_paddings, dilations;
  std::string padding, data_format;
};

absl::Status ReadConvAttrs(const ForwardOp& op, ConvAttrs* a) {
  TG_RETURN_IF_ERROR(op.GetAttr("strides", &a->strides));
  TG_RETURN_IF_ERROR(op.GetAttr("padding", &a->padding));
  TG_RETURN_IF_ERROR(op.GetAttr("explicit_paddings", &a->explicit_paddings));
  TG_RETURN_IF_ERROR(op.GetAttr("data_format", &a->data_format));
  return op.GetAttr("dilations", &a->dilations);
}

// The optional attrs of any of the six wrappers.
template <typename Op>
typename Op::Attrs Optional(const ConvAttrs& a) {
  return typename Op::Attrs()
      .ExplicitPaddings(a.explicit_paddings)
      .DataFormat(a.data_format)
      .Dilations(a.dilations);
}

// The three ops of one kind: the forward convolution and its two backprops.
template <typename Forward, typename BackpropInput, typename BackpropFilter>
struct ConvFamily {
  static Output Conv(const Scope& s, const ConvAttrs& a, Output input, Output filter) {
    return Forward(s, input, filter, a.strides, a.padding, Optional<Forward>(a));
  }
  static Output Input(const Scope& s, const ConvAttrs& a, Output input_sizes, Output filter,
                      Output out_backprop) {
    return BackpropInput(s, input_sizes, filter, out_backprop, a.strides, a.padding,
                         Optional<BackpropInput>(a));
  }
  static Output Filter(const Scope& s, const ConvAttrs& a, Output input, Output filter_sizes,
                       Output out_backprop) {
    return BackpropFilter(s, input, filter_sizes, out_backprop, a.strides, a.padding,
                          Optional<BackpropFilter>(a));
  }

  // y = conv(x, w): dx = BackpropInput(shape(x), w, dy), dw = BackpropFilter(x, shape(w), dy).
  static absl::Status ConvGrad(const Scope& scope, const ForwardOp& op, const Grads& dy,
                               Grads* dx) {
    ConvAttrs a;
    TG_RETURN_IF_ERROR(ReadConvAttrs(op, &a));
    const Output& x = op.input(0);
    const Output& w = op.input(1);
    dx->push_back(Input(scope, a, ops::Shape(scope, x), w, dy[0]));
    dx->push_back(Filter(scope, a, x, ops::Shape(scope, w), dy[0]));
    return absl::OkStatus();
  }

  // dx = BackpropInput(sizes, w, g): linear in w and g.
  static absl::Status InputGrad(const Scope& scope, const ForwardOp& op, const Grads& dy,
                                Grads* dx) {
    ConvAttrs a;
    TG_RETURN_IF_ERROR(ReadConvAttrs(op, &a));
    const Output& w = op.input(1);
    const Output& g = op.input(2);
    dx->push_back(NoGradient());  // input_sizes
    dx->push_back(Filter(scope, a, dy[0], ops::Shape(scope, w), g));
    dx->push_back(Conv(scope, a, dy[0], w));
    return absl::OkStatus();
  }

  // dw = BackpropFilter(x, sizes, g): linear in x and g.
  static absl::Status FilterGrad(const Scope& scope, const ForwardOp& op, const Grads& dy,
                                 Grads* dx) {
    ConvAttrs a;
    TG_RETURN_IF_ERROR(ReadConvAttrs(op, &a));
    const Output& x = op.input(0);
    const Output& g = op.input(2);
    dx->push_back(Input(scope, a, ops::Shape(scope, x), dy[0], g));
    dx->push_back(NoGradient());  // filter_sizes
    dx->push_back(Conv(scope, a, x, dy[0]));
    return absl::OkStatus();
  }
};

using Conv2DFamily = ConvFamily<ops::Conv2D, ops::Conv2DBackpropInput, ops::Conv2DBackpropFilter>;
using DepthwiseFamily =
    ConvFamily<ops::DepthwiseConv2dNative, ops::DepthwiseConv2dNativeBackpropInput,
               ops::DepthwiseConv2dNativeBackpropFilter>;

TG_REGISTER_GRADIENT("Conv2D", Conv2DFamily::ConvGrad);
TG_REGISTER_GRADIENT("Conv2DBackpropInput", Conv2DFamily::InputGrad);
TG_REGISTER_GRADIENT("Conv2DBackpropFilter", Conv2DFamily::FilterGrad);
TG_REGISTER_GRADIENT("DepthwiseConv2dNative", DepthwiseFamily::ConvGrad);
TG_REGISTER_GRADIENT("DepthwiseConv2dNativeBackpropInput", DepthwiseFamily::InputGrad);
TG_REGISTER_GRADIENT("DepthwiseConv2dNativeBackpropFilter", DepthwiseFamily::FilterGrad);

}  // namespace
}  // namespace tensorgrid
