// Numeric checks of symbolic gradients, in the shape of TensorFlow's
// tensorflow/cc/framework/gradient_checker.h. The Jacobian of the ys with
// respect to the xs is computed twice: symbolically (AddSymbolicGradients,
// one run per element of the ys, each feeding a one-hot grad_y) and by
// central finite differences (two runs per element of the xs, each feeding
// x +- delta). Everything runs on a local ClientSession over `scope`.
//
//   auto x = ops::Placeholder(root, DT_DOUBLE);
//   auto y = ops::Tanh(root, x);
//   Tensor value = Tensor::FromVector<double>({0.1, -0.7, 1.3}, {3});
//   TG_ASSIGN_OR_RETURN(double error, ComputeGradientError(root, {x}, {value}, {y}));
//   // error < 1e-8 for a correct gradient
//
// xs are fed, so they are Placeholders or any other tensor a session can
// replace by a fed value; every x and y must be float or double (mixed is
// fine: Cast float -> double). The checker adds nodes to the scope's graph
// (placeholders for the grad_ys, the gradients) and checks that each
// gradient has its x's shape (InvalidArgument otherwise).
#ifndef TENSORGRID_CLIENT_GRADIENTS_GRADIENT_CHECKER_H_
#define TENSORGRID_CLIENT_GRADIENTS_GRADIENT_CHECKER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "client/client_session.h"
#include "client/output.h"
#include "client/scope.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

struct GradientCheckerOptions {
  // The finite-difference step. 1e-3 suits float; double allows less.
  double delta = 1e-3;
  // Values for other placeholders the ys need (labels, ...).
  ClientSession::FeedType feeds;
};

// Row r, column c: d y_c / d x_r, over the elements of all xs (rows, in
// order) and all ys (columns, in order), row-major.
struct Jacobians {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> symbolic;
  std::vector<double> numeric;
};

// x_values[i] is fed to xs[i] (and is the point the Jacobians are taken at).
absl::StatusOr<Jacobians> ComputeJacobians(const Scope& scope, const std::vector<Output>& xs,
                                           const std::vector<Tensor>& x_values,
                                           const std::vector<Output>& ys,
                                           const GradientCheckerOptions& options = {});

// The largest absolute difference between the two Jacobians.
absl::StatusOr<double> ComputeGradientError(const Scope& scope, const std::vector<Output>& xs,
                                            const std::vector<Tensor>& x_values,
                                            const std::vector<Output>& ys,
                                            const GradientCheckerOptions& options = {});

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_GRADIENTS_GRADIENT_CHECKER_H_
