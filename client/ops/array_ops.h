// Array ops: constants, placeholders, identity and shape manipulation.
// Names, inputs, outputs and attrs are TensorFlow's; type attrs ("T",
// "Tshape", ...) are inferred from the inputs.
//
//   auto x = ops::Placeholder(scope, DT_FLOAT, ops::Placeholder::Shape({-1, 784}));
//   auto img = ops::Reshape(scope, x, {-1, 28, 28, 1});
//   auto both = ops::Concat(scope, {a, b}, /*axis=*/0);
#ifndef TENSORGRID_CLIENT_OPS_ARRAY_OPS_H_
#define TENSORGRID_CLIENT_OPS_ARRAY_OPS_H_

#include <initializer_list>
#include <optional>
#include <vector>

#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor_shape.h"

namespace tensorgrid {
namespace ops {

// A Const node holding `value` (a literal or a Tensor).
Output Const(const Scope& scope, const Input::Initializer& value);
// A Const of `shape` filled with `value`.
template <typename T>
Output Const(const Scope& scope, const T& value, const TensorShape& shape) {
  return Const(scope, Input::Initializer(value, shape));
}
// A Const of `shape` holding `values` in row-major order.
template <typename T>
Output Const(const Scope& scope, const std::initializer_list<T>& values, const TensorShape& shape) {
  return Const(scope, Input::Initializer(values, shape));
}

// A value that must be fed when the graph runs.
class Placeholder {
 public:
  struct Attrs {
    // The shape fed values must have (dimensions may be -1); unknown by default.
    Attrs Shape(const PartialTensorShape& x) const {
      Attrs r = *this;
      r.shape_ = x;
      return r;
    }
    std::optional<PartialTensorShape> shape_;
  };
  Placeholder(const Scope& scope, DataType dtype, const Attrs& attrs = Attrs());
  operator Output() const { return output; }
  operator Input() const { return output; }
  static Attrs Shape(const PartialTensorShape& x) { return Attrs().Shape(x); }

  Operation operation;
  Output output;
};

// `input` unless a value is fed in its place.
class PlaceholderWithDefault {
 public:
  PlaceholderWithDefault(const Scope& scope, Input input, const PartialTensorShape& shape);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

class Identity {
 public:
  Identity(const Scope& scope, Input input);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

// Does nothing; a target for control dependencies.
class NoOp {
 public:
  explicit NoOp(const Scope& scope);
  operator Operation() const { return operation; }

  Operation operation;
};

// `tensor` with the shape `shape` (one dimension may be -1).
class Reshape {
 public:
  Reshape(const Scope& scope, Input tensor, Input shape);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

// Dimension i of `y` is dimension perm[i] of `x`.
class Transpose {
 public:
  Transpose(const Scope& scope, Input x, Input perm);
  operator Output() const { return y; }
  operator Input() const { return y; }

  Operation operation;
  Output y;
};

// The shape of `input` as a 1-D tensor.
class Shape {
 public:
  struct Attrs {
    // DT_INT32 (default) or DT_INT64.
    Attrs OutType(DataType x) const {
      Attrs r = *this;
      r.out_type_ = x;
      return r;
    }
    std::optional<DataType> out_type_;
  };
  Shape(const Scope& scope, Input input, const Attrs& attrs = Attrs());
  operator Output() const { return output; }
  operator Input() const { return output; }
  static Attrs OutType(DataType x) { return Attrs().OutType(x); }

  Operation operation;
  Output output;
};

// A tensor of shape `dims` filled with the scalar `value`.
class Fill {
 public:
  Fill(const Scope& scope, Input dims, Input value);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

class ZerosLike {
 public:
  ZerosLike(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }

  Operation operation;
  Output y;
};

class OnesLike {
 public:
  OnesLike(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }

  Operation operation;
  Output y;
};

// `values` joined along `axis` (TensorFlow's ConcatV2 op).
class Concat {
 public:
  Concat(const Scope& scope, InputList values, Input axis);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

// The number of elements of `input`, as a scalar.
class Size {
 public:
  struct Attrs {
    // DT_INT32 (default) or DT_INT64.
    Attrs OutType(DataType x) const {
      Attrs r = *this;
      r.out_type_ = x;
      return r;
    }
    std::optional<DataType> out_type_;
  };
  Size(const Scope& scope, Input input, const Attrs& attrs = Attrs());
  operator Output() const { return output; }
  operator Input() const { return output; }
  static Attrs OutType(DataType x) { return Attrs().OutType(x); }

  Operation operation;
  Output output;
};

// `input` repeated along dimensions of size 1 (and new leading ones) to the
// shape `shape`, as numpy broadcasting does.
class BroadcastTo {
 public:
  BroadcastTo(const Scope& scope, Input input, Input shape);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

// For shapes s0 and s1 that broadcast together, the dimensions of the
// result along which each was repeated: [2,3,5] and [3,1] give r0 = [] and
// r1 = [0, 2]. A broadcasting op's gradient sums over them.
class BroadcastGradientArgs {
 public:
  BroadcastGradientArgs(const Scope& scope, Input s0, Input s1);

  Operation operation;
  Output r0;
  Output r1;
};

// y[x[i]] = i for a permutation x of [0, n).
class InvertPermutation {
 public:
  InvertPermutation(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }

  Operation operation;
  Output y;
};

// Where each of the tensors of shapes `shape` (N vectors) starts in their
// concatenation along `concat_dim`: offset[i] is 0 but at concat_dim.
class ConcatOffset {
 public:
  ConcatOffset(const Scope& scope, Input concat_dim, InputList shape);

  Operation operation;
  std::vector<Output> offset;
};

// The block of `input` that starts at `begin` and has shape `size` (a size
// of -1 takes the rest of that dimension).
class Slice {
 public:
  Slice(const Scope& scope, Input input, Input begin, Input size);
  operator Output() const { return output; }
  operator Input() const { return output; }

  Operation operation;
  Output output;
};

// merged[indices[m][i], ...] = data[m][i, ...] for N (indices, data) pairs.
class DynamicStitch {
 public:
  DynamicStitch(const Scope& scope, InputList indices, InputList data);
  operator Output() const { return merged; }
  operator Input() const { return merged; }

  Operation operation;
  Output merged;
};

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_ARRAY_OPS_H_
