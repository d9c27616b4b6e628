// A Dataset feeding the placeholders of a local Session, the way a training
// loop does: x (float [?, 4]) and y (int64 [?]) into a softmax cross-entropy.
#include <cmath>

#include "client/data/dataset.h"
#include "client/ops/standard_ops.h"
#include "client/scope.h"
#include "core/platform/status_testutil.h"
#include "core/public/session.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(DatasetFeedTest, BatchesFeedPlaceholdersOfASession) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 4}));
  auto y = ops::Placeholder(root.WithOpName("y"), DT_INT64, ops::Placeholder::Shape({-1}));
  auto w = ops::Const(root, 0.0f, TensorShape({4, 3}));
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, ops::MatMul(root, x, w), y);
  auto loss = ops::Sum(root.WithOpName("loss"), xent.loss, 0);
  auto total = ops::Sum(root.WithOpName("total"), x, ops::Const(root, {0, 1}, TensorShape({2})));
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Create(graph));

  const int64_t n = 50;
  Tensor images(DT_FLOAT, TensorShape({n, 4}));
  Tensor labels(DT_INT64, TensorShape({n}));
  for (int64_t i = 0; i < n * 4; ++i) images.data<float>()[i] = static_cast<float>(i % 7);
  for (int64_t i = 0; i < n; ++i) labels.data<int64_t>()[i] = i % 3;
  float expected_total = 0;
  for (float v : images.values<float>()) expected_total += v;

  Dataset ds = Dataset::FromTensorSlices({images, labels}).Shuffle(16, 1).Batch(8).Prefetch(2);
  auto it = ds.MakeIterator();
  ASSERT_OK(it.status());
  FeedList feeds;
  bool end = false;
  int steps = 0;
  float sum = 0, loss_sum = 0;
  while (true) {
    ASSERT_OK((*it)->GetNextFeeds({"x", "y"}, &feeds, &end));
    if (end) break;
    std::vector<Tensor> out;
    ASSERT_OK((*session)->Run(feeds, {"total:0", "loss:0"}, {}, &out));
    sum += out[0].scalar<float>();
    loss_sum += out[1].scalar<float>();
    ++steps;
  }
  EXPECT_EQ(steps, 7);  // 6 batches of 8 and one of 2
  EXPECT_FLOAT_EQ(sum, expected_total);
  EXPECT_NEAR(loss_sum, n * std::log(3.0f), 1e-3);  // zero logits: log(3) per example
}

}  // namespace
}  // namespace tensorgrid
