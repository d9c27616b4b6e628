// Gradients of broadcasting ops: the gradient of a broadcast result is
// summed over the dimensions along which an input was repeated, then
// reshaped to that input's shape (BroadcastGradientArgs, Sum, Reshape).
//
//   z = Add(x [2,3], y [3])  ->  dx = dz,  dy = Reshape(Sum(dz, [0]), [3])
#ifndef TENSORGRID_CLIENT_GRADIENTS_BROADCAST_GRAD_H_
#define TENSORGRID_CLIENT_GRADIENTS_BROADCAST_GRAD_H_

#include <vector>

#include "client/output.h"
#include "client/scope.h"

namespace tensorgrid {

// `grad`, shaped like the broadcast of `x` with something, reduced to x's shape.
Output ReduceGradToShapeOf(const Scope& scope, const Output& grad, const Output& x);

// For z = f(x, y) with broadcasting: appends gx and gy (each shaped like z)
// reduced to the shapes of x and y, with one BroadcastGradientArgs for both.
void AppendBinaryGrads(const Scope& scope, const Output& x, const Output& y, const Output& gx,
                       const Output& gy, std::vector<Output>* grad_inputs);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_GRADIENTS_BROADCAST_GRAD_H_
