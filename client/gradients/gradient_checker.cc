#include "client/gradients/gradient_checker.h"

#include <algorithm>
#include <cmath>

#include "client/gradients/gradients.h"
#include "client/ops/standard_ops.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

absl::Status CheckFloating(const char* what, const Output& o) {
  const DataType t = RemoveRefType(o.type());
  if (t == DT_FLOAT || t == DT_DOUBLE) return absl::OkStatus();
  return errors::InvalidArgument("gradient checker: ", what, " '", o.name(), "' has dtype ",
                                 DataTypeString(t), "; only float and double are checked");
}

double Get(const Tensor& t, int64_t i) {
  return t.dtype() == DT_FLOAT ? static_cast<double>(t.data<float>()[i]) : t.data<double>()[i];
}

// Sets element i to `v` (rounded to the tensor's dtype) and returns the
// value actually stored.
double Set(const Tensor& t, int64_t i, double v) {
  if (t.dtype() == DT_FLOAT) {
    t.data<float>()[i] = static_cast<float>(v);
    return t.data<float>()[i];
  }
  t.data<double>()[i] = v;
  return v;
}

Tensor Zeros(DataType dtype, const TensorShape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) Set(t, i, 0);
  return t;
}

class JacobianBuilder {
 public:
  JacobianBuilder(const Scope& scope, const std::vector<Output>& xs,
                  const std::vector<Tensor>& x_values, const std::vector<Output>& ys,
                  const GradientCheckerOptions& options)
      : scope_(scope), xs_(xs), x_values_(x_values), ys_(ys), options_(options), session_(scope) {}

  absl::StatusOr<Jacobians> Run() {
    TG_RETURN_IF_ERROR(Validate());
    ClientSession::FeedType feeds = BaseFeeds(x_values_);
    std::vector<Tensor> y_values;
    TG_RETURN_IF_ERROR(session_.Run(feeds, ys_, &y_values));
    x_offsets_ = Offsets(x_values_, &jacobians_.rows);
    y_offsets_ = Offsets(y_values, &jacobians_.cols);
    jacobians_.symbolic.assign(jacobians_.rows * jacobians_.cols, 0);
    jacobians_.numeric.assign(jacobians_.rows * jacobians_.cols, 0);
    TG_RETURN_IF_ERROR(Symbolic(y_values));
    TG_RETURN_IF_ERROR(Numeric());
    return jacobians_;
  }

 private:
  absl::Status Validate() const {
    if (xs_.size() != x_values_.size()) {
      return errors::InvalidArgument("gradient checker: ", xs_.size(), " xs but ", x_values_.size(),
                                     " x_values");
    }
    for (size_t i = 0; i < xs_.size(); ++i) {
      TG_RETURN_IF_ERROR(CheckFloating("x", xs_[i]));
      if (x_values_[i].dtype() != RemoveRefType(xs_[i].type())) {
        return errors::InvalidArgument("gradient checker: x_values[", i, "] is ",
                                       DataTypeString(x_values_[i].dtype()), " but x '",
                                       xs_[i].name(), "' is ", DataTypeString(xs_[i].type()));
      }
    }
    for (const Output& y : ys_) TG_RETURN_IF_ERROR(CheckFloating("y", y));
    return absl::OkStatus();
  }

  ClientSession::FeedType BaseFeeds(const std::vector<Tensor>& x_values) const {
    ClientSession::FeedType feeds = options_.feeds;
    for (size_t i = 0; i < xs_.size(); ++i) feeds.insert_or_assign(xs_[i], x_values[i]);
    return feeds;
  }

  // Where each tensor's elements start in the concatenation of all of them.
  static std::vector<int64_t> Offsets(const std::vector<Tensor>& tensors, int64_t* total) {
    std::vector<int64_t> offsets;
    *total = 0;
    for (const Tensor& t : tensors) {
      offsets.push_back(*total);
      *total += t.NumElements();
    }
    return offsets;
  }

  double& At(std::vector<double>& m, int64_t row, int64_t col) {
    return m[row * jacobians_.cols + col];
  }

