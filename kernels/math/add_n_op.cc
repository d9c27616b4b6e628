// AddN: sum = inputs[0] + ... + inputs[N-1], element-wise, for N tensors of
// one shape (no broadcasting). Gradients use it to add up what the consumers
// of one tensor send back.
#define EIGEN_USE_THREADS

#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
class AddNOp final : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction& ctx) : OpKernel(ctx) {}

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs();
    const TensorShape& shape = ctx.input(0).shape();
    for (int i = 1; i < n; ++i) {
      if (ctx.input(i).shape() != shape) {
        return errors::InvalidArgument(
            "AddN (node '", name(), "'): inputs must have the same shape, but input 0 is ",
            shape.DebugString(), " and input ", i, " is ", ctx.input(i).shape().DebugString());
      }
    }
    if (n == 1) {
      ctx.set_output(0, ctx.input(0));
      return absl::OkStatus();
    }
    std::vector<const T*> in(n);
    for (int i = 0; i < n; ++i) in[i] = ctx.input(i).data<T>();
    Tensor* sum;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, shape, &sum));
    T* out = sum->data<T>();
    ParallelFor(ctx, shape.num_elements(), 1, ElementCost<T, T>(n, n - 1),
                [&](int64_t b, int64_t e) {
                  const int64_t len = e - b;
                  Array acc(out + b, len);
                  acc = ConstArray(in[0] + b, len) + ConstArray(in[1] + b, len);
                  for (int i = 2; i < n; ++i) acc += ConstArray(in[i] + b, len);
                });
    return absl::OkStatus();
  }

 private:
  using Array = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
};

TG_REGISTER_KERNEL(KernelDefBuilder("AddN").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   AddNOp<float>);
TG_REGISTER_KERNEL(KernelDefBuilder("AddN").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   AddNOp<double>);
TG_REGISTER_KERNEL(KernelDefBuilder("AddN").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   AddNOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("AddN").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   AddNOp<int64_t>);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
