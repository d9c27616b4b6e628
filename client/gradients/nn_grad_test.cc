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

}  // namespace
}  // namespace tensorgrid
