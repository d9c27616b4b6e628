// Cast: y = x converted from SrcT to DstT, for every pair of the numeric
// types and bool.
//
// Conversions are defined for every input, unlike C++'s static_cast:
//   floating -> integer   truncates toward zero, saturates at the integer's
//                         range, and maps NaN to 0;
//   integer -> integer    wraps (two's complement), as static_cast does;
//   x -> bool             is x != 0 (NaN is true); bool -> x is 0 or 1;
//   floating -> narrower  rounds to nearest even, or with Truncate = true
//   floating              drops the extra mantissa bits (toward zero).
#define EIGEN_USE_THREADS

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point<T>::value || std::is_same<T, half>::value ||
                          std::is_same<T, bfloat16>::value;

// Mantissa bits, for deciding how many to drop when truncating.
template <typename T>
constexpr int kMantissaBits = std::numeric_limits<T>::digits - 1;
template <>
constexpr int kMantissaBits<half> = 10;
template <>
constexpr int kMantissaBits<bfloat16> = 7;

// The float or double that holds a floating value exactly.
template <typename T>
using Wide = std::conditional_t<std::is_same<T, double>::value, double, float>;

// `v` with its `bits` lowest mantissa bits cleared (NaN left alone), so that
// rounding it to a type with that many fewer bits is exact.
template <typename T>
T DropMantissaBits(T v, int bits) {
  if (std::isnan(v)) return v;
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  Bits b;
  std::memcpy(&b, &v, sizeof(v));
  b &= ~((Bits{1} << bits) - 1);
  std::memcpy(&v, &b, sizeof(v));
  return v;
}

template <typename Dst, typename Src, bool kTruncate>
Dst Convert(Src v) {
  if constexpr (std::is_same<Dst, bool>::value) {
    if constexpr (kIsFloat<Src>) {
      return static_cast<Wide<Src>>(v) != 0;
    } else {
      return v != 0;
    }
  } else if constexpr (std::is_same<Src, bool>::value) {
    return static_cast<Dst>(v ? 1 : 0);
  } else if constexpr (kIsFloat<Src> && !kIsFloat<Dst>) {
    const Wide<Src> w = static_cast<Wide<Src>>(v);
    if (std::isnan(w)) return 0;
    // Both bounds are powers of two (or zero), so exact in W.
    constexpr Wide<Src> lo = static_cast<Wide<Src>>(std::numeric_limits<Dst>::min());
    constexpr Wide<Src> hi = static_cast<Wide<Src>>(std::numeric_limits<Dst>::max()) + 1;
    if (w <= lo) return std::numeric_limits<Dst>::min();
    if (w >= hi) return std::numeric_limits<Dst>::max();
    return static_cast<Dst>(w);
  } else if constexpr (kIsFloat<Src> && kIsFloat<Dst>) {
    Wide<Src> w = static_cast<Wide<Src>>(v);
    if constexpr (kTruncate && kMantissaBits<Dst> < kMantissaBits<Src>) {
      w = DropMantissaBits(w, kMantissaBits<Wide<Src>> - kMantissaBits<Dst>);
    }
    if constexpr (std::is_same<Dst, half>::value || std::is_same<Dst, bfloat16>::value) {
      return static_cast<Dst>(static_cast<float>(w));
    } else {
      return static_cast<Dst>(w);
    }
  } else if constexpr (std::is_same<Dst, half>::value || std::is_same<Dst, bfloat16>::value) {
    return static_cast<Dst>(static_cast<float>(v));  // integer -> half
  } else {
    return static_cast<Dst>(v);  // integer -> integer or wider float
  }
}

using CastFn = void (*)(const OpKernelContext& ctx, const Tensor& in, Tensor* out);

template <typename Dst, typename Src, bool kTruncate>
void CastTensor(const OpKernelContext& ctx, const Tensor& in, Tensor* out) {
  const Src* src = in.data<Src>();
  Dst* dst = out->data<Dst>();
  ParallelFor(ctx, in.NumElements(), 1, ElementCost<Src, Dst>(1, 2), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = Convert<Dst, Src, kTruncate>(src[i]);
  });
}

template <typename Dst, typename Src>
CastFn CastFnFor(bool truncate) {
  return truncate ? &CastTensor<Dst, Src, true> : &CastTensor<Dst, Src, false>;
}

// (The parentheses keep the template's comma out of the macro's arguments.)
template <typename Src>
CastFn CastFnFrom(DataType dst, bool truncate) {
  TG_SWITCH_POD_TYPES(dst, return nullptr, { return (CastFnFor<T, Src>)(truncate); });
  return nullptr;
}

class CastOp final : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    DataType src, dst;
    bool truncate = false;
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("SrcT", &src));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("DstT", &dst));
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("Truncate", &truncate));
    identity_ = src == dst;
    TG_SWITCH_POD_TYPES(src, break, { fn_ = CastFnFrom<T>(dst, truncate); });
    if (!identity_ && fn_ == nullptr) {
      ctx.SetStatus(errors::Unimplemented("Cast ", DataTypeString(src), " to ", DataTypeString(dst),
                                          " is not supported"));
    }
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (identity_) {
      ctx.set_output(0, x);
      return absl::OkStatus();
    }
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.forward_input_or_allocate_output(0, 0, x.shape(), &y));
    fn_(ctx, x, y);
    return absl::OkStatus();
  }

 private:
  bool identity_ = false;
  CastFn fn_ = nullptr;
};

// DstT is checked when the kernel is built.
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<float>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<double>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<half>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<bfloat16>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<int8_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<int16_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<int32_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<int64_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<uint8_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<uint16_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<uint32_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<uint64_t>("SrcT"),
                   CastOp);
TG_REGISTER_KERNEL(KernelDefBuilder("Cast").Device(DEVICE_CPU).TypeConstraint<bool>("SrcT"),
                   CastOp);

}  // namespace
}  // namespace math
}  // namespace tensorgrid
