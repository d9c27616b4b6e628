// BinaryOp<T, Op>: the CPU kernel behind Add, Sub, Mul, RealDiv, Maximum,
// Minimum and Equal: z = Op(x, y) element-wise, with numpy broadcasting.
//
// Op is an Eigen binary functor (Eigen::internal::scalar_sum_op<T>, ...); its
// result_type is z's element type. Three shapes of call are hot and get a
// direct path: equal shapes, and a one-element x or y against a tensor. Every
// other broadcast walks BinaryBroadcast's merged dimensions row by row. All
// paths run vectorised Eigen loops over contiguous runs, inline for small
// outputs and on the intra-op pool for large ones, writing into an input's
// buffer when the executor lets it go.
#ifndef TENSORGRID_KERNELS_MATH_CWISE_BINARY_OP_H_
#define TENSORGRID_KERNELS_MATH_CWISE_BINARY_OP_H_

#include <type_traits>

#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/math/broadcast.h"
#include "kernels/math/parallel_for.h"

namespace tensorgrid {
namespace math {

// x / y truncating toward zero, for integers. INT_MIN / -1 wraps instead of
// trapping; BinaryOp rejects a zero divisor before any element is computed.
template <typename T>
struct IntDivFunctor : Eigen::internal::binary_op_base<T, T> {
  using result_type = T;
  T operator()(const T& a, const T& b) const {
    if (b == -1) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
    return a / b;
  }
};

// Maximum and Minimum: NaN wins for floating point, as in numpy.
template <typename T>
using MaxFunctor = Eigen::internal::scalar_max_op<
    T, T, std::is_floating_point<T>::value ? Eigen::PropagateNaN : Eigen::PropagateFast>;
template <typename T>
using MinFunctor = Eigen::internal::scalar_min_op<
    T, T, std::is_floating_point<T>::value ? Eigen::PropagateNaN : Eigen::PropagateFast>;

template <typename Op>
struct IsIntDivFunctor : std::false_type {};
template <typename T>
struct IsIntDivFunctor<IntDivFunctor<T>> : std::true_type {};

template <typename T, typename Op>
class BinaryOp final : public OpKernel {
 public:
  using Out = typename Op::result_type;

  explicit BinaryOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    // Equal's: when false, incompatible shapes compare unequal instead of failing.
    if (HasNodeAttr(ctx.def(), "incompatible_shape_error")) {
      TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    if constexpr (IsIntDivFunctor<Op>::value) TG_RETURN_IF_ERROR(CheckNoZero(y));
    if (x.shape() == y.shape()) {
      Tensor* z;
      TG_RETURN_IF_ERROR(ForwardOrAllocate(ctx, x.shape(), &z));
      ComputeSameShape(ctx, x.data<T>(), y.data<T>(), z->data<Out>(), z->NumElements());
      return absl::OkStatus();
    }
    // A one-element operand of no higher rank leaves the other's shape as is.
    if (x.NumElements() == 1 && x.dims() <= y.dims()) {
      Tensor* z;
      TG_RETURN_IF_ERROR(ForwardOrAllocate(ctx, y.shape(), &z));
      ComputeScalarX(ctx, x.data<T>()[0], y.data<T>(), z->data<Out>(), z->NumElements());
      return absl::OkStatus();
    }
    if (y.NumElements() == 1 && y.dims() <= x.dims()) {
      Tensor* z;
      TG_RETURN_IF_ERROR(ForwardOrAllocate(ctx, x.shape(), &z));
      ComputeScalarY(ctx, x.data<T>(), y.data<T>()[0], z->data<Out>(), z->NumElements());
      return absl::OkStatus();
    }
    absl::StatusOr<BinaryBroadcast> bcast = BinaryBroadcast::Make(x.shape(), y.shape());
    if (!bcast.ok()) {
      if constexpr (std::is_same<Out, bool>::value) {
        if (!incompatible_shape_error_) {
          Tensor* z;
          TG_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape(), &z));
          z->data<bool>()[0] = false;
          return absl::OkStatus();
        }
      }
      return bcast.status();
    }
    Tensor* z;
    TG_RETURN_IF_ERROR(ForwardOrAllocate(ctx, bcast->output_shape(), &z));
    ComputeBroadcast(ctx, *bcast, x.data<T>(), y.data<T>(), z->data<Out>());
    return absl::OkStatus();
  }

 private:
  using InArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  using OutArray = Eigen::Map<Eigen::Array<Out, Eigen::Dynamic, 1>>;
  static constexpr double kCycles = Eigen::internal::functor_traits<Op>::Cost;

  static absl::Status CheckNoZero(const Tensor& y) {
    for (T v : y.values<T>()) {
      if (v == T(0)) return errors::InvalidArgument("Integer division by zero");
    }
    return absl::OkStatus();
  }

