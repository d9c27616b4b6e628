// What the Fashion-MNIST examples share, as TensorFlow's MNIST tutorials
// share mnist.py: the layer (tf.layers.dense), the classic distributed MNIST
// program's classifier (784-500-500-10, ReLU, softmax cross-entropy), its
// training batches and its test accuracy. What an example is about (local
// training, towers, ps and workers) stays in the example.
//
//   Scope root = Scope::NewRootScope();
//   fashion_mnist::Classifier net = fashion_mnist::BuildClassifier(root, /*seed=*/1);
//   training::AdamOptimizer adam(1e-4);
//   TG_ASSIGN_OR_RETURN(Operation train, adam.Minimize(root, net.loss));
//   ClientSession session(root);
//   ... initialize the variables ...
//   TG_ASSIGN_OR_RETURN(auto batches, fashion_mnist::TrainingBatches(train_data, 32, /*seed=*/1));
//   TG_RETURN_IF_ERROR(batches->GetNext(&batch, &end));   // never ends
//   TG_RETURN_IF_ERROR(session.Run({{net.images, batch[0]}, {net.labels, batch[1]}}, {net.loss},
//                                  {train}, &out));
//   TG_ASSIGN_OR_RETURN(double accuracy, fashion_mnist::TestAccuracy(session, net, test_data));
//
// Graphs: the names (dense/kernel, ..., "images", "loss") and the order in
// which the nodes are built are the classic program's, so that checkpoints,
// a ReplicaDeviceSetter's round-robin and seeds stay as they were.
#ifndef TENSORGRID_EXAMPLES_FASHION_MNIST_MODEL_H_
#define TENSORGRID_EXAMPLES_FASHION_MNIST_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/client_session.h"
#include "client/data/dataset.h"
#include "client/data/fashion_mnist.h"
#include "client/output.h"
#include "client/scope.h"
#include "client/training/variables.h"

namespace tensorgrid {
namespace fashion_mnist {

// tf.layers.Dense: y = x·kernel + bias, then the activation. Its variables,
// "<name>/kernel" (Glorot-uniform from `seed`) and "<name>/bias" (zeros),
// are built with the layer, through `scope`'s name scope, device functions
// and all; a layer applied more than once shares them (in-graph replication's
// towers). A plain value, copied freely.
class Dense {
 public:
  enum class Activation { kNone, kRelu };

  Dense(const Scope& scope, const std::string& name, int64_t in, int64_t out, Activation activation,
        int64_t seed);

  // y, built in the layer's own name scope ("dense/MatMul", ...).
  Output operator()(Output x) const { return Apply(scope_, x); }
  // y, built through `scope` instead: the layer on another device.
  Output Apply(const Scope& scope, Output x) const;

 private:
  Scope scope_;
  training::Variable kernel_, bias_;
  Activation activation_;
};

// The classic program's classifier on one batch.
struct Classifier {
  Output images;   // placeholder "images": float [batch, 784]
  Output labels;   // placeholder "labels": int64 [batch], class ids 0..9
  Output logits;   // float [batch, 10]
  Output loss;     // "loss": the batch's mean softmax cross-entropy
  Output correct;  // "correct": how many of the batch ArgMax gets right, a float
};

// The classifier built through `scope`, each layer made where the network
// first needs it: dense, dense_1, dense_2, seeded seed, seed + 1, seed + 2.
Classifier BuildClassifier(const Scope& scope, int64_t seed);

// The classifier's layers alone (the same names and seeds), to build it more
// than once on one set of variables.
std::vector<Dense> MakeClassifierLayers(const Scope& scope, int64_t seed);
// The classifier built through `scope` on `layers` (MakeClassifierLayers').
Classifier BuildClassifier(const Scope& scope, const std::vector<Dense>& layers);

// Training batches of `batch_size` images and labels, with no end: a fresh
// shuffle of all of `train` each epoch (from `seed`), the last partial batch
// dropped, prefetched.
absl::StatusOr<std::unique_ptr<DatasetIterator>> TrainingBatches(const MnistData& train,
                                                                 int64_t batch_size, int64_t seed);

// "accuracy": the fraction of the batch `net` classifies right (correct
// over the batch size), built through `scope`, for summaries.
Output BatchAccuracy(const Scope& scope, const Classifier& net);

// The fraction of `test` that `net` classifies right, run through `session`
// in batches of 1000.
absl::StatusOr<double> TestAccuracy(const ClientSession& session, const Classifier& net,
                                    const MnistData& test);

}  // namespace fashion_mnist
}  // namespace tensorgrid

#endif  // TENSORGRID_EXAMPLES_FASHION_MNIST_MODEL_H_
