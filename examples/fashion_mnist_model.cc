#include "examples/fashion_mnist_model.h"

#include "client/ops/standard_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace fashion_mnist {

namespace {

// The placeholders, first in the graph as in the classic program.
Classifier Inputs(const Scope& scope) {
  Classifier net;
  net.images =
      ops::Placeholder(scope.WithOpName("images"), DT_FLOAT, ops::Placeholder::Shape({-1, 784}));
  net.labels =
      ops::Placeholder(scope.WithOpName("labels"), DT_INT64, ops::Placeholder::Shape({-1}));
  return net;
}

// The loss and the count right, from net->logits.
void AddLossAndCorrect(const Scope& scope, Classifier* net) {
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, net->logits, net->labels);
  net->loss = ops::Mean(scope.WithOpName("loss"), xent.loss, {0});
  auto hits = ops::Equal(scope, ops::ArgMax(scope, net->logits, 1), net->labels);
  net->correct = ops::Sum(scope.WithOpName("correct"), ops::Cast(scope, hits, DT_FLOAT), {0});
}

}  // namespace

Dense::Dense(const Scope& scope, const std::string& name, int64_t in, int64_t out,
             Activation activation, int64_t seed)
    : scope_(scope.NewSubScope(name)),
      kernel_(scope_, "kernel", {in, out}, DT_FLOAT, training::GlorotUniform(seed)),
      bias_(scope_, "bias", {out}, DT_FLOAT, training::Zeros()),
      activation_(activation) {}

Output Dense::Apply(const Scope& scope, Output x) const {
  Output y = ops::BiasAdd(scope, ops::MatMul(scope, x, kernel_), bias_);
  return activation_ == Activation::kRelu ? Output(ops::Relu(scope, y)) : y;
}

Classifier BuildClassifier(const Scope& scope, int64_t seed) {
  Classifier net = Inputs(scope);
  const Dense dense(scope, "dense", 784, 500, Dense::Activation::kRelu, seed);
  const Output hidden = dense(net.images);
  const Dense dense_1(scope, "dense_1", 500, 500, Dense::Activation::kRelu, seed + 1);
  const Output hidden_1 = dense_1(hidden);
  const Dense dense_2(scope, "dense_2", 500, 10, Dense::Activation::kNone, seed + 2);
  net.logits = dense_2(hidden_1);
  AddLossAndCorrect(scope, &net);
  return net;
}

std::vector<Dense> MakeClassifierLayers(const Scope& scope, int64_t seed) {
  return {Dense(scope, "dense", 784, 500, Dense::Activation::kRelu, seed),
          Dense(scope, "dense_1", 500, 500, Dense::Activation::kRelu, seed + 1),
          Dense(scope, "dense_2", 500, 10, Dense::Activation::kNone, seed + 2)};
}

Classifier BuildClassifier(const Scope& scope, const std::vector<Dense>& layers) {
  Classifier net = Inputs(scope);
  net.logits = net.images;
  for (const Dense& layer : layers) net.logits = layer.Apply(scope, net.logits);
  AddLossAndCorrect(scope, &net);
  return net;
}

absl::StatusOr<std::unique_ptr<DatasetIterator>> TrainingBatches(const MnistData& train,
                                                                 int64_t batch_size, int64_t seed) {
  return Dataset::FromTensorSlices({train.images, train.labels})
      .Shuffle(train.labels.dim_size(0), seed)
      .Batch(batch_size, /*drop_remainder=*/true)
      .Repeat()
      .Prefetch(4)
      .MakeIterator();
}

Output BatchAccuracy(const Scope& scope, const Classifier& net) {
  auto batch = ops::Cast(scope, ops::Size(scope, net.labels), DT_FLOAT);
  return ops::RealDiv(scope.WithOpName("accuracy"), net.correct, batch);
}

absl::StatusOr<double> TestAccuracy(const ClientSession& session, const Classifier& net,
                                    const MnistData& test) {
  TG_ASSIGN_OR_RETURN(
      std::unique_ptr<DatasetIterator> it,
      Dataset::FromTensorSlices({test.images, test.labels}).Batch(1000).MakeIterator());
  std::vector<Tensor> batch, out;
  double correct = 0;
  for (bool end = false;;) {
    TG_RETURN_IF_ERROR(it->GetNext(&batch, &end));
    if (end) break;
    TG_RETURN_IF_ERROR(
        session.Run({{net.images, batch[0]}, {net.labels, batch[1]}}, {net.correct}, &out));
    correct += out[0].scalar<float>();
  }
  return correct / test.labels.dim_size(0);
}

}  // namespace fashion_mnist
}  // namespace tensorgrid