  // Column c of the Jacobian is the gradient for grad_ys one-hot at y element c.
  absl::Status Symbolic(const std::vector<Tensor>& y_values) {
    const Scope checker = scope_.NewSubScope("gradient_checker");
    std::vector<Output> grad_ys, grads;
    for (const Output& y : ys_)
      grad_ys.push_back(ops::Placeholder(checker, RemoveRefType(y.type())));
    TG_RETURN_IF_ERROR(AddSymbolicGradients(scope_, ys_, xs_, grad_ys, &grads));
    for (size_t k = 0; k < ys_.size(); ++k) {
      for (int64_t j = 0; j < y_values[k].NumElements(); ++j) {
        ClientSession::FeedType feeds = BaseFeeds(x_values_);
        for (size_t m = 0; m < ys_.size(); ++m) {
          Tensor dy = Zeros(y_values[m].dtype(), y_values[m].shape());
          if (m == k) Set(dy, j, 1);
          feeds.insert_or_assign(grad_ys[m], dy);
        }
        std::vector<Tensor> out;
        TG_RETURN_IF_ERROR(session_.Run(feeds, grads, &out));
        for (size_t i = 0; i < xs_.size(); ++i) {
          if (out[i].shape() != x_values_[i].shape()) {
            return errors::InvalidArgument("gradient checker: the gradient for x '", xs_[i].name(),
                                           "' has shape ", out[i].shape().DebugString(),
                                           " but x has shape ", x_values_[i].shape().DebugString());
          }
          for (int64_t r = 0; r < out[i].NumElements(); ++r) {
            At(jacobians_.symbolic, x_offsets_[i] + r, y_offsets_[k] + j) = Get(out[i], r);
          }
        }
      }
    }
    return absl::OkStatus();
  }

  // Row r of the Jacobian is (y(x + delta e_r) - y(x - delta e_r)) / (2 delta).
  absl::Status Numeric() {
    for (size_t i = 0; i < xs_.size(); ++i) {
      for (int64_t r = 0; r < x_values_[i].NumElements(); ++r) {
        // Fresh copies each time: a fetched y may share the fed buffer.
        const double x = Get(x_values_[i], r);
        std::vector<Tensor> values = x_values_;
        values[i] = x_values_[i].DeepCopy();
        const double high = Set(values[i], r, x + options_.delta);
        std::vector<Tensor> y_high, y_low;
        TG_RETURN_IF_ERROR(session_.Run(BaseFeeds(values), ys_, &y_high));
        values[i] = x_values_[i].DeepCopy();
        const double low = Set(values[i], r, x - options_.delta);
        TG_RETURN_IF_ERROR(session_.Run(BaseFeeds(values), ys_, &y_low));
        for (size_t k = 0; k < ys_.size(); ++k) {
          for (int64_t j = 0; j < y_high[k].NumElements(); ++j) {
            At(jacobians_.numeric, x_offsets_[i] + r, y_offsets_[k] + j) =
                (Get(y_high[k], j) - Get(y_low[k], j)) / (high - low);
          }
        }
      }
    }
    return absl::OkStatus();
  }

  const Scope& scope_;
  const std::vector<Output>& xs_;
  const std::vector<Tensor>& x_values_;
  const std::vector<Output>& ys_;
  const GradientCheckerOptions& options_;
  ClientSession session_;
  std::vector<int64_t> x_offsets_, y_offsets_;
  Jacobians jacobians_;
};

}  // namespace

absl::StatusOr<Jacobians> ComputeJacobians(const Scope& scope, const std::vector<Output>& xs,
                                           const std::vector<Tensor>& x_values,
                                           const std::vector<Output>& ys,
                                           const GradientCheckerOptions& options) {
  return JacobianBuilder(scope, xs, x_values, ys, options).Run();
}

absl::StatusOr<double> ComputeGradientError(const Scope& scope, const std::vector<Output>& xs,
                                            const std::vector<Tensor>& x_values,
                                            const std::vector<Output>& ys,
                                            const GradientCheckerOptions& options) {
  TG_ASSIGN_OR_RETURN(Jacobians j, ComputeJacobians(scope, xs, x_values, ys, options));
  double error = 0;
  for (size_t i = 0; i < j.symbolic.size(); ++i) {
    const double diff = std::abs(j.symbolic[i] - j.numeric[i]);
    error = std::isnan(diff) ? diff : std::max(error, diff);
    if (std::isnan(error)) break;
  }
  return error;
}

}  // namespace tensorgrid
