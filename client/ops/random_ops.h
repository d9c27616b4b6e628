// Random ops: tensors of shape `shape` (a 1-D int32/int64 input) and dtype
// `dtype` with random values. Names and attrs are TensorFlow's: with Seed and
// Seed2 both 0 (the default) every run draws fresh values; otherwise the
// sequence is fixed by the pair.
//
//   auto w = ops::TruncatedNormal(scope, {784, 10}, DT_FLOAT,
//                                 ops::TruncatedNormal::Seed(1).Seed2(2));
#ifndef TENSORGRID_CLIENT_OPS_RANDOM_OPS_H_
#define TENSORGRID_CLIENT_OPS_RANDOM_OPS_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "client/output.h"
#include "client/scope.h"

namespace tensorgrid {
namespace ops {
namespace internal {

class RandomOp {
 public:
  struct Attrs {
    Attrs Seed(int64_t x) const {
      Attrs r = *this;
      r.seed_ = x;
      return r;
    }
    Attrs Seed2(int64_t x) const {
      Attrs r = *this;
      r.seed2_ = x;
      return r;
    }
    std::optional<int64_t> seed_;
    std::optional<int64_t> seed2_;
  };
  static Attrs Seed(int64_t x) { return Attrs().Seed(x); }
  static Attrs Seed2(int64_t x) { return Attrs().Seed2(x); }
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;

 protected:
  RandomOp(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs,
           const char* op_type);
};

}  // namespace internal

// Uniform in [0, 1).
class RandomUniform : public internal::RandomOp {
 public:
  RandomUniform(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs = Attrs())
      : RandomOp(scope, std::move(shape), dtype, attrs, "RandomUniform") {}
};

// Normal with mean 0 and standard deviation 1.
class RandomStandardNormal : public internal::RandomOp {
 public:
  RandomStandardNormal(const Scope& scope, Input shape, DataType dtype,
                       const Attrs& attrs = Attrs())
      : RandomOp(scope, std::move(shape), dtype, attrs, "RandomStandardNormal") {}
};

// Normal with mean 0 and standard deviation 1, redrawn beyond 2 deviations.
class TruncatedNormal : public internal::RandomOp {
 public:
  TruncatedNormal(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs = Attrs())
      : RandomOp(scope, std::move(shape), dtype, attrs, "TruncatedNormal") {}
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_RANDOM_OPS_H_
