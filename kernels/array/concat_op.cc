// ConcatV2: joins N tensors along `axis`.
//
// Every input is viewed as a matrix [outer, inner_i], where outer is the
// product of the dimensions before the axis; output row r is input 0's row r,
// then input 1's row r, and so on. Rows are contiguous, so plain-data dtypes
// move by memcpy and one kernel class serves every dtype.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/array/array_shapes.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

class ConcatV2Op final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    TG_ASSIGN_OR_RETURN(ConcatShape shape, ConcatV2Shape(ctx));
    const int axis = shape.axis;
    const TensorShape& out_shape = shape.output;
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();

    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= out_shape.dim_size(d);
    std::vector<int64_t> inner(n);
    for (int i = 0; i < n; ++i) inner[i] = ctx.input(i).NumElements() / outer;
    if (ctx.input(0).dtype() == DT_STRING) {
      CopyRows<std::string>(ctx, inner, outer, *out);
    } else {
      CopyRows<char>(ctx, inner, outer, *out);
    }
    return absl::OkStatus();
  }

 private:
  // Copies the inputs' rows into `out`; Unit is std::string for strings and
  // char (counting bytes) for every plain-data dtype.
  template <typename Unit>
  static void CopyRows(const OpKernelContext& ctx, std::vector<int64_t> inner, int64_t outer,
                       const Tensor& out) {
    const int n = static_cast<int>(inner.size());
    const int64_t unit_per_element = std::is_same_v<Unit, char> ? DataTypeSize(out.dtype()) : 1;
    std::vector<const Unit*> src(n);
    int64_t row = 0;  // output row length, in units
    for (int i = 0; i < n; ++i) {
      src[i] = static_cast<const Unit*>(ctx.input(i).raw_data());
      inner[i] *= unit_per_element;
      row += inner[i];
    }
    Unit* dst = static_cast<Unit*>(out.raw_data());
    const double row_bytes = static_cast<double>(row) * sizeof(Unit);
    ctx.eigen_cpu_device().parallelFor(outer, Eigen::TensorOpCost(row_bytes, row_bytes, 0),
                                       [&](Eigen::Index first, Eigen::Index last) {
                                         Unit* d = dst + first * row;
                                         for (Eigen::Index r = first; r < last; ++r) {
                                           for (int i = 0; i < n; ++i) {
                                             if constexpr (std::is_same_v<Unit, char>) {
                                               std::memcpy(d, src[i] + r * inner[i], inner[i]);
                                             } else {
                                               std::copy_n(src[i] + r * inner[i], inner[i], d);
                                             }
                                             d += inner[i];
                                           }
                                         }
                                       });
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   ConcatV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   ConcatV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   ConcatV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   ConcatV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   ConcatV2Op);
TG_REGISTER_KERNEL(KernelDefBuilder("ConcatV2").Device(DEVICE_CPU).TypeConstraint<std::string>("T"),
                   ConcatV2Op);

}  // namespace tensorgrid
