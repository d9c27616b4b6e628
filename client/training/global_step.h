// The global step: an int64 scalar variable counting training steps
// (TensorFlow's tf.train.create_global_step / get_global_step /
// get_or_create_global_step). Optimizer::ApplyGradients and Minimize add one
// to it per step when given it.
//
//   training::Variable step = training::GetOrCreateGlobalStep(root);   // "global_step"
//   auto train = optimizer.Minimize(root, loss, {}, step);
//
// The global step is a non-trainable reference variable named "global_step"
// in the scope's name scope (create it from the root scope for TensorFlow's
// name), initialized to 0, in the collections "variables" and "global_step".
// It is found through the "global_step" collection, so any scope of the graph
// finds it. It is placed like any variable: a ReplicaDeviceSetter puts it on
// a ps task.
#ifndef TENSORGRID_CLIENT_TRAINING_GLOBAL_STEP_H_
#define TENSORGRID_CLIENT_TRAINING_GLOBAL_STEP_H_

#include "absl/status/statusor.h"
#include "client/scope.h"
#include "client/training/variables.h"

namespace tensorgrid {
namespace training {

// Creates the global step; AlreadyExists if the graph has one.
absl::StatusOr<Variable> CreateGlobalStep(const Scope& scope);

// The graph's global step; NotFound if it has none, InvalidArgument if it
// has several or the one it has is not an int32/int64 scalar.
absl::StatusOr<Variable> GetGlobalStep(const Scope& scope);

// The graph's global step, created if it has none. Errors go on the scope
// (the result is then invalid).
Variable GetOrCreateGlobalStep(const Scope& scope);

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_GLOBAL_STEP_H_
