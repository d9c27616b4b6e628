// MobileNetV2 (Sandler et al. 2018, as tf.keras.applications.MobileNetV2
// builds it) for tensorgrid's C++ client: inverted residual blocks (a 1×1
// expansion, a 3×3 depthwise convolution, a linear 1×1 projection, a
// residual connection where shapes allow), batch norm and ReLU6 after every
// convolution but the projections, a width multiplier, global average
// pooling and a dense softmax head. Sized by its options for small inputs.
//
//   models::MobileNetV2Options options;
//   options.input_channels = 1;   // Fashion-MNIST
//   options.first_stride = 1;     // 28×28 inputs: keep the resolution longer
//   models::MobileNetV2 net(scope, options);             // the variables
//   models::MobileNetV2::Forward train = net.Apply(s, images, /*training=*/true);
//   Operation update = models::UpdateMovingStatistics(s, train.moving_updates);
//   Output logits = net.Apply(s, images, /*training=*/false).logits;  // evaluation
//
// Variables are named as Keras names them ("Conv1/kernel", "bn_Conv1/gamma",
// "block_1_expand/kernel", "block_1_depthwise/depthwise_kernel", ...,
// "Logits/kernel"). Convolution kernels are Glorot-uniform from the seed,
// batch norm starts at gamma 1, beta 0, moving mean 0, moving variance 1.
// Training mode normalizes with the batch's statistics and returns the
// moving averages' new values; applying them is the caller's choice (one op,
// UpdateMovingStatistics, which under a distribution strategy first averages
// them across replicas so that every copy stays the same). The moving
// statistics are VariableSynchronization::kOnWrite: mirrored like the
// weights, not trained.
#ifndef TENSORGRID_EXAMPLES_MODELS_MOBILENET_V2_H_
#define TENSORGRID_EXAMPLES_MODELS_MOBILENET_V2_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/output.h"
#include "client/scope.h"
#include "client/training/variables.h"

namespace tensorgrid {
namespace models {

// One stage of inverted residual blocks: `repeats` blocks that expand their
// input `expansion` times, the first with `stride`, each ending with
// `channels` (× the width multiplier) channels.
struct InvertedResidualStage {
  int64_t expansion;
  int64_t channels;
  int repeats;
  int stride;
};

// The paper's seven stages (t, c, n, s): the network for 224×224 images.
std::vector<InvertedResidualStage> MobileNetV2Stages();

struct MobileNetV2Options {
  double alpha = 1.0;  // width multiplier: channels × alpha, rounded to a multiple of 8
  int64_t input_channels = 3;
  int64_t num_classes = 10;
  int first_stride = 2;  // the stem convolution's
  std::vector<InvertedResidualStage> stages = MobileNetV2Stages();
  int64_t last_channels = 1280;  // the last 1×1 convolution's (× alpha when alpha > 1)
  double bn_momentum = 0.99;     // moving = momentum × moving + (1 - momentum) × batch
  double bn_epsilon = 1e-3;
  int64_t seed = 1;
};

// A batch norm's moving statistic and the value the step computed for it.
struct MovingUpdate {
  training::Variable variable;
  Output value;
};

class MobileNetV2 {
 public:
  // Builds every variable through `scope` (a strategy's scope mirrors them).
  // Options out of range (alpha <= 0, no stage, a stride that is not 1 or 2,
  // ...) are recorded on `scope` as InvalidArgument.
  MobileNetV2(const Scope& scope, const MobileNetV2Options& options);

  struct Forward {
    Output logits;                             // float [batch, num_classes]
    std::vector<MovingUpdate> moving_updates;  // empty when not training
  };
  // The network on `images`, float [batch, rows, cols, input_channels]
  // (NHWC), built through `scope` (a replica's scope in a strategy's step).
  // `training`: batch statistics and moving-average updates; otherwise the
  // moving statistics (inference).
  Forward Apply(const Scope& scope, const Output& images, bool training) const;

  // Every trainable variable, in build order.
  const std::vector<training::Variable>& trainable_variables() const { return trainable_; }

 private:
  // A convolution (or the dense head) with what follows it.
  struct Layer {
    enum class Kind { kConv, kDepthwise, kDense };
    Kind kind = Kind::kConv;
    int stride = 1;
    training::Variable kernel;
    training::Variable bias;  // the dense head only
    // Batch norm (every convolution); ReLU6 after it unless a projection.
    training::Variable gamma, beta, moving_mean, moving_variance;
    bool relu6 = false;
    bool starts_block = false;  // the block's input is kept for its residual
    bool adds_residual = false;
  };
  static Layer ConvLayer(const Scope& scope, const std::string& name, const std::string& bn_name,
                         Layer::Kind kind, int64_t size, int64_t in, int64_t out, int stride,
                         bool relu6, int64_t seed);

  MobileNetV2Options options_;
  std::vector<Layer> layers_;
  std::vector<training::Variable> trainable_;
};

// One op that assigns each update's value to its variable. With
// `mean_across_replicas` (e.g. a ReplicaContext's AllReduce(kMean, ...))
// the values are first packed into one vector and averaged across replicas,
// so that every replica writes the same value to its copy.
Operation UpdateMovingStatistics(
    const Scope& scope, const std::vector<MovingUpdate>& updates,
    const std::function<Output(const Output&)>& mean_across_replicas = nullptr);

// Channels × alpha rounded to the nearest multiple of 8, never 10% below
// the product nor under 8 (the paper's _make_divisible).
int64_t ScaledChannels(int64_t channels, double alpha);

}  // namespace models
}  // namespace tensorgrid

#endif  // TENSORGRID_EXAMPLES_MODELS_MOBILENET_V2_H_
