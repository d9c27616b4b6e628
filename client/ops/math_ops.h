// Math ops: element-wise arithmetic, MatMul, reductions, comparison, Cast.
// Names, inputs, outputs and attrs are TensorFlow's; "T" is inferred from the
// inputs, and both inputs of a binary op must have the same dtype (a literal
// `1` is int32, `1.f` float).
//
//   auto y = ops::Add(scope, ops::MatMul(scope, x, w), b);
//   auto loss = ops::Mean(scope, ops::Square(scope, y), {0, 1});
//   auto total = ops::Sum(scope, y, 1, ops::Sum::KeepDims(true));
#ifndef TENSORGRID_CLIENT_OPS_MATH_OPS_H_
#define TENSORGRID_CLIENT_OPS_MATH_OPS_H_

#include <optional>
#include <utility>

#include "client/output.h"
#include "client/scope.h"

namespace tensorgrid {
namespace ops {
namespace internal {

// y = f(x), one element at a time.
class UnaryOp {
 public:
  operator Output() const { return y; }
  operator Input() const { return y; }

  Operation operation;
  Output y;

 protected:
  UnaryOp(const Scope& scope, Input x, const char* op_type);
};

// z = f(x, y), element-wise with broadcasting.
class BinaryOp {
 public:
  operator Output() const { return z; }
  operator Input() const { return z; }

  Operation operation;
  Output z;

 protected:
  BinaryOp(const Scope& scope, Input x, Input y, const char* op_type);
};

// Sum, Mean, Max: reduce `input` over the dimensions listed in `axis`.
class ReductionOp {
 public:
  struct Attrs {
    // Keep reduced dimensions with size 1 (default false).
    Attrs KeepDims(bool x) const {
      Attrs r = *this;
      r.keep_dims_ = x;
      return r;
    }
    std::optional<bool> keep_dims_;
  };
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;

 protected:
  ReductionOp(const Scope& scope, Input input, Input axis, const Attrs& attrs, const char* op_type);
};

}  // namespace internal

// y = -x
class Neg : public internal::UnaryOp {
 public:
  Neg(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Neg") {}
};

// y = x * x
class Square : public internal::UnaryOp {
 public:
  Square(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Square") {}
};

// y = sqrt(x)
class Sqrt : public internal::UnaryOp {
 public:
  Sqrt(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Sqrt") {}
};

// y = 1 / sqrt(x)
class Rsqrt : public internal::UnaryOp {
 public:
  Rsqrt(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Rsqrt") {}
};

// y = e^x
class Exp : public internal::UnaryOp {
 public:
  Exp(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Exp") {}
};

// y = ln(x)
class Log : public internal::UnaryOp {
 public:
  Log(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Log") {}
};

// y = tanh(x)
class Tanh : public internal::UnaryOp {
 public:
  Tanh(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Tanh") {}
};

// y = 1 / (1 + e^-x)
class Sigmoid : public internal::UnaryOp {
 public:
  Sigmoid(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Sigmoid") {}
};

// z = x + y
class Add : public internal::BinaryOp {
 public:
  Add(const Scope& scope, Input x, Input y) : BinaryOp(scope, std::move(x), std::move(y), "Add") {}
};

// z = x + y (the op TensorFlow 2 emits; same semantics here)
class AddV2 : public internal::BinaryOp {
 public:
  AddV2(const Scope& scope, Input x, Input y)
      : BinaryOp(scope, std::move(x), std::move(y), "AddV2") {}
};

// z = x - y
class Sub : public internal::BinaryOp {
 public:
  Sub(const Scope& scope, Input x, Input y) : BinaryOp(scope, std::move(x), std::move(y), "Sub") {}
};

// z = x * y
class Mul : public internal::BinaryOp {
 public:
  Mul(const Scope& scope, Input x, Input y) : BinaryOp(scope, std::move(x), std::move(y), "Mul") {}
};

// z = x / y
class RealDiv : public internal::BinaryOp {
 public:
  RealDiv(const Scope& scope, Input x, Input y)
      : BinaryOp(scope, std::move(x), std::move(y), "RealDiv") {}
};

// z = max(x, y)
class Maximum : public internal::BinaryOp {
 public:
  Maximum(const Scope& scope, Input x, Input y)
      : BinaryOp(scope, std::move(x), std::move(y), "Maximum") {}
};

// z = min(x, y)
class Minimum : public internal::BinaryOp {
 public:
  Minimum(const Scope& scope, Input x, Input y)
      : BinaryOp(scope, std::move(x), std::move(y), "Minimum") {}
};

// The sum of `input` over the dimensions in `axis` (a scalar or a vector).
class Sum : public internal::ReductionOp {
 public:
  Sum(const Scope& scope, Input input, Input axis, const Attrs& attrs = Attrs())
      : ReductionOp(scope, std::move(input), std::move(axis), attrs, "Sum") {}
};

// The mean of `input` over the dimensions in `axis` (a scalar or a vector).
class Mean : public internal::ReductionOp {
 public:
  Mean(const Scope& scope, Input input, Input axis, const Attrs& attrs = Attrs())
      : ReductionOp(scope, std::move(input), std::move(axis), attrs, "Mean") {}
};

// The maximum of `input` over the dimensions in `axis` (a scalar or a vector).
class Max : public internal::ReductionOp {
 public:
  Max(const Scope& scope, Input input, Input axis, const Attrs& attrs = Attrs())
      : ReductionOp(scope, std::move(input), std::move(axis), attrs, "Max") {}
};

// product = a x b (optionally transposed), for matrices.
class MatMul {
 public:
  struct Attrs {
    Attrs TransposeA(bool x) const {
      Attrs r = *this;
      r.transpose_a_ = x;
      return r;
    }
    Attrs TransposeB(bool x) const {
      Attrs r = *this;
      r.transpose_b_ = x;
      return r;
    }
    std::optional<bool> transpose_a_;
    std::optional<bool> transpose_b_;
  };
  MatMul(const Scope& scope, Input a, Input b, const Attrs& attrs = Attrs());
  operator Output() const { return product; }
  operator Input() const { return product; }
  static Attrs TransposeA(bool x) { return Attrs().TransposeA(x); }
  static Attrs TransposeB(bool x) { return Attrs().TransposeB(x); }

