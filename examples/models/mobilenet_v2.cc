#include "examples/models/mobilenet_v2.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/ops/standard_ops.h"
#include "client/training/initializers.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace models {

using training::Variable;

std::vector<InvertedResidualStage> MobileNetV2Stages() {
  return {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
}

int64_t ScaledChannels(int64_t channels, double alpha) {
  const double v = static_cast<double>(channels) * alpha;
  int64_t rounded = std::max<int64_t>(8, static_cast<int64_t>(v + 4) / 8 * 8);
  if (rounded < 0.9 * v) rounded += 8;
  return rounded;
}

// The variables of a convolution (no bias: batch norm follows) and its batch norm.
MobileNetV2::Layer MobileNetV2::ConvLayer(const Scope& scope, const std::string& name,
                                          const std::string& bn_name, Layer::Kind kind,
                                          int64_t size, int64_t in, int64_t out, int stride,
                                          bool relu6, int64_t seed) {
  Layer layer;
  layer.kind = kind;
  layer.stride = stride;
  layer.relu6 = relu6;
  const bool depthwise = kind == Layer::Kind::kDepthwise;
  const TensorShape shape =
      depthwise ? TensorShape({size, size, in, 1}) : TensorShape({size, size, in, out});
  layer.kernel = Variable(scope.NewSubScope(name), depthwise ? "depthwise_kernel" : "kernel", shape,
                          DT_FLOAT, training::GlorotUniform(seed));
  const Scope bn = scope.NewSubScope(bn_name);
  layer.gamma = Variable(bn, "gamma", {out}, DT_FLOAT, training::Ones());
  layer.beta = Variable(bn, "beta", {out}, DT_FLOAT, training::Zeros());
  training::VariableOptions moving;
  moving.trainable = false;
  moving.synchronization = training::VariableSynchronization::kOnWrite;
  layer.moving_mean = Variable(bn, "moving_mean", {out}, DT_FLOAT, training::Zeros(), moving);
  layer.moving_variance =
      Variable(bn, "moving_variance", {out}, DT_FLOAT, training::Ones(), moving);
  return layer;
}

namespace {

absl::Status CheckOptions(const MobileNetV2Options& o) {
  if (!(o.alpha > 0)) return errors::InvalidArgument("MobileNetV2: alpha ", o.alpha, " <= 0");
  if (o.input_channels <= 0 || o.num_classes <= 0 || o.last_channels <= 0) {
    return errors::InvalidArgument("MobileNetV2: input_channels ", o.input_channels,
                                   ", num_classes ", o.num_classes, " and last_channels ",
                                   o.last_channels, " must be positive");
  }
  if (o.stages.empty()) return errors::InvalidArgument("MobileNetV2: no stage");
  if (o.first_stride != 1 && o.first_stride != 2) {
    return errors::InvalidArgument("MobileNetV2: first_stride ", o.first_stride, " is not 1 or 2");
  }
  for (size_t i = 0; i < o.stages.size(); ++i) {
    const InvertedResidualStage& s = o.stages[i];
    if (s.expansion <= 0 || s.channels <= 0 || s.repeats <= 0 || (s.stride != 1 && s.stride != 2)) {
      return errors::InvalidArgument("MobileNetV2: stage ", i, " (t=", s.expansion,
                                     ", c=", s.channels, ", n=", s.repeats, ", s=", s.stride,
                                     ") needs positive t, c, n and a stride of 1 or 2");
    }
  }
  if (!(o.bn_momentum >= 0 && o.bn_momentum < 1) || !(o.bn_epsilon > 0)) {
    return errors::InvalidArgument("MobileNetV2: bn_momentum ", o.bn_momentum,
                                   " must be in [0, 1) and bn_epsilon ", o.bn_epsilon, " positive");
  }
  return absl::OkStatus();
}

}  // namespace

MobileNetV2::MobileNetV2(const Scope& scope, const MobileNetV2Options& options)
    : options_(options) {
  const absl::Status valid = CheckOptions(options);
  if (!valid.ok()) {
    scope.UpdateStatus(valid);
    return;
  }
  using Kind = Layer::Kind;
  int64_t seed = options.seed;
  int64_t channels = ScaledChannels(32, options.alpha);
  layers_.push_back(ConvLayer(scope, "Conv1", "bn_Conv1", Kind::kConv, 3, options.input_channels,
                              channels, options.first_stride, true, seed++));
  int block = 0;
  for (const InvertedResidualStage& stage : options.stages) {
    const int64_t out = ScaledChannels(stage.channels, options.alpha);
    for (int r = 0; r < stage.repeats; ++r, ++block) {
      const std::string prefix = block == 0 ? "expanded_conv" : absl::StrCat("block_", block);
      const int stride = r == 0 ? stage.stride : 1;
      const int64_t expanded = channels * stage.expansion;
      const size_t first = layers_.size();
      if (stage.expansion != 1) {
        layers_.push_back(ConvLayer(scope, prefix + "_expand", prefix + "_expand_BN", Kind::kConv,
                                    1, channels, expanded, 1, true, seed++));
      }
      layers_.push_back(ConvLayer(scope, prefix + "_depthwise", prefix + "_depthwise_BN",
                                  Kind::kDepthwise, 3, expanded, expanded, stride, true, seed++));
      layers_.push_back(ConvLayer(scope, prefix + "_project", prefix + "_project_BN", Kind::kConv,
                                  1, expanded, out, 1, false, seed++));
      layers_[first].starts_block = true;
      layers_.back().adds_residual = stride == 1 && channels == out;
      channels = out;
    }
  }
  const int64_t last = options.alpha > 1 ? ScaledChannels(options.last_channels, options.alpha)
                                         : options.last_channels;
  layers_.push_back(
      ConvLayer(scope, "Conv_1", "Conv_1_bn", Kind::kConv, 1, channels, last, 1, true, seed++));
  Layer head;
  head.kind = Kind::kDense;
  const Scope logits = scope.NewSubScope("Logits");
  head.kernel = Variable(logits, "kernel", {last, options.num_classes}, DT_FLOAT,
                         training::GlorotUniform(seed++));
  head.bias = Variable(logits, "bias", {options.num_classes}, DT_FLOAT, training::Zeros());
  layers_.push_back(head);
  for (const Layer& l : layers_) {
    for (const Variable* v : {&l.kernel, &l.gamma, &l.beta, &l.bias}) {
      if (v->valid()) trainable_.push_back(*v);
    }
  }
}

MobileNetV2::Forward MobileNetV2::Apply(const Scope& scope, const Output& images,
                                        bool training) const {
  Forward forward;
  Output x = images;
  Output block_input;
  for (const Layer& l : layers_) {
    if (l.starts_block) block_input = x;
    if (l.kind == Layer::Kind::kDense) {
      Output pooled = ops::Mean(scope, x, {1, 2});  // global average pooling
      forward.logits = ops::BiasAdd(scope, ops::MatMul(scope, pooled, l.kernel), l.bias);
      break;
    }
    const std::vector<int64_t> strides = {1, l.stride, l.stride, 1};
    if (l.kind == Layer::Kind::kConv) {
      x = ops::Conv2D(scope, x, l.kernel, strides, "SAME");
    } else {
      x = ops::DepthwiseConv2dNative(scope, x, l.kernel, strides, "SAME");
    }
    auto bn = ops::FusedBatchNormV3(
        scope, x, l.gamma, l.beta, l.moving_mean, l.moving_variance,
        ops::FusedBatchNormV3::Epsilon(static_cast<float>(options_.bn_epsilon))
            .ExponentialAvgFactor(static_cast<float>(1 - options_.bn_momentum))
            .IsTraining(training));
    x = bn.y;
    if (training) {
      forward.moving_updates.push_back({l.moving_mean, bn.batch_mean});
      forward.moving_updates.push_back({l.moving_variance, bn.batch_variance});
    }
    if (l.relu6) x = ops::Relu6(scope, x);
    if (l.adds_residual) x = ops::Add(scope, block_input, x);
  }
  return forward;
}

Operation UpdateMovingStatistics(const Scope& scope, const std::vector<MovingUpdate>& updates,
                                 const std::function<Output(const Output&)>& mean_across_replicas) {
  std::vector<Output> values;
  for (const MovingUpdate& u : updates) values.push_back(u.value);
  if (mean_across_replicas && !values.empty()) {
    // One all-reduce for all of them: flatten, concatenate, average, split.
    std::vector<Output> flat;
    for (const Output& v : values) flat.push_back(ops::Reshape(scope, v, {-1}));
    const Output mean = mean_across_replicas(ops::Concat(scope, flat, 0));
    int64_t offset = 0;
    for (size_t i = 0; i < updates.size(); ++i) {
      const TensorShape& shape = updates[i].variable.shape();
      const int64_t n = shape.num_elements();
      Tensor dims(DT_INT64, TensorShape({shape.dims()}));
      for (int d = 0; d < shape.dims(); ++d) dims.data<int64_t>()[d] = shape.dim_size(d);
      values[i] = ops::Reshape(scope, ops::Slice(scope, mean, {offset}, {n}), dims);
      offset += n;
    }
  }
  std::vector<Operation> assigns;
  for (size_t i = 0; i < updates.size(); ++i) {
    assigns.push_back(ops::Assign(scope, updates[i].variable.handle(), values[i]).operation);
  }
  return ops::NoOp(scope.WithControlDependencies(assigns)).operation;
}

}  // namespace models
}  // namespace tensorgrid
