// Pad: `input` with zeros around it, paddings[d] = [before, after] per
// dimension.
//
// Rows along the last dimension are contiguous in both tensors: the output
// is zero-filled, then each input row is copied to its place (plain-data
// dtypes by memcpy, one kernel class for every dtype; strings as strings,
// padded with "").
#define EIGEN_USE_THREADS

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

using Dims = absl::InlinedVector<int64_t, 8>;

// Where one padded copy goes: input dims, output strides (in units), and
// the offset of input element 0 in the output.
struct PadLayout {
  Dims in_dims;
  Dims out_strides;
  int64_t base = 0;
  int64_t row = 0;   // units per input row (the last dimension)
  int64_t rows = 0;  // input rows
};

// Copies input rows [first, last) into the zero-filled output.
template <typename Unit>
void CopyRows(const Unit* in, Unit* out, const PadLayout& l, int64_t first, int64_t last) {
  const int outer = static_cast<int>(l.in_dims.size()) - 1;
  for (int64_t r = first; r < last; ++r) {
    int64_t dst = l.base;
    int64_t rem = r;
    for (int d = outer - 1; d >= 0; --d) {
      dst += (rem % l.in_dims[d]) * l.out_strides[d];
      rem /= l.in_dims[d];
    }
    if constexpr (std::is_same_v<Unit, char>) {
      std::memcpy(out + dst, in + r * l.row, l.row);
    } else {
      std::copy_n(in + r * l.row, l.row, out + dst);
    }
  }
}

class PadOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& paddings = ctx.input(1);
    const int rank = input.dims();
    if (paddings.dims() != 2 || paddings.dim_size(0) != rank || paddings.dim_size(1) != 2) {
      return errors::InvalidArgument("paddings must be [rank of input, 2] = [", rank, ",2], got ",
                                     paddings.shape().DebugString(), " for input ",
                                     input.shape().DebugString());
    }
    const std::vector<int64_t> pads = IndexValues(paddings);
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
        return errors::InvalidArgument("paddings must be non-negative, got ", pads[2 * d], " and ",
                                       pads[2 * d + 1], " for dimension ", d);
      }
      out_dims[d] = input.dim_size(d) + pads[2 * d] + pads[2 * d + 1];
    }
    TG_ASSIGN_OR_RETURN(TensorShape out_shape, BuildTensorShape(out_dims));
    if (out_shape == input.shape()) {
      ctx.set_output(0, input);
      return absl::OkStatus();
    }
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (input.dtype() == DT_STRING) {
      Pad<std::string>(ctx, input, pads, 1, out);
    } else {
      Pad<char>(ctx, input, pads, DataTypeSize(input.dtype()), out);
    }
    return absl::OkStatus();
  }

 private:
  // Unit is std::string for strings, char (counting bytes) for plain data.
  template <typename Unit>
  static void Pad(const OpKernelContext& ctx, const Tensor& input, const std::vector<int64_t>& pads,
                  int64_t unit_per_element, Tensor* out) {
    Unit* dst = static_cast<Unit*>(out->raw_data());
    const int64_t out_units = out->NumElements() * unit_per_element;
    std::fill_n(dst, out_units, Unit());
    if (input.NumElements() == 0) return;
    const int rank = input.dims();
    PadLayout l;
    l.in_dims.assign(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    l.out_strides.assign(rank, unit_per_element);
    for (int d = rank - 2; d >= 0; --d)
      l.out_strides[d] = l.out_strides[d + 1] * out->dim_size(d + 1);
    for (int d = 0; d < rank; ++d) l.base += pads[2 * d] * l.out_strides[d];
    l.row = l.in_dims[rank - 1] * unit_per_element;
    l.rows = input.NumElements() / l.in_dims[rank - 1];
    const Unit* src = static_cast<const Unit*>(input.raw_data());
    const double row_bytes = static_cast<double>(l.row) * sizeof(Unit);
    ctx.eigen_cpu_device().parallelFor(
        l.rows, Eigen::TensorOpCost(row_bytes, row_bytes, 4),
        [&](Eigen::Index first, Eigen::Index last) { CopyRows<Unit>(src, dst, l, first, last); });
  }
};

TG_REGISTER_KERNEL(KernelDefBuilder("Pad").Device(DEVICE_CPU), PadOp);

}  // namespace
}  // namespace tensorgrid
