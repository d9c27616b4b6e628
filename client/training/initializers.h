// Initializers: how a variable's first value is made, as ops built next to
// the variable (TensorFlow's tf.*_initializer). An Initializer is a recipe;
// training::Variable (client/training/variables.h) calls it with the
// variable's shape and dtype.
//
//   auto w = training::Variable(scope, "w", {784, 10}, DT_FLOAT,
//                               training::GlorotUniform(/*seed=*/1));
//   auto b = training::Variable(scope, "b", {10}, DT_FLOAT, training::Zeros());
//
// Seeds: a random initializer given a seed draws the same values in every
// session built the same way (its ops get TensorFlow's seed pair: the
// default graph seed 87654321 and the op seed); without one every session
// draws fresh values. Each initialization run draws anew from the op's
// stream, as TensorFlow does.
//
// Errors (a dtype the initializer cannot make, a constant of the wrong size)
// are recorded on the scope, like any op's.
#ifndef TENSORGRID_CLIENT_TRAINING_INITIALIZERS_H_
#define TENSORGRID_CLIENT_TRAINING_INITIALIZERS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace training {

// Builds the initial value of a variable of `shape` and `dtype` in a scope.
class Initializer {
 public:
  using BuildFn =
      std::function<Output(const Scope& scope, const TensorShape& shape, DataType dtype)>;

  explicit Initializer(BuildFn build) : build_(std::move(build)) {}

  // The initial value's ops, built in `scope`; an invalid Output on error
  // (recorded on the scope).
  Output operator()(const Scope& scope, const TensorShape& shape, DataType dtype) const {
    return build_(scope, shape, dtype);
  }

 private:
  BuildFn build_;
};

// TensorFlow's default graph seed, paired with an op seed as seed/seed2.
inline constexpr int64_t kDefaultGraphSeed = 87654321;

// All zeros / all ones (any numeric dtype).
Initializer Zeros();
Initializer Ones();
// Every element `value`, converted to the variable's dtype.
Initializer Constant(double value);
// Exactly `value`, reshaped to the variable's shape (it must have as many
// elements) and cast to its dtype.
Initializer Constant(const Tensor& value);

// Normal with `mean` and `stddev` (floating-point dtypes).
Initializer RandomNormal(double mean = 0.0, double stddev = 1.0,
                         std::optional<int64_t> seed = std::nullopt);
// Uniform in [minval, maxval).
Initializer RandomUniform(double minval = 0.0, double maxval = 1.0,
                          std::optional<int64_t> seed = std::nullopt);
// Normal with `mean` and `stddev`, values beyond two deviations redrawn.
Initializer TruncatedNormal(double mean = 0.0, double stddev = 1.0,
                            std::optional<int64_t> seed = std::nullopt);
// Glorot (Xavier) uniform: uniform in [-limit, limit), limit =
// sqrt(6 / (fan_in + fan_out)), the fans from the variable's shape as in
// TensorFlow ([in, out] for a matrix; a convolution kernel's receptive field
// multiplies both; a vector or scalar uses its size for both).
Initializer GlorotUniform(std::optional<int64_t> seed = std::nullopt);
// ... with the fans given.
Initializer GlorotUniform(int64_t fan_in, int64_t fan_out,
                          std::optional<int64_t> seed = std::nullopt);

// The fans TensorFlow computes for `shape` (see GlorotUniform).
std::pair<int64_t, int64_t> ComputeFans(const TensorShape& shape);

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_INITIALIZERS_H_
