// BroadcastTo: `input` repeated, numpy style, to the shape `shape`: the
// input's dimensions line up with the shape's last ones, and each must equal
// its target dimension or be 1 (repeated). The gradient of Sum and Mean
// broadcasts the reduced gradient back to the input's shape with it.
//
// Elements are moved by size, not by type, so one kernel class serves every
// plain-data dtype; strings are copied as strings.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/array/array_shapes.h"
#include "kernels/index_values.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

using Dims = absl::InlinedVector<int64_t, 8>;

// Copies out[i] = in[src(i)] for outputs [first, last), where src steps by
// `strides` (0 along repeated dimensions) over output dimensions `dims`.
template <typename Unit>
void CopyRange(const Unit* in, Unit* out, const Dims& dims, const Dims& strides, int64_t first,
               int64_t last) {
  const int rank = static_cast<int>(dims.size());
  Dims index(rank);
  int64_t src = 0;
  int64_t rem = first;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rem % dims[d];
    rem /= dims[d];
    src += index[d] * strides[d];
  }
  for (int64_t dst = first; dst < last; ++dst) {
    out[dst] = in[src];
    for (int d = rank - 1; d >= 0; --d) {  // advance the odometer
      src += strides[d];
      if (++index[d] < dims[d]) break;
      src -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

class BroadcastToOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(TensorShape shape, BroadcastToShape(input, ctx.input(1)));
    const int rank = shape.dims();
    const int offset = rank - input.dims();
    if (input.shape() == shape) {
      ctx.set_output(0, input);
      return absl::OkStatus();
    }
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Input strides along the output's dimensions, 0 where repeated.
    Dims dims(rank), strides(rank, 0);
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      dims[d] = shape.dim_size(d);
      const int k = d - offset;
      if (k >= 0 && input.dim_size(k) != 1) strides[d] = stride;
      if (k >= 0) stride *= input.dim_size(k);
    }
    switch (DataTypeSize(input.dtype())) {
      case 1: return Copy<uint8_t>(ctx, input, out, dims, strides);
      case 2: return Copy<uint16_t>(ctx, input, out, dims, strides);
      case 4: return Copy<uint32_t>(ctx, input, out, dims, strides);
      case 8: return Copy<uint64_t>(ctx, input, out, dims, strides);
      default: break;
    }
    if (input.dtype() == DT_STRING) return Copy<std::string>(ctx, input, out, dims, strides);
    return errors::Unimplemented("BroadcastTo does not support ", DataTypeString(input.dtype()));
  }

 private:
  template <typename Unit>
  static absl::Status Copy(const OpKernelContext& ctx, const Tensor& input, Tensor* out,
                           const Dims& dims, const Dims& strides) {
    const Unit* in = static_cast<const Unit*>(input.raw_data());
    Unit* dst = static_cast<Unit*>(out->raw_data());
    const double bytes = sizeof(Unit);
    ctx.eigen_cpu_device().parallelFor(out->NumElements(),
                                       Eigen::TensorOpCost(bytes, bytes, /*compute_cycles=*/4),
                                       [&](Eigen::Index first, Eigen::Index last) {
                                         CopyRange<Unit>(in, dst, dims, strides, first, last);
                                       });
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastTo").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   BroadcastToOp);
TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastTo").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   BroadcastToOp);
TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastTo").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   BroadcastToOp);
TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastTo").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   BroadcastToOp);
TG_REGISTER_KERNEL(KernelDefBuilder("BroadcastTo").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   BroadcastToOp);
TG_REGISTER_KERNEL(
    KernelDefBuilder("BroadcastTo").Device(DEVICE_CPU).TypeConstraint<std::string>("T"),
    BroadcastToOp);

}  // namespace tensorgrid
