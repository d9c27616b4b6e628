// Slice: the block of `input` that starts at `begin` and has shape `size`
// (a size of -1 takes everything from begin on in that dimension).
//
// Rows along the last dimension are contiguous in both tensors, so
// plain-data dtypes move a row at a time by memcpy and one kernel class
// serves every dtype; strings are copied as strings.
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

// Copies output rows [first, last) (rows of `row` units) from the input,
// whose rows start `begin`'s offset in and step by `src_strides` over the
// output's outer dimensions `outer`.
template <typename Unit>
void CopyRows(const Unit* in, Unit* out, const Dims& outer, const Dims& src_strides, int64_t base,
              int64_t row, int64_t first, int64_t last) {
  const int rank = static_cast<int>(outer.size());
  Dims index(rank);
  int64_t src = base;
  int64_t rem = first;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rem % outer[d];
    rem /= outer[d];
    src += index[d] * src_strides[d];
  }
  for (int64_t r = first; r < last; ++r) {
    if constexpr (std::is_same_v<Unit, char>) {
      std::memcpy(out + r * row, in + src, row);
    } else {
      std::copy_n(in + src, row, out + r * row);
    }
    for (int d = rank - 1; d >= 0; --d) {  // advance the odometer
      src += src_strides[d];
      if (++index[d] < outer[d]) break;
      src -= src_strides[d] * outer[d];
      index[d] = 0;
    }
  }
}

class SliceOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& begin_tensor = ctx.input(1);
    const Tensor& size_tensor = ctx.input(2);
    const int rank = input.dims();
    if (begin_tensor.dims() != 1 || size_tensor.dims() != 1 || begin_tensor.NumElements() != rank ||
        size_tensor.NumElements() != rank) {
      return errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of size ",
                                     rank, ", but got shapes ", begin_tensor.shape().DebugString(),
                                     " and ", size_tensor.shape().DebugString(), " instead.");
    }
    const std::vector<int64_t> begin = IndexValues(begin_tensor);
    std::vector<int64_t> size = IndexValues(size_tensor);
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.dim_size(d);
      if (size[d] == -1) size[d] = dim - begin[d];
      if (begin[d] < 0 || begin[d] > dim || size[d] < 0 || begin[d] + size[d] > dim) {
        return errors::InvalidArgument("Expected begin[", d, "] in [0, ", dim, "] and size[", d,
                                       "] in [0, ", dim - begin[d], "], but got begin ",
                                       IndexValuesString(begin), " and size ",
                                       IndexValuesString(IndexValues(size_tensor)),
                                       " for input of shape ", input.shape().DebugString());
      }
    }
    TG_ASSIGN_OR_RETURN(TensorShape out_shape, BuildTensorShape(size));
    if (out_shape == input.shape()) {
      ctx.set_output(0, input);
      return absl::OkStatus();
    }
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    if (rank == 0) return absl::OkStatus();
    if (input.dtype() == DT_STRING) {
      Copy<std::string>(ctx, input, begin, size, 1, out);
    } else {
      Copy<char>(ctx, input, begin, size, DataTypeSize(input.dtype()), out);
    }
    return absl::OkStatus();
  }

 private:
  // Unit is std::string for strings, char (counting bytes) for plain data.
  template <typename Unit>
  static void Copy(const OpKernelContext& ctx, const Tensor& input,
                   const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
                   int64_t unit_per_element, Tensor* out) {
    const int rank = input.dims();
    Dims in_strides(rank, unit_per_element);
    for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * input.dim_size(d + 1);
    int64_t base = 0;
    for (int d = 0; d < rank; ++d) base += begin[d] * in_strides[d];
    Dims outer(size.begin(), size.end() - 1);
    Dims src_strides(in_strides.begin(), in_strides.end() - 1);
    const int64_t row = size[rank - 1] * unit_per_element;
    int64_t rows = 1;
    for (int64_t d : outer) rows *= d;
    const Unit* src = static_cast<const Unit*>(input.raw_data());
    Unit* dst = static_cast<Unit*>(out->raw_data());
    const double row_bytes = static_cast<double>(row) * sizeof(Unit);
    ctx.eigen_cpu_device().parallelFor(rows, Eigen::TensorOpCost(row_bytes, row_bytes, 4),
                                       [&](Eigen::Index first, Eigen::Index last) {
                                         CopyRows<Unit>(src, dst, outer, src_strides, base, row,
                                                        first, last);
                                       });
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("Slice").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   SliceOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Slice").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   SliceOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Slice").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   SliceOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Slice").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   SliceOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Slice").Device(DEVICE_CPU).TypeConstraint<bool>("T"), SliceOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Slice").Device(DEVICE_CPU).TypeConstraint<std::string>("T"),
                   SliceOp);

}  // namespace tensorgrid
