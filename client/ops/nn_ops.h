// Neural-network ops: activations, bias, softmax and its cross-entropy losses.
// Names, inputs, outputs and attrs are TensorFlow's.
//
//   auto h = ops::Relu(scope, ops::BiasAdd(scope, ops::MatMul(scope, x, w), b));
//   auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, labels);
//   auto loss = ops::Mean(scope, xent.loss, 0);
#ifndef TENSORGRID_CLIENT_OPS_NN_OPS_H_
#define TENSORGRID_CLIENT_OPS_NN_OPS_H_

#include <optional>
#include <string>

#include "client/output.h"
#include "client/scope.h"

namespace tensorgrid {
namespace ops {

// activations = max(features, 0)
class Relu {
 public:
  Relu(const Scope& scope, Input features);
  operator Output() const { return activations; }
  operator Input() const { return activations; }

  Operation operation;
  Output activations;
};

// backprops = gradients where features > 0, else 0.
class ReluGrad {
 public:
  ReluGrad(const Scope& scope, Input gradients, Input features);
  operator Output() const { return backprops; }
  operator Input() const { return backprops; }

  Operation operation;
  Output backprops;
};

// output = value + bias, `bias` (1-D) added along the channel dimension.
class BiasAdd {
 public:
  struct Attrs {
    // "NHWC" (default: channels last) or "NCHW".
    Attrs DataFormat(const std::string& x) const {
      Attrs r = *this;
      r.data_format_ = x;
      return r;
    }
    std::optional<std::string> data_format_;
  };
  BiasAdd(const Scope& scope, Input value, Input bias, const Attrs& attrs = Attrs());
  operator Output() const { return output; }
  operator Input() const { return output; }
  static Attrs DataFormat(const std::string& x) { return Attrs().DataFormat(x); }

  Operation operation;
  Output output;
};

// The gradient of BiasAdd with respect to its bias: out_backprop summed over
// every dimension but the channel one.
class BiasAddGrad {
 public:
  struct Attrs {
    // "NHWC" (default: channels last) or "NCHW".
    Attrs DataFormat(const std::string& x) const {
      Attrs r = *this;
      r.data_format_ = x;
      return r;
    }
    std::optional<std::string> data_format_;
  };
  BiasAddGrad(const Scope& scope, Input out_backprop, const Attrs& attrs = Attrs());
  operator Output() const { return output; }
  operator Input() const { return output; }
  static Attrs DataFormat(const std::string& x) { return Attrs().DataFormat(x); }

  Operation operation;
  Output output;
};

// softmax = exp(logits) / sum(exp(logits)) along the last dimension.
class Softmax {
 public:
  Softmax(const Scope& scope, Input logits);
  operator Output() const { return softmax; }
  operator Input() const { return softmax; }

  Operation operation;
  Output softmax;
};

// Per-example cross-entropy of softmax(features) against the distributions
// `labels` ([batch, classes] both); `backprop` is its gradient wrt `features`.
class SoftmaxCrossEntropyWithLogits {
 public:
  SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features, Input labels);

  Operation operation;
  Output loss;
  Output backprop;
};

// As SoftmaxCrossEntropyWithLogits with `labels` class indices ([batch],
// int32 or int64).
class SparseSoftmaxCrossEntropyWithLogits {
 public:
  SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features, Input labels);

  Operation operation;
  Output loss;
  Output backprop;
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_NN_OPS_H_