  // Reuses x's or y's buffer when nobody else holds it. An input with as many
  // elements as z is not broadcast, so z[i] only ever reads its own element i.
  static absl::Status ForwardOrAllocate(OpKernelContext& ctx, const TensorShape& shape,
                                        Tensor** z) {
    auto is_free = [&](int i) {
      return ctx.input(i).NumElements() == shape.num_elements() && ctx.input_ref(i) == nullptr &&
             ctx.input(i).RefCountIsOne();
    };
    return ctx.forward_input_or_allocate_output(is_free(0) || !is_free(1) ? 0 : 1, 0, shape, z);
  }

  static void VecVec(const T* x, const T* y, Out* z, int64_t n) {
    OutArray(z, n) = InArray(x, n).binaryExpr(InArray(y, n), Op());
  }
  static void ScalarVec(T x, const T* y, Out* z, int64_t n) {
    OutArray(z, n) = InArray(y, n).unaryExpr(Eigen::internal::bind1st_op<Op>(x));
  }
  static void VecScalar(const T* x, T y, Out* z, int64_t n) {
    OutArray(z, n) = InArray(x, n).unaryExpr(Eigen::internal::bind2nd_op<Op>(y));
  }

  static void ComputeSameShape(const OpKernelContext& ctx, const T* x, const T* y, Out* z,
                               int64_t n) {
    ParallelFor(ctx, n, 1, ElementCost<T, Out>(2, kCycles),
                [&](int64_t b, int64_t e) { VecVec(x + b, y + b, z + b, e - b); });
  }
  static void ComputeScalarX(const OpKernelContext& ctx, T x, const T* y, Out* z, int64_t n) {
    ParallelFor(ctx, n, 1, ElementCost<T, Out>(1, kCycles),
                [&](int64_t b, int64_t e) { ScalarVec(x, y + b, z + b, e - b); });
  }
  static void ComputeScalarY(const OpKernelContext& ctx, const T* x, T y, Out* z, int64_t n) {
    ParallelFor(ctx, n, 1, ElementCost<T, Out>(1, kCycles),
                [&](int64_t b, int64_t e) { VecScalar(x + b, y, z + b, e - b); });
  }

  // Rows of the innermost merged dimension; an odometer over the outer ones
  // tracks where each input's row starts.
  static void ComputeBroadcast(const OpKernelContext& ctx, const BinaryBroadcast& bcast, const T* x,
                               const T* y, Out* z) {
    const BinaryBroadcast::Dims& dims = bcast.dims();
    const int outer = static_cast<int>(dims.size()) - 1;
    if (outer < 0) {  // one element
      VecVec(x, y, z, 1);
      return;
    }
    const int64_t inner = dims[outer];
    int64_t rows = 1;
    for (int i = 0; i < outer; ++i) rows *= dims[i];
    if (rows * inner == 0) return;
    ParallelFor(ctx, rows, inner, ElementCost<T, Out>(2, kCycles) * static_cast<double>(inner),
                [&](int64_t begin, int64_t end) { RunRows(bcast, x, y, z, begin, end); });
  }

  static void RunRows(const BinaryBroadcast& bcast, const T* x, const T* y, Out* z, int64_t begin,
                      int64_t end) {
    const BinaryBroadcast::Dims& dims = bcast.dims();
    const BinaryBroadcast::Dims& xs = bcast.x_strides();
    const BinaryBroadcast::Dims& ys = bcast.y_strides();
    const int outer = static_cast<int>(dims.size()) - 1;
    const int64_t inner = dims[outer];
    const bool x_repeats = xs[outer] == 0, y_repeats = ys[outer] == 0;
    BinaryBroadcast::Dims index(outer);
    int64_t xo = 0, yo = 0;
    for (int64_t i = outer - 1, rest = begin; i >= 0; --i) {
      index[i] = rest % dims[i];
      rest /= dims[i];
      xo += index[i] * xs[i];
      yo += index[i] * ys[i];
    }
    for (int64_t row = begin; row < end; ++row) {
      Out* zr = z + row * inner;
      if (x_repeats) {
        ScalarVec(x[xo], y + yo, zr, inner);
      } else if (y_repeats) {
        VecScalar(x + xo, y[yo], zr, inner);
      } else {
        VecVec(x + xo, y + yo, zr, inner);
      }
      for (int i = outer - 1; i >= 0; --i) {  // advance the odometer
        xo += xs[i];
        yo += ys[i];
        if (++index[i] < dims[i]) break;
        xo -= xs[i] * dims[i];
        yo -= ys[i] * dims[i];
        index[i] = 0;
      }
    }
  }

  bool incompatible_shape_error_ = true;
};

}  // namespace math
}  // namespace tensorgrid

#endif  // TENSORGRID_KERNELS_MATH_CWISE_BINARY_OP_H_
