// ops::Const: a constant from a C++ literal, an initializer list or a Tensor.
//
//   auto w = ops::Const(scope, {{1.f, 0.f}, {0.f, 2.f}});   // float [2,2]
//   auto zeros = ops::Const(scope, 0.f, {2, 3});             // float [2,3] of 0
//   auto v = ops::Const(scope, {1, 2, 3, 4}, {2, 2});        // int32 [2,2]
//
// Hand-written, unlike the other wrappers (generated from the op registry,
// docs/ops.md), as in TensorFlow: its overloads take literals through
// Input::Initializer, and every generated wrapper turns constant inputs
// into Const nodes the same way. array_ops.h includes it.
#ifndef TENSORGRID_CLIENT_OPS_CONST_OP_H_
#define TENSORGRID_CLIENT_OPS_CONST_OP_H_

#include <initializer_list>

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

}  // namespace ops
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_CONST_OP_H_
