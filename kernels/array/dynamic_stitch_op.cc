// DynamicStitch: interleaves the values of N data tensors into one, by
// index: merged[indices[m][i], ...] = data[m][i, ...]. Each data[m] has
// shape indices[m].shape + C for one trailing shape C; merged has shape
// [max index + 1] + C. A later (m, i) wins over an earlier one with the same
// index; positions no index names are zero (empty for strings).
//
//   indices = {[0, 1, 2, 3], [1, 2]}, data = {[2, 3, 5, 7], [1, 1]}
//   merged  = [2, 1, 1, 7]
//
// The gradients of Sum and Mean build their kept-dimensions shape with it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

class DynamicStitchOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() / 2;
    const Tensor& data0 = ctx.input(n);
    const Tensor& indices0 = ctx.input(0);
    if (data0.dims() < indices0.dims()) return ShapeMismatch(ctx, 0);
    // The trailing shape C, from data[0].
    std::vector<int64_t> constant;
    for (int d = indices0.dims(); d < data0.dims(); ++d) constant.push_back(data0.dim_size(d));
    int64_t slice = 1;
    for (int64_t d : constant) slice *= d;
    int64_t max_index = -1;
    for (int m = 0; m < n; ++m) {
      TG_RETURN_IF_ERROR(CheckShapes(ctx, m, constant));
      for (int32_t index : ctx.input(m).values<int32_t>()) {
        if (index < 0) {
          return errors::InvalidArgument("DynamicStitch (node '", name(), "'): indices[", m,
                                         "] holds ", index, ", which is negative");
        }
        max_index = std::max<int64_t>(max_index, index);
      }
    }
    std::vector<int64_t> out_dims = {max_index + 1};
    out_dims.insert(out_dims.end(), constant.begin(), constant.end());
    Tensor* merged;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims)), &merged));
    if (data0.dtype() == DT_STRING) {
      Stitch<std::string>(ctx, n, slice, merged);
    } else {
      std::memset(merged->raw_data(), 0, merged->TotalBytes());
      Stitch<char>(ctx, n, slice * DataTypeSize(data0.dtype()), merged);
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ShapeMismatch(const OpKernelContext& ctx, int m) const {
    const int n = ctx.num_inputs() / 2;
    return errors::InvalidArgument("DynamicStitch (node '", name(), "'): data[", m,
                                   "].shape = ", ctx.input(n + m).shape().DebugString(),
                                   " does not start with indices[", m,
                                   "].shape = ", ctx.input(m).shape().DebugString(),
                                   " followed by data[0]'s", " trailing shape");
  }

  // data[m].shape must be indices[m].shape + constant.
  absl::Status CheckShapes(const OpKernelContext& ctx, int m,
                           const std::vector<int64_t>& constant) const {
    const int n = ctx.num_inputs() / 2;
    const Tensor& indices = ctx.input(m);
    const Tensor& data = ctx.input(n + m);
    if (data.dims() != indices.dims() + static_cast<int>(constant.size())) {
      return ShapeMismatch(ctx, m);
    }
    for (int d = 0; d < data.dims(); ++d) {
      const int64_t want = d < indices.dims() ? indices.dim_size(d) : constant[d - indices.dims()];
      if (data.dim_size(d) != want) return ShapeMismatch(ctx, m);
    }
    return absl::OkStatus();
  }

  // Copies each data slice (of `slice` units) to its index's place in
  // `merged`; Unit is std::string for strings and char (bytes) otherwise.
  template <typename Unit>
  static void Stitch(const OpKernelContext& ctx, int n, int64_t slice, Tensor* merged) {
    Unit* out = static_cast<Unit*>(merged->raw_data());
    for (int m = 0; m < n; ++m) {
      const Unit* src = static_cast<const Unit*>(ctx.input(n + m).raw_data());
      const absl::Span<const int32_t> indices = ctx.input(m).values<int32_t>();
      for (size_t i = 0; i < indices.size(); ++i) {
        std::copy_n(src + i * slice, slice, out + indices[i] * slice);
      }
    }
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("DynamicStitch").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   DynamicStitchOp);
TG_REGISTER_KERNEL(KernelDefBuilder("DynamicStitch").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   DynamicStitchOp);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DynamicStitch").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
    DynamicStitchOp);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DynamicStitch").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
    DynamicStitchOp);

// On a GPU: shape arithmetic, every argument in host memory (TensorFlow's
// registrations for int32 on GPU), so the gradient graph's index math runs
// beside the GPU kernels without a copy or a trip to the CPU device.
TG_REGISTER_KERNEL(KernelDefBuilder("DynamicStitch")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("T")
                       .HostMemory("indices")
                       .HostMemory("data")
                       .HostMemory("merged"),
                   DynamicStitchOp);
TG_REGISTER_KERNEL(KernelDefBuilder("DynamicStitch").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   DynamicStitchOp);
TG_REGISTER_KERNEL(
    KernelDefBuilder("DynamicStitch").Device(DEVICE_CPU).TypeConstraint<std::string>("T"),
    DynamicStitchOp);

}  // namespace tensorgrid
