// Each neural-network gradient against central finite differences, and a
// small two-layer classifier end to end.
#include "client/gradients/grad_testutil.h"

namespace tensorgrid {
namespace {

class NNGradTest : public GradientTest {
 protected:
  // Rows that are probability distributions: the op's backprop is
  // softmax - labels, which is the loss's gradient only for such labels (as
  // in TensorFlow).
  Tensor RandomDistributions(int64_t rows, int64_t cols) {
    Tensor t = Random(DT_DOUBLE, {rows, cols}, 0.1, 1);
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += t.data<double>()[r * cols + c];
      for (int64_t c = 0; c < cols; ++c) t.data<double>()[r * cols + c] /= sum;
    }
    return t;
  }
};

TEST_F(NNGradTest, Relu) {
  auto x = Placeholder(DT_DOUBLE);
  // Inputs away from the kink at 0, where the derivative jumps.
  CheckGradient({x}, {Random(DT_DOUBLE, {3, 4}, -1, 1, 0.05)}, {ops::Relu(root_, x)});
}

TEST_F(NNGradTest, BiasAddNHWCAndNCHW) {
  auto value = Placeholder(DT_DOUBLE);
  auto bias = Placeholder(DT_DOUBLE);
  CheckGradient({value, bias}, {Random(DT_DOUBLE, {2, 3, 4}), Random(DT_DOUBLE, {4})},
                {ops::Square(root_, ops::BiasAdd(root_, value, bias))});
  CheckGradient(
      {value, bias}, {Random(DT_DOUBLE, {2, 3, 2, 2}), Random(DT_DOUBLE, {3})},
      {ops::Square(root_, ops::BiasAdd(root_, value, bias, ops::BiasAdd::DataFormat("NCHW")))});
}

TEST_F(NNGradTest, Softmax) {
  auto x = Placeholder(DT_DOUBLE);
  CheckGradient({x}, {Random(DT_DOUBLE, {3, 4}, -2, 2)}, {ops::Softmax(root_, x)});
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 2, 3}, -2, 2)}, {ops::Softmax(root_, x)});
}

TEST_F(NNGradTest, SoftmaxCrossEntropyWithLogitsLossWrtFeaturesAndLabels) {
  auto features = Placeholder(DT_DOUBLE);
  auto labels = Placeholder(DT_DOUBLE);
  auto xent = ops::SoftmaxCrossEntropyWithLogits(root_, features, labels);
  CheckGradient({features, labels}, {Random(DT_DOUBLE, {3, 4}, -2, 2), RandomDistributions(3, 4)},
                {xent.loss});
}

TEST_F(NNGradTest, SoftmaxCrossEntropyWithLogitsThroughBothOutputs) {
  auto features = Placeholder(DT_DOUBLE);
  auto labels = Placeholder(DT_DOUBLE);
  auto xent = ops::SoftmaxCrossEntropyWithLogits(root_, features, labels);
  CheckGradient({features, labels}, {Random(DT_DOUBLE, {2, 3}, -2, 2), RandomDistributions(2, 3)},
                {xent.loss, xent.backprop});
  CheckGradient({features}, {Random(DT_DOUBLE, {2, 3}, -2, 2)},
                {ops::Square(root_, ops::SoftmaxCrossEntropyWithLogits(
                                        root_, features, {{0.2, 0.3, 0.5}, {1.0, 0.0, 0.0}})
                                        .backprop)},
                1e-6);
}

TEST_F(NNGradTest, SoftmaxCrossEntropyWithLogitsBroadcastsOneRow) {
  auto features = Placeholder(DT_DOUBLE);
  auto labels = Placeholder(DT_DOUBLE);
  auto xent = ops::SoftmaxCrossEntropyWithLogits(root_, features, labels);
  CheckGradient({features, labels}, {Random(DT_DOUBLE, {1, 3}, -2, 2), RandomDistributions(4, 3)},
                {xent.loss});
}

TEST_F(NNGradTest, SparseSoftmaxCrossEntropyWithLogits) {
  auto features = Placeholder(DT_DOUBLE);
  auto labels = ops::Placeholder(root_, DT_INT32);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root_, features, labels);
  GradientCheckerOptions options;
  options.feeds.emplace(labels, Input::Initializer({2, 0, 1}));
  CheckGradient({features}, {Random(DT_DOUBLE, {3, 4}, -2, 2)}, {xent.loss}, 1e-7, options);
  CheckGradient({features}, {Random(DT_DOUBLE, {3, 4}, -2, 2)}, {xent.loss, xent.backprop}, 1e-7,
                options);
}

TEST_F(NNGradTest, TwoLayerClassifierEndToEnd) {
  auto x =
      ops::Const(root_, {{0.5, -1.0, 2.0}, {1.5, 0.3, -0.7}, {-0.2, 0.8, 0.1}, {1.0, 1.0, -1.0}});
  auto w1 = Placeholder(DT_DOUBLE);
  auto b1 = Placeholder(DT_DOUBLE);
  auto w2 = Placeholder(DT_DOUBLE);
  auto b2 = Placeholder(DT_DOUBLE);
  auto hidden = ops::Tanh(root_, ops::BiasAdd(root_, ops::MatMul(root_, x, w1), b1));
  auto logits = ops::BiasAdd(root_, ops::MatMul(root_, hidden, w2), b2);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root_, logits, {1LL, 0LL, 2LL, 1LL});
  auto loss = ops::Mean(root_, xent.loss, 0);
  CheckGradient({w1, b1, w2, b2},
                {Random(DT_DOUBLE, {3, 5}), Random(DT_DOUBLE, {5}), Random(DT_DOUBLE, {5, 3}),
                 Random(DT_DOUBLE, {3})},
                {loss});
}

