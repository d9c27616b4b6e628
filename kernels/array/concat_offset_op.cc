// ConcatOffset: where each input of a concatenation starts in its output.
// For the shapes of N inputs joined along concat_dim, offset[i] is zero
// except at concat_dim, where it is the sum of the sizes of inputs 0..i-1.
// The gradient of ConcatV2 slices the output's gradient at these offsets.
//
//   concat_dim = 1, shape = {[2,3,5], [2,7,5]}  ->  offset = {[0,0,0], [0,3,0]}
#include <cstdint>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace {

template <typename T>
class ConcatOffsetOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& concat_dim = ctx.input(0);
    if (concat_dim.dims() != 0) {
      return errors::InvalidArgument("Concat dim tensor should be a scalar integer, but got shape ",
                                     concat_dim.shape().DebugString());
    }
    const int n = ctx.num_inputs() - 1;
    const Tensor& first = ctx.input(1);
    if (first.dims() != 1) {
      return errors::InvalidArgument("input 0 should be a vector, but got shape ",
                                     first.shape().DebugString());
    }
    const std::vector<int64_t> shape0 = IndexValues(first);
    const int64_t rank = static_cast<int64_t>(shape0.size());
    int64_t axis = concat_dim.scalar<int32_t>();
    if (axis < -rank || axis >= rank) {
      return errors::InvalidArgument("Concat dim is out of range: ", axis, " vs. ", rank);
    }
    if (axis < 0) axis += rank;
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& shape_tensor = ctx.input(i + 1);
      if (shape_tensor.dims() != 1 || shape_tensor.NumElements() != rank) {
        return errors::InvalidArgument("input ", i, " should contain ", rank,
                                       " elements, but got shape ",
                                       shape_tensor.shape().DebugString());
      }
      const std::vector<int64_t> shape = IndexValues(shape_tensor);
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && shape[d] != shape0[d]) {
          return errors::InvalidArgument("All dimensions except ", axis, " must match. Input ", i,
                                         " has shape ", IndexValuesString(shape),
                                         " and doesn't match input 0 with shape ",
                                         IndexValuesString(shape0), ".");
        }
      }
      Tensor* out;
      TG_RETURN_IF_ERROR(ctx.allocate_output(i, TensorShape({rank}), &out));
      T* values = out->data<T>();
      for (int64_t d = 0; d < rank; ++d) values[d] = 0;
      values[axis] = static_cast<T>(offset);
      offset += shape[axis];
    }
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(
    KernelDefBuilder("ConcatOffset").Device(DEVICE_CPU).TypeConstraint<int32_t>("shape_type"),
    ConcatOffsetOp<int32_t>);

// On a GPU: shape arithmetic, every argument in host memory (TensorFlow's
// registrations for int32 on GPU), so the gradient graph's index math runs
// beside the GPU kernels without a copy or a trip to the CPU device.
TG_REGISTER_KERNEL(KernelDefBuilder("ConcatOffset")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("shape_type")
                       .HostMemory("concat_dim")
                       .HostMemory("shape")
                       .HostMemory("offset"),
                   ConcatOffsetOp<int32_t>);
TG_REGISTER_KERNEL(
    KernelDefBuilder("ConcatOffset").Device(DEVICE_CPU).TypeConstraint<int64_t>("shape_type"),
    ConcatOffsetOp<int64_t>);

}  // namespace tensorgrid
