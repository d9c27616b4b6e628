// Shared by the gradient tests: random inputs and a fixture that checks a
// gradient against finite differences.
//
//   class MathGradTest : public GradientTest {};
//   TEST_F(MathGradTest, Tanh) {
//     auto x = Placeholder(DT_DOUBLE);
//     CheckGradient({x}, {Random(DT_DOUBLE, {2, 3})}, {ops::Tanh(root_, x)});
//   }
#ifndef TENSORGRID_CLIENT_GRADIENTS_GRAD_TESTUTIL_H_
#define TENSORGRID_CLIENT_GRADIENTS_GRAD_TESTUTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "client/gradients/gradient_checker.h"
#include "client/gradients/gradients.h"
#include "client/ops/standard_ops.h"
#include "gtest/gtest.h"

namespace tensorgrid {

class GradientTest : public ::testing::Test {
 protected:
  // Uniform in [lo, hi), but at least `min_abs` away from 0 (for Log, Sqrt,
  // divisors and the kink of Relu). Deterministic per test.
  Tensor Random(DataType dtype, const TensorShape& shape, double lo = -1, double hi = 1,
                double min_abs = 0) {
    Tensor t(dtype, shape);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      double v = dist(rng_);
      while (std::abs(v) < min_abs) v = dist(rng_);
      if (dtype == DT_FLOAT) {
        t.data<float>()[i] = static_cast<float>(v);
      } else {
        t.data<double>()[i] = v;
      }
    }
    return t;
  }

  Output Placeholder(DataType dtype) { return ops::Placeholder(root_, dtype); }

  // The symbolic and numeric Jacobians of ys wrt xs at `values` agree to
  // `tolerance` (defaults suit double; pass about 5e-3 for float).
  void CheckGradient(const std::vector<Output>& xs, const std::vector<Tensor>& values,
                     const std::vector<Output>& ys, double tolerance = 1e-7,
                     GradientCheckerOptions options = {}) {
    ASSERT_TRUE(root_.ok()) << root_.status();
    bool all_double = true;
    for (const Tensor& v : values) all_double &= v.dtype() == DT_DOUBLE;
    if (all_double && options.delta == GradientCheckerOptions().delta) options.delta = 1e-5;
    absl::StatusOr<Jacobians> j = ComputeJacobians(root_, xs, values, ys, options);
    ASSERT_TRUE(j.ok()) << j.status();
    double error = 0;
    for (size_t i = 0; i < j->symbolic.size(); ++i) {
      error = std::max(error, std::abs(j->symbolic[i] - j->numeric[i]));
      EXPECT_NEAR(j->symbolic[i], j->numeric[i], tolerance)
          << "Jacobian entry (" << i / j->cols << ", " << i % j->cols << ")";
    }
    EXPECT_LT(error, tolerance);
  }

  Scope root_ = Scope::NewRootScope();
  std::mt19937 rng_{1234};
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_GRADIENTS_GRAD_TESTUTIL_H_
