#include "client/training/initializers.h"

#include <cmath>
#include <string>

#include "client/ops/array_ops.h"
#include "client/ops/math_ops.h"
#include "client/ops/random_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {
namespace {

// `value` as a scalar of `dtype`.
absl::StatusOr<Tensor> ScalarOf(double value, DataType dtype) {
  switch (dtype) {
    case DT_FLOAT: return Tensor::Scalar<float>(static_cast<float>(value));
    case DT_DOUBLE: return Tensor::Scalar<double>(value);
    case DT_INT32: return Tensor::Scalar<int32_t>(static_cast<int32_t>(value));
    case DT_INT64: return Tensor::Scalar<int64_t>(static_cast<int64_t>(value));
    default: return errors::InvalidArgument("cannot make a value of dtype ", DataTypeString(dtype));
  }
}

// A scalar Const of `dtype`; an invalid Output (error on the scope) if the
// dtype is not supported.
Output ScalarConst(const Scope& scope, double value, DataType dtype, const char* initializer) {
  absl::StatusOr<Tensor> t = ScalarOf(value, dtype);
  if (!t.ok()) {
    scope.UpdateStatus(WithContext(t.status(), absl::StrCat(initializer, " initializer")));
    return Output();
  }
  return ops::Const(scope, *t);
}

// The shape as a 1-D int64 Const, the input of Fill and the random ops.
Output ShapeConst(const Scope& scope, const TensorShape& shape) {
  return ops::Const(scope.WithOpName("shape"),
                    Tensor::FromVector<int64_t>(shape.dim_sizes(), TensorShape({shape.dims()})));
}

Output Filled(const Scope& scope, const TensorShape& shape, DataType dtype, double value,
              const char* initializer) {
  Output scalar = ScalarConst(scope, value, dtype, initializer);
  if (!scalar.valid()) return Output();
  if (shape.dims() == 0) return scalar;
  return ops::Fill(scope, ShapeConst(scope, shape), scalar);
}

// The random op's seed pair: TensorFlow's (graph seed, op seed) when seeded.
template <typename Op>
typename Op::Attrs Seeds(std::optional<int64_t> seed) {
  if (!seed) return {};
  return Op::Seed(kDefaultGraphSeed).Seed2(*seed);
}

// scale * X + offset, X drawn by `Op` (RandomUniform, RandomStandardNormal or
// TruncatedNormal), built in a sub scope named `name`.
template <typename Op>
Output ScaledRandom(const Scope& outer, const TensorShape& shape, DataType dtype, double scale,
                    double offset, std::optional<int64_t> seed, const char* name) {
  if (dtype != DT_FLOAT && dtype != DT_DOUBLE) {
    outer.UpdateStatus(errors::InvalidArgument(name, " initializer: dtype ", DataTypeString(dtype),
                                               " is not a floating-point type"));
    return Output();
  }
  Scope scope = outer.NewSubScope(name);
  Output x = Op(scope, ShapeConst(scope, shape), dtype, Seeds<Op>(seed));
  Output scaled = ops::Mul(scope, x, ScalarConst(scope, scale, dtype, name));
  return ops::Add(scope, scaled, ScalarConst(scope, offset, dtype, name));
}

}  // namespace

Initializer Zeros() {
  return Initializer([](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return Filled(scope.NewSubScope("zeros"), shape, dtype, 0.0, "Zeros");
  });
}

Initializer Ones() {
  return Initializer([](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return Filled(scope.NewSubScope("ones"), shape, dtype, 1.0, "Ones");
  });
}

Initializer Constant(double value) {
  return Initializer([value](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return Filled(scope.NewSubScope("Const"), shape, dtype, value, "Constant");
  });
}

Initializer Constant(const Tensor& value) {
  return Initializer([value](const Scope& outer, const TensorShape& shape, DataType dtype) {
    if (value.NumElements() != shape.num_elements()) {
      outer.UpdateStatus(errors::InvalidArgument(
          "Constant initializer: a value of shape ", value.shape().DebugString(), " has ",
          value.NumElements(), " elements, the variable's shape ", shape.DebugString(), " needs ",
          shape.num_elements()));
      return Output();
    }
    Scope scope = outer.NewSubScope("Const");
    Output out = ops::Const(scope, value.Reshaped(shape));
    if (value.dtype() != dtype) out = ops::Cast(scope, out, dtype);
    return out;
  });
}

Initializer RandomNormal(double mean, double stddev, std::optional<int64_t> seed) {
  return Initializer([=](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return ScaledRandom<ops::RandomStandardNormal>(scope, shape, dtype, stddev, mean, seed,
                                                   "random_normal");
  });
}

Initializer RandomUniform(double minval, double maxval, std::optional<int64_t> seed) {
  return Initializer([=](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return ScaledRandom<ops::RandomUniform>(scope, shape, dtype, maxval - minval, minval, seed,
                                            "random_uniform");
  });
}

Initializer TruncatedNormal(double mean, double stddev, std::optional<int64_t> seed) {
  return Initializer([=](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return ScaledRandom<ops::TruncatedNormal>(scope, shape, dtype, stddev, mean, seed,
                                              "truncated_normal");
  });
}

std::pair<int64_t, int64_t> ComputeFans(const TensorShape& shape) {
  if (shape.dims() == 0) return {1, 1};
  if (shape.dims() == 1) return {shape.dim_size(0), shape.dim_size(0)};
  int64_t receptive_field = 1;
  for (int d = 0; d < shape.dims() - 2; ++d) receptive_field *= shape.dim_size(d);
  return {shape.dim_size(shape.dims() - 2) * receptive_field,
          shape.dim_size(shape.dims() - 1) * receptive_field};
}

namespace {

Output GlorotUniformValue(const Scope& scope, const TensorShape& shape, DataType dtype,
                          int64_t fan_in, int64_t fan_out, std::optional<int64_t> seed) {
  if (fan_in + fan_out <= 0) {
    scope.UpdateStatus(errors::InvalidArgument("GlorotUniform initializer: fan_in (", fan_in,
                                               ") + fan_out (", fan_out, ") must be positive"));
    return Output();
  }
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return ScaledRandom<ops::RandomUniform>(scope, shape, dtype, 2 * limit, -limit, seed,
                                          "glorot_uniform");
}

}  // namespace

Initializer GlorotUniform(std::optional<int64_t> seed) {
  return Initializer([=](const Scope& scope, const TensorShape& shape, DataType dtype) {
    auto [fan_in, fan_out] = ComputeFans(shape);
    return GlorotUniformValue(scope, shape, dtype, fan_in, fan_out, seed);
  });
}

Initializer GlorotUniform(int64_t fan_in, int64_t fan_out, std::optional<int64_t> seed) {
  return Initializer([=](const Scope& scope, const TensorShape& shape, DataType dtype) {
    return GlorotUniformValue(scope, shape, dtype, fan_in, fan_out, seed);
  });
}

}  // namespace training
}  // namespace tensorgrid