TEST_F(NNGradTest, Relu6) {
  auto x = Placeholder(DT_DOUBLE);
  // Away from the kinks at 0 and 6.
  Tensor v = Random(DT_DOUBLE, {3, 4}, -3, 9, 0.05);
  for (int64_t i = 0; i < v.NumElements(); ++i) {
    if (std::abs(v.data<double>()[i] - 6) < 0.05) v.data<double>()[i] = 5;
  }
  CheckGradient({x}, {v}, {ops::Relu6(root_, x)});
}

// Distinct values 0.05 apart in random order: each window's maximum stays
// the maximum under the checker's step.
Tensor Distinct(const TensorShape& shape, std::mt19937* rng) {
  Tensor t(DT_FLOAT, shape);
  std::vector<int64_t> order(t.NumElements());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::shuffle(order.begin(), order.end(), *rng);
  for (size_t i = 0; i < order.size(); ++i) t.data<float>()[i] = 0.05f * order[i] - 1;
  return t;
}

TEST_F(NNGradTest, MaxPoolBothFormatsAndPaddings) {
  auto x = Placeholder(DT_FLOAT);
  CheckGradient({x}, {Distinct({2, 5, 5, 2}, &rng_)},
                {ops::MaxPool(root_, x, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME")}, 5e-3);
  CheckGradient({x}, {Distinct({1, 2, 5, 4}, &rng_)},
                {ops::MaxPool(root_, x, {1, 1, 2, 2}, {1, 1, 1, 2}, "VALID",
                              ops::MaxPool::DataFormat("NCHW"))},
                5e-3);
  CheckGradient({x}, {Distinct({1, 4, 4, 1}, &rng_)},
                {ops::MaxPool(root_, x, {1, 2, 3, 1}, {1, 2, 2, 1}, "EXPLICIT",
                              ops::MaxPool::ExplicitPaddings({0, 0, 1, 0, 1, 2, 0, 0}))},
                5e-3);
}

TEST_F(NNGradTest, AvgPoolBothFormats) {
  auto x = Placeholder(DT_FLOAT);
  CheckGradient({x}, {Random(DT_FLOAT, {2, 5, 4, 3})},
                {ops::AvgPool(root_, x, {1, 3, 2, 1}, {1, 2, 2, 1}, "SAME")}, 5e-3);
  CheckGradient({x}, {Random(DT_FLOAT, {2, 3, 4, 4})},
                {ops::AvgPool(root_, x, {1, 1, 2, 2}, {1, 1, 1, 1}, "VALID",
                              ops::AvgPool::DataFormat("NCHW"))},
                5e-3);
}

TEST_F(NNGradTest, FusedBatchNormTrainingWrtXScaleAndOffset) {
  auto x = Placeholder(DT_FLOAT);
  auto scale = Placeholder(DT_FLOAT);
  auto offset = Placeholder(DT_FLOAT);
  auto empty = ops::Const(root_, Input::Initializer(Tensor(DT_FLOAT, {0})));
  for (const char* format : {"NHWC", "NCHW"}) {
    auto bn = ops::FusedBatchNormV3(root_, x, scale, offset, empty, empty,
                                    ops::FusedBatchNormV3::DataFormat(format).Epsilon(1e-3f));
    // Through a square, so dy varies and the batch-statistics terms count.
    CheckGradient(
        {x, scale, offset},
        {Random(DT_FLOAT, {2, 3, 2, 3}), Random(DT_FLOAT, {3}, 0.5, 2), Random(DT_FLOAT, {3})},
        {ops::Square(root_, bn.y)}, 2e-2);
  }
}

TEST_F(NNGradTest, FusedBatchNormInferenceWrtXScaleAndOffset) {
  auto x = Placeholder(DT_FLOAT);
  auto scale = Placeholder(DT_FLOAT);
  auto offset = Placeholder(DT_FLOAT);
  auto mean = ops::Const(root_, {0.1f, -0.2f, 0.3f});
  auto variance = ops::Const(root_, {0.5f, 1.5f, 2.f});
  auto bn = ops::FusedBatchNormV3(root_, x, scale, offset, mean, variance,
                                  ops::FusedBatchNormV3::IsTraining(false));
  CheckGradient(
      {x, scale, offset},
      {Random(DT_FLOAT, {2, 2, 2, 3}), Random(DT_FLOAT, {3}, 0.5, 2), Random(DT_FLOAT, {3})},
      {ops::Square(root_, bn.y)}, 5e-3);
}

TEST_F(NNGradTest, GlobalAveragePoolingIsMeanOverRowsAndColumns) {
  auto x = Placeholder(DT_DOUBLE);
  CheckGradient({x}, {Random(DT_DOUBLE, {2, 3, 4, 5})}, {ops::Mean(root_, x, {1, 2})});
}

}  // namespace
}  // namespace tensorgrid