  Operation operation;
  Output product;
};

// The index of the largest value along `dimension`.
class ArgMax {
 public:
  struct Attrs {
    // DT_INT64 (default) or DT_INT32.
    Attrs OutputType(DataType x) const {
      Attrs r = *this;
      r.output_type_ = x;
      return r;
    }
    std::optional<DataType> output_type_;
  };
  ArgMax(const Scope& scope, Input input, Input dimension, const Attrs& attrs = Attrs());
  operator Output() const { return output; }
  operator Input() const { return output; }
  static Attrs OutputType(DataType x) { return Attrs().OutputType(x); }

  Operation operation;
  Output output;
};

// z = (x == y), element-wise (bool).
class Equal {
 public:
  struct Attrs {
    Attrs IncompatibleShapeError(bool x) const {
      Attrs r = *this;
      r.incompatible_shape_error_ = x;
      return r;
    }
    std::optional<bool> incompatible_shape_error_;
  };
  Equal(const Scope& scope, Input x, Input y, const Attrs& attrs = Attrs());
  operator Output() const { return z; }
  operator Input() const { return z; }
  static Attrs IncompatibleShapeError(bool x) { return Attrs().IncompatibleShapeError(x); }

  Operation operation;
  Output z;
};

// `x` converted to `DstT`.
class Cast {
 public:
  struct Attrs {
    Attrs Truncate(bool x) const {
      Attrs r = *this;
      r.truncate_ = x;
      return r;
    }
    std::optional<bool> truncate_;
  };
  Cast(const Scope& scope, Input x, DataType DstT, const Attrs& attrs = Attrs());
  operator Output() const { return y; }
  operator Input() const { return y; }
  static Attrs Truncate(bool x) { return Attrs().Truncate(x); }

  Operation operation;
  Output y;
};

// y = 1 / x
class Reciprocal : public internal::UnaryOp {
 public:
  Reciprocal(const Scope& scope, Input x) : UnaryOp(scope, std::move(x), "Reciprocal") {}
};

// z = x - floor(x / y) * y, which has the sign of y (Python's %).
class FloorMod : public internal::BinaryOp {
 public:
  FloorMod(const Scope& scope, Input x, Input y)
      : BinaryOp(scope, std::move(x), std::move(y), "FloorMod") {}
};

// The gradients of Sigmoid, Tanh and Sqrt from their output `y` and the
// gradient `dy` flowing into it: dy * y * (1 - y), dy * (1 - y^2), dy / (2y).
class SigmoidGrad : public internal::BinaryOp {
 public:
  SigmoidGrad(const Scope& scope, Input y, Input dy)
      : BinaryOp(scope, std::move(y), std::move(dy), "SigmoidGrad") {}
};
class TanhGrad : public internal::BinaryOp {
 public:
  TanhGrad(const Scope& scope, Input y, Input dy)
      : BinaryOp(scope, std::move(y), std::move(dy), "TanhGrad") {}
};
class SqrtGrad : public internal::BinaryOp {
 public:
  SqrtGrad(const Scope& scope, Input y, Input dy)
      : BinaryOp(scope, std::move(y), std::move(dy), "SqrtGrad") {}
};

// sum = inputs[0] + ... + inputs[N-1], for N tensors of one shape.
class AddN {
 public:
  AddN(const Scope& scope, InputList inputs);
  operator Output() const { return sum; }
  operator Input() const { return sum; }

  Operation operation;
  Output sum;
};

// The vector start, start + delta, ... up to but not including limit.
class Range {
 public:
  Range(const Scope& scope, Input start, Input limit, Input delta);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_MATH_OPS_H_
