// Transpose: output dimension i is input dimension perm[i].
//
// Elements are moved by size, not by type (float and int32 share one copy
// loop), so the kernel is one class with one registration line per dtype.
#define EIGEN_USE_THREADS

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

using Dims = absl::InlinedVector<int64_t, 8>;

// Calls copy(dst, src) for output elements dst in [first, last), where src is
// the matching input element. out_dims[d] is output dimension d and
// src_strides[d] the input stride that moving along it takes.
template <typename CopyFn>
void ForEachElement(const Dims& out_dims, const Dims& src_strides, int64_t first, int64_t last,
                    CopyFn copy) {
  const int rank = static_cast<int>(out_dims.size());
  Dims index(rank);
  int64_t src = 0;
  int64_t rem = first;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rem % out_dims[d];
    rem /= out_dims[d];
    src += index[d] * src_strides[d];
  }
  const int64_t inner_dim = out_dims[rank - 1];
  const int64_t inner_stride = src_strides[rank - 1];
  for (int64_t dst = first; dst < last;) {
    // A tight loop along the innermost output dimension, then carry.
    const int64_t run = std::min(last - dst, inner_dim - index[rank - 1]);
    for (int64_t k = 0; k < run; ++k) copy(dst + k, src + k * inner_stride);
    dst += run;
    src += run * inner_stride;
    index[rank - 1] += run;
    if (index[rank - 1] < inner_dim) continue;
    src -= inner_dim * inner_stride;
    index[rank - 1] = 0;
    for (int d = rank - 2; d >= 0; --d) {
      src += src_strides[d];
      if (++index[d] < out_dims[d]) break;
      src -= out_dims[d] * src_strides[d];
      index[d] = 0;
    }
  }
}

// Fills `out` from `in`, moving elements with copy(dst_index, src_index).
template <typename CopyFn>
void Permute(const Eigen::ThreadPoolDevice& device, const Tensor& in,
             const std::vector<int64_t>& perm, const Tensor& out, double bytes_per_element,
             CopyFn copy) {
  const int rank = in.dims();
  Dims in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in.dim_size(d + 1);
  Dims out_dims(rank), src_strides(rank);
  for (int d = 0; d < rank; ++d) {
    out_dims[d] = out.dim_size(d);
    src_strides[d] = in_strides[perm[d]];
  }
  device.parallelFor(
      out.NumElements(),
      Eigen::TensorOpCost(bytes_per_element, bytes_per_element, /*compute_cycles=*/4),
      [&](Eigen::Index first, Eigen::Index last) {
        ForEachElement(out_dims, src_strides, first, last, copy);
      });
}

template <int kBytes>
void PermuteBytes(const Eigen::ThreadPoolDevice& device, const Tensor& in,
                  const std::vector<int64_t>& perm, const Tensor& out) {
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  Permute(device, in, perm, out, kBytes, [src, dst](int64_t d, int64_t s) {
    std::memcpy(dst + d * kBytes, src + s * kBytes, kBytes);
  });
}

void PermuteStrings(const Eigen::ThreadPoolDevice& device, const Tensor& in,
                    const std::vector<int64_t>& perm, const Tensor& out) {
  const std::string* src = in.data<std::string>();
  std::string* dst = out.data<std::string>();
  Permute(device, in, perm, out, sizeof(std::string),
          [src, dst](int64_t d, int64_t s) { dst[d] = src[s]; });
}

class TransposeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& perm_tensor = ctx.input(1);
    if (perm_tensor.dims() != 1) {
      return errors::InvalidArgument("perm must be a vector, got a tensor of shape ",
                                     perm_tensor.shape().DebugString());
    }
    const std::vector<int64_t> perm = IndexValues(perm_tensor);
    TG_RETURN_IF_ERROR(ValidatePermutation(perm, input.dims()));
    if (std::is_sorted(perm.begin(), perm.end())) {  // the identity
      ctx.set_output(0, input);
      return absl::OkStatus();
    }
    TensorShape out_shape;
    for (int64_t d : perm) out_shape.AddDim(input.dim_size(static_cast<int>(d)));
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();
    const Eigen::ThreadPoolDevice& device = ctx.eigen_cpu_device();
    switch (input.dtype() == DT_STRING ? -1 : DataTypeSize(input.dtype())) {
      case -1: PermuteStrings(device, input, perm, *out); break;
      case 1: PermuteBytes<1>(device, input, perm, *out); break;
      case 2: PermuteBytes<2>(device, input, perm, *out); break;
      case 4: PermuteBytes<4>(device, input, perm, *out); break;
      case 8: PermuteBytes<8>(device, input, perm, *out); break;
      default: return errors::Unimplemented("Transpose of ", DataTypeString(input.dtype()));
    }
    return absl::OkStatus();
  }
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("Transpose").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   TransposeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Transpose").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                   TransposeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Transpose").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"),
                   TransposeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Transpose").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"),
                   TransposeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Transpose").Device(DEVICE_CPU).TypeConstraint<bool>("T"),
                   TransposeOp);
TG_REGISTER_KERNEL(
    KernelDefBuilder("Transpose").Device(DEVICE_CPU).TypeConstraint<std::string>("T"), TransposeOp);

}  // namespace tensorgrid
