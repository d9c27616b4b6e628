// Pack and Unpack: N tensors of one shape stacked along a new dimension, and
// back.
//
// Both view the packed tensor as [outer, N, inner], where outer is the
// product of the dimensions before `axis` and inner of those after it; each
// unpacked tensor is then [outer, inner]. Rows move by memcpy for plain-data
// dtypes and by copy for strings, so one kernel class serves every dtype.
// Unpack along axis 0 shares the input's buffer (slices along dimension 0).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// Copies `count` elements of `dtype` from `src` to `dst`.
void CopyElements(DataType dtype, const void* src, void* dst, int64_t count) {
  if (count == 0) return;
  if (dtype == DT_STRING) {
    std::copy_n(static_cast<const std::string*>(src), count, static_cast<std::string*>(dst));
  } else {
    std::memcpy(dst, src, count * DataTypeSize(dtype));
  }
}

// `p` advanced by `elements` of `dtype`.
const char* Advance(DataType dtype, const void* p, int64_t elements) {
  const int64_t unit = dtype == DT_STRING ? sizeof(std::string) : DataTypeSize(dtype);
  return static_cast<const char*>(p) + elements * unit;
}

// `axis` in [-rank, rank) made non-negative, or InvalidArgument.
absl::StatusOr<int> CheckAxis(int64_t axis, int rank, const char* op, const TensorShape& shape) {
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument("axis ", axis, " is out of range [", -rank, ", ", rank, ") for ",
                                   op, " of ", shape.DebugString());
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

class PackOp final : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("axis", &axis_));
  }
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs();
    const TensorShape& shape = ctx.input(0).shape();
    for (int i = 1; i < n; ++i) {
      if (ctx.input(i).shape() != shape) {
        return errors::InvalidArgument(
            "Pack input ", i, " has shape ", ctx.input(i).shape().DebugString(),
            ", but input 0 has shape ", shape.DebugString(), " (all must match)");
      }
    }
    TG_ASSIGN_OR_RETURN(const int axis, CheckAxis(axis_, shape.dims() + 1, "Pack", shape));
    std::vector<int64_t> dims;
    for (int d = 0; d < shape.dims(); ++d) dims.push_back(shape.dim_size(d));
    dims.insert(dims.begin() + axis, n);
    const TensorShape out_shape(dims);
    Tensor* out;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return absl::OkStatus();

    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= shape.dim_size(d);
    const int64_t inner = shape.num_elements() / outer;
    const DataType dtype = out->dtype();
    void* dst = out->raw_data();
    for (int64_t r = 0; r < outer; ++r) {
      for (int i = 0; i < n; ++i) {
        CopyElements(dtype, Advance(dtype, ctx.input(i).raw_data(), r * inner),
                     const_cast<char*>(Advance(dtype, dst, (r * n + i) * inner)), inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

class UnpackOp final : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("axis", &axis_));
  }
  bool IsExpensive() const override { return false; }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const int num = ctx.num_outputs();
    const TensorShape& shape = input.shape();
    TG_ASSIGN_OR_RETURN(const int axis, CheckAxis(axis_, shape.dims(), "Unpack", shape));
    if (shape.dim_size(axis) != num) {
      return errors::InvalidArgument("Unpack of ", shape.DebugString(), " along axis ", axis,
                                     " needs dimension ", axis, " to be num = ", num);
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < shape.dims(); ++d) {
      if (d != axis) dims.push_back(shape.dim_size(d));
    }
    const TensorShape out_shape(dims);
    if (axis == 0) {
      for (int i = 0; i < num; ++i) ctx.set_output(i, input.Slice(i, i + 1).Reshaped(out_shape));
      return absl::OkStatus();
    }
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= shape.dim_size(d);
    const int64_t inner = out_shape.num_elements() / std::max<int64_t>(outer, 1);
    const DataType dtype = input.dtype();
    for (int i = 0; i < num; ++i) {
      Tensor* out;
      TG_RETURN_IF_ERROR(ctx.allocate_output(i, out_shape, &out));
      if (out->NumElements() == 0) continue;
      for (int64_t r = 0; r < outer; ++r) {
        CopyElements(dtype, Advance(dtype, input.raw_data(), (r * num + i) * inner),
                     const_cast<char*>(Advance(dtype, out->raw_data(), r * inner)), inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

// One kernel class for every dtype that is plain data or a string.
#define TG_REGISTER_PACK_UNPACK(T)                                                                \
  TG_REGISTER_KERNEL(KernelDefBuilder("Pack").Device(DEVICE_CPU).TypeConstraint<T>("T"), PackOp); \
  TG_REGISTER_KERNEL(KernelDefBuilder("Unpack").Device(DEVICE_CPU).TypeConstraint<T>("T"), UnpackOp)
TG_REGISTER_PACK_UNPACK(float);
TG_REGISTER_PACK_UNPACK(double);
TG_REGISTER_PACK_UNPACK(half);
TG_REGISTER_PACK_UNPACK(bfloat16);
TG_REGISTER_PACK_UNPACK(int8_t);
TG_REGISTER_PACK_UNPACK(uint8_t);
TG_REGISTER_PACK_UNPACK(int16_t);
TG_REGISTER_PACK_UNPACK(uint16_t);
TG_REGISTER_PACK_UNPACK(int32_t);
TG_REGISTER_PACK_UNPACK(int64_t);
TG_REGISTER_PACK_UNPACK(bool);
TG_REGISTER_PACK_UNPACK(std::string);
#undef TG_REGISTER_PACK_UNPACK

}  // namespace tensorgrid
