// SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits.
//
// For one row of logits x (length C) and a label distribution l, with
// s = x - max(x) for stability:
//   loss     = sum_j l_j * (log(sum_k exp(s_k)) - s_j)
//   backprop = softmax(x) - l
// The sparse op's l is one-hot at the row's label index. Rows are independent
// and spread over the device's threads.
#define EIGEN_USE_THREADS

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"
#include "kernels/nn/cross_entropy_shape.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

template <typename T>
using Row = Eigen::Array<T, Eigen::Dynamic, 1>;

// `t` ([rows, cols] with each dimension equal to the target's or 1) copied
// out to [batch, classes].
template <typename T>
Tensor BroadcastMatrix(const Tensor& t, int64_t batch, int64_t classes) {
  if (t.dim_size(0) == batch && t.dim_size(1) == classes) return t;
  Tensor out(t.dtype(), TensorShape({batch, classes}));
  const int64_t row_stride = t.dim_size(0) == 1 ? 0 : t.dim_size(1);
  const int64_t col_stride = t.dim_size(1) == 1 ? 0 : 1;
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t k = 0; k < classes; ++k) {
      out.data<T>()[r * classes + k] = t.data<T>()[r * row_stride + k * col_stride];
    }
  }
  return out;
}

template <typename T>
class SoftmaxXentOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    TG_ASSIGN_OR_RETURN(auto dims, SoftmaxXentDims(features.shape(), labels.shape()));
    const int64_t batch = dims.first, classes = dims.second;
    const Tensor x = BroadcastMatrix<T>(features, batch, classes);
    const Tensor l = BroadcastMatrix<T>(labels, batch, classes);
    Tensor *loss, *backprop;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({batch}), &loss));
    TG_RETURN_IF_ERROR(ctx.allocate_output(1, TensorShape({batch, classes}), &backprop));
    const T* xs = x.data<T>();
    const T* ls = l.data<T>();
    T* losses = loss->data<T>();
    T* bps = backprop->data<T>();
    const double row_bytes = static_cast<double>(classes * sizeof(T));
    ctx.eigen_cpu_device().parallelFor(
        classes == 0 ? 0 : batch, Eigen::TensorOpCost(2 * row_bytes, row_bytes, 30.0 * classes),
        [=](Eigen::Index first, Eigen::Index last) {
          for (Eigen::Index r = first; r < last; ++r) {
            Eigen::Map<const Row<T>> xr(xs + r * classes, classes);
            Eigen::Map<const Row<T>> lr(ls + r * classes, classes);
            Eigen::Map<Row<T>> bp(bps + r * classes, classes);
            bp = xr - xr.maxCoeff();  // shifted logits s
            const T label_dot_s = (lr * bp).sum();
            bp = bp.exp();
            const T sum = bp.sum();
            losses[r] = std::log(sum) * lr.sum() - label_dot_s;
            bp = bp / sum - lr;
          }
        });
    if (classes == 0) std::fill(losses, losses + batch, T(0));
    return absl::OkStatus();
  }
};

template <typename T>
class SparseSoftmaxXentOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels_tensor = ctx.input(1);
    TG_RETURN_IF_ERROR(CheckSparseXentShapes(features.shape(), labels_tensor.shape()));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    const std::vector<int64_t> labels = IndexValues(labels_tensor);
    for (int64_t r = 0; r < batch; ++r) {
      if (labels[r] < 0 || labels[r] >= classes) {
        return LabelOutOfRange(labels[r], r, features.shape());
      }
    }
    Tensor *loss, *backprop;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({batch}), &loss));
    TG_RETURN_IF_ERROR(ctx.allocate_output(1, features.shape(), &backprop));
    const T* xs = features.data<T>();
    const int64_t* ls = labels.data();
    T* losses = loss->data<T>();
    T* bps = backprop->data<T>();
    const double row_bytes = static_cast<double>(classes * sizeof(T));
    ctx.eigen_cpu_device().parallelFor(batch,
                                       Eigen::TensorOpCost(row_bytes, row_bytes, 25.0 * classes),
                                       [=](Eigen::Index first, Eigen::Index last) {
                                         for (Eigen::Index r = first; r < last; ++r) {
                                           Eigen::Map<const Row<T>> xr(xs + r * classes, classes);
                                           Eigen::Map<Row<T>> bp(bps + r * classes, classes);
                                           bp = xr - xr.maxCoeff();  // shifted logits s
                                           const T label_s = bp[ls[r]];
                                           bp = bp.exp();
                                           const T sum = bp.sum();
                                           losses[r] = std::log(sum) - label_s;
                                           bp /= sum;
                                           bp[ls[r]] -= T(1);
                                         }
                                       });
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(
    KernelDefBuilder("SoftmaxCrossEntropyWithLogits").Device(DEVICE_CPU).TypeConstraint<float>("T"),
    SoftmaxXentOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("SoftmaxCrossEntropyWithLogits")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<double>("T"),
                   SoftmaxXentOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<float>("T"),
                   SparseSoftmaxXentOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<double>("T"),
                   SparseSoftmaxXentOp<double>);

}  // namespace tensorgrid
