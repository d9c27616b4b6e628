// Reshape and Shape: ops that look only at a tensor's shape. Neither reads
// the elements, so one kernel serves every dtype, and both are cheap enough
// to run inline on the executor's thread.
#include <cstdint>
#include <limits>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/index_values.h"

namespace tensorgrid {
namespace {

// The shape `requested` (which may hold one -1) describes for a tensor of
// `input` shape; InvalidArgument naming both when they disagree.
absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& input,
                                           const std::vector<int64_t>& requested) {
  const int64_t n = input.num_elements();
  auto mismatch = [&](absl::string_view what) {
    return errors::InvalidArgument("Input to reshape is a tensor with shape ", input.DebugString(),
                                   " (", n, " values), but the requested shape ",
                                   IndexValuesString(requested), " ", what);
  };
  int unknown = -1;
  int64_t known_product = 1;
  for (int i = 0; i < static_cast<int>(requested.size()); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      if (unknown >= 0) {
        return errors::InvalidArgument(
            "Only one dimension of the requested shape may be -1, not both ", unknown, " and ", i,
            " in ", IndexValuesString(requested));
      }
      unknown = i;
    } else if (d < 0) {
      return errors::InvalidArgument("Dimension ", i, " of the requested shape ",
                                     IndexValuesString(requested), " is ", d,
                                     "; it must be non-negative or -1");
    } else if (__builtin_mul_overflow(known_product, d, &known_product)) {
      return mismatch("has more elements than fit in int64");
    }
  }
  std::vector<int64_t> dims = requested;
  if (unknown >= 0) {
    if (known_product == 0) {
      return mismatch("has a zero dimension, so its -1 dimension cannot be inferred");
    }
    if (n % known_product != 0) {
      return mismatch(absl::StrCat("needs a multiple of ", known_product, " values"));
    }
    dims[unknown] = n / known_product;
  } else if (known_product != n) {
    return mismatch(absl::StrCat("has ", known_product, " values"));
  }
  return BuildTensorShape(dims);
}

// Zero-copy: the output shares the input's buffer.
class ReshapeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& sizes = ctx.input(1);
    if (sizes.dims() != 1) {
      return errors::InvalidArgument("shape must be a vector, got a tensor of shape ",
                                     sizes.shape().DebugString());
    }
    TG_ASSIGN_OR_RETURN(TensorShape shape, ResolveReshape(input.shape(), IndexValues(sizes)));
    ctx.set_output(0, input.Reshaped(shape));
    return absl::OkStatus();
  }
};

template <typename OutType>
class ShapeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const TensorShape& shape = ctx.input(0).shape();
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({shape.dims()}), &out));
    OutType* values = out->data<OutType>();
    for (int d = 0; d < shape.dims(); ++d) {
      const int64_t size = shape.dim_size(d);
      if (size > std::numeric_limits<OutType>::max()) {
        return errors::InvalidArgument("Shape output type is 32-bit but dimension ", d, " of ",
                                       shape.DebugString(), " is ", size, "; use out_type int64");
      }
      values[d] = static_cast<OutType>(size);
    }
    return absl::OkStatus();
  }
};

}  // namespace

// No "T" constraint: neither kernel touches the elements.
TG_REGISTER_KERNEL(KernelDefBuilder("Reshape").Device(DEVICE_CPU), ReshapeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Shape").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
                   ShapeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Shape").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
                   ShapeOp<int64_t>);
// On a GPU the data stays where it is; shapes live in host memory.
TG_REGISTER_KERNEL(KernelDefBuilder("Reshape").Device(DEVICE_GPU).HostMemory("shape"), ReshapeOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Shape")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int32_t>("out_type")
                       .HostMemory("output"),
                   ShapeOp<int32_t>);
TG_REGISTER_KERNEL(KernelDefBuilder("Shape")
                       .Device(DEVICE_GPU)
                       .TypeConstraint<int64_t>("out_type")
                       .HostMemory("output"),
                   ShapeOp<int64_t>);

}  // namespace tensorgrid
