// Softmax over the last dimension of a tensor of rank >= 1.
//
// Each row (the last dimension) is independent: subtract its maximum for
// stability, exponentiate, normalize. Rows are spread over the device's
// threads; within a row Eigen's vectorized exp does the work.
#define EIGEN_USE_THREADS

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

template <typename T>
class SoftmaxOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& logits = ctx.input(0);
    if (logits.dims() < 1) {
      return errors::InvalidArgument("logits must have >= 1 dimension, got shape ",
                                     logits.shape().DebugString());
    }
    const T* in = logits.data<T>();  // read before the buffer may be forwarded
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, logits.shape(), &out));
    const int64_t classes = logits.dim_size(logits.dims() - 1);
    if (logits.NumElements() == 0) return absl::OkStatus();
    const int64_t rows = logits.NumElements() / classes;
    T* y = out->data<T>();
    const double row_bytes = static_cast<double>(classes * sizeof(T));
    ctx.eigen_cpu_device().parallelFor(rows,
                                       Eigen::TensorOpCost(row_bytes, row_bytes, 20.0 * classes),
                                       [in, y, classes](Eigen::Index first, Eigen::Index last) {
                                         using Row = Eigen::Array<T, Eigen::Dynamic, 1>;
                                         for (Eigen::Index r = first; r < last; ++r) {
                                           // `x` and `e` may be the same memory; every step is
                                           // elementwise.
                                           Eigen::Map<const Row> x(in + r * classes, classes);
                                           Eigen::Map<Row> e(y + r * classes, classes);
                                           const T max = x.maxCoeff();
                                           e = (x - max).exp();
                                           e *= T(1) / e.sum();
                                         }
                                       });
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("Softmax").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SoftmaxOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("Softmax").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SoftmaxOp<double>);

}  // namespace tensorgrid
