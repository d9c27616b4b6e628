// FusedBatchNormV3 and FusedBatchNormGradV3 on the CPU through oneDNN's
// batch normalization primitives, cached per shape (float).
//
// Training: oneDNN normalizes with the batch's mean and biased variance and
// returns them (reserve_space_1 and _2); the moving statistics TensorFlow
// outputs as batch_mean and batch_variance are then (1 - f) * old + f * batch,
// the variance with Bessel's correction n / (n - 1), over C values here.
// Inference: oneDNN's use_global_stats normalizes with `mean` and `variance`.
// The gradient in inference mode treats those as constants, as TensorFlow.
// NCHW runs on plain loops instead (batch_norm_nchw.h says why).
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/util/window_geometry.h"
#include "kernels/nn/batch_norm_args.h"
#include "kernels/nn/batch_norm_nchw.h"
#include "kernels/nn/onednn.h"

namespace tensorgrid {
namespace nn {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;
using dnnl::prop_kind;

normalization_flags Flags(bool is_training) {
  normalization_flags flags = normalization_flags::use_scale | normalization_flags::use_shift;
  return is_training ? flags : flags | normalization_flags::use_global_stats;
}

std::string Key(int threads, const char* kind, const std::array<int64_t, 4>& d,
                const BatchNormAttrs& a) {
  uint32_t eps_bits;
  std::memcpy(&eps_bits, &a.epsilon, sizeof eps_bits);
  return absl::StrCat(threads, "/", kind, "/", a.is_training, "/", static_cast<int>(a.format), "/",
                      d[0], ",", d[1], ",", d[2], ",", d[3], "/", eps_bits);
}

dnnl::batch_normalization_forward::primitive_desc ForwardPd(const std::array<int64_t, 4>& d,
                                                            const BatchNormAttrs& a) {
  dnnl::batch_normalization_forward::desc desc(
      a.is_training ? prop_kind::forward_training : prop_kind::forward_inference,
      ImageDesc(d, a.format), a.epsilon, Flags(a.is_training));
  return {desc, UserScratchpad(), OneDnnCpuEngine()};
}

struct BnForward {
  dnnl::batch_normalization_forward::primitive_desc pd;
  dnnl::batch_normalization_forward primitive;
};

struct BnBackward {
  dnnl::batch_normalization_backward::primitive_desc pd;
  dnnl::batch_normalization_backward primitive;
};

PrimitiveCache<BnForward>& ForwardCache() {
  static auto* cache = new PrimitiveCache<BnForward>();
  return *cache;
}
PrimitiveCache<BnBackward>& BackwardCache() {
  static auto* cache = new PrimitiveCache<BnBackward>();
  return *cache;
}

class FusedBatchNormOp final : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ReadBatchNormAttrs(ctx, &attrs_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    TG_ASSIGN_OR_RETURN(const auto dims, NchwOf(x, "x", attrs_.format));
    const int64_t c = dims[1];
    TG_RETURN_IF_ERROR(CheckBatchNormInputs(ctx, attrs_, c));
    Tensor* y;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, x.shape(), &y));
    std::array<Tensor*, 4> stats;  // batch_mean, batch_variance, reserve_space_1, _2
    for (int i = 0; i < 4; ++i) TG_RETURN_IF_ERROR(ctx.allocate_output(i + 1, {c}, &stats[i]));
    Tensor* reserve3;
    TG_RETURN_IF_ERROR(ctx.allocate_output(5, {0}, &reserve3));
    if (c == 0) return absl::OkStatus();
    if (!attrs_.is_training) {
      for (int i = 0; i < 4; ++i) CopyVector(ctx.input(i % 2 == 0 ? 3 : 4), stats[i]);
    }
    if (x.NumElements() == 0) return EmptyBatch(stats);
    TG_RETURN_IF_ERROR(Normalize(ctx, dims, y, stats[2], stats[3]));
    if (attrs_.is_training) {
      UpdateMovingStats(ctx, x.NumElements() / c, *stats[2], *stats[3], stats[0], stats[1]);
    }
    return absl::OkStatus();
  }

 private:
  static void CopyVector(const Tensor& from, Tensor* to) {
    std::memcpy(to->raw_data(), from.raw_data(), from.NumElements() * sizeof(float));
  }

  // No examples: TensorFlow's statistics are NaN.
  absl::Status EmptyBatch(const std::array<Tensor*, 4>& stats) {
    if (!attrs_.is_training) return absl::OkStatus();
    for (Tensor* t : stats) {
      std::fill_n(t->data<float>(), t->NumElements(), std::numeric_limits<float>::quiet_NaN());
    }
    return absl::OkStatus();
  }

  // y from x; in training, `mean` and `variance` receive the batch's.
  absl::Status Normalize(OpKernelContext& ctx, const std::array<int64_t, 4>& dims, Tensor* y,
                         Tensor* mean, Tensor* variance) {
    const Tensor& x = ctx.input(0);
    if (attrs_.format == DataFormat::kNCHW) {
      BatchNormForwardNCHW(ctx, {dims, x.data<float>(), ctx.input(1).data<float>(),
                                 ctx.input(2).data<float>(), attrs_.epsilon, attrs_.is_training,
                                 y->data<float>(), mean->data<float>(), variance->data<float>()});
      return absl::OkStatus();
    }
    return Guard("batch normalization", [&]() -> absl::Status {
      const int threads = UseIntraOpThreads(ctx);
      auto f = ForwardCache().Get(Key(threads, "fwd", dims, attrs_), [&] {
        BnForward e{ForwardPd(dims, attrs_), {}};
        e.primitive = dnnl::batch_normalization_forward(e.pd);
        return e;
      });
      const memory::desc vec = VectorDesc(dims[1]);
      return Execute(ctx, f->primitive,
                     {{DNNL_ARG_SRC, Memory(f->pd.src_desc(), x.raw_data())},
                      {DNNL_ARG_DST, Memory(f->pd.dst_desc(), y->raw_data())},
                      {DNNL_ARG_SCALE, Memory(vec, ctx.input(1).raw_data())},
                      {DNNL_ARG_SHIFT, Memory(vec, ctx.input(2).raw_data())},
                      {DNNL_ARG_MEAN, Memory(vec, mean->raw_data())},
                      {DNNL_ARG_VARIANCE, Memory(vec, variance->raw_data())}});
    });
  }

  // batch_mean = (1 - f) * old + f * mean, batch_variance likewise with the
  // variance times n / (n - 1) (n / 1 for a single value), as TensorFlow.
  void UpdateMovingStats(const OpKernelContext& ctx, int64_t n, const Tensor& mean,
                         const Tensor& variance, Tensor* moving_mean, Tensor* moving_var) {
    const double f = attrs_.exponential_avg_factor;
    const double bessel = static_cast<double>(n) / static_cast<double>(n > 1 ? n - 1 : 1);
    const bool blend = f != 1.0;
    const float* old_mean = blend ? ctx.input(3).data<float>() : nullptr;
    const float* old_var = blend ? ctx.input(4).data<float>() : nullptr;
    for (int64_t i = 0; i < mean.NumElements(); ++i) {
      const double m = mean.data<float>()[i];
      const double v = variance.data<float>()[i] * bessel;
      moving_mean->data<float>()[i] = static_cast<float>(blend ? (1 - f) * old_mean[i] + f * m : m);
      moving_var->data<float>()[i] = static_cast<float>(blend ? (1 - f) * old_var[i] + f * v : v);
    }
  }

  BatchNormAttrs attrs_;
};

class FusedBatchNormGradOp final : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ReadBatchNormAttrs(ctx, &attrs_));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& dy = ctx.input(0);
    const Tensor& x = ctx.input(1);
    TG_ASSIGN_OR_RETURN(const auto dims, NchwOf(x, "x", attrs_.format));
    const int64_t c = dims[1];
    TG_RETURN_IF_ERROR(CheckBatchNormGradInputs(ctx, c));
    Tensor *dx, *dscale, *doffset, *unused;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, x.shape(), &dx));
    TG_RETURN_IF_ERROR(ctx.allocate_output(1, {c}, &dscale));
    TG_RETURN_IF_ERROR(ctx.allocate_output(2, {c}, &doffset));
    TG_RETURN_IF_ERROR(ctx.allocate_output(3, {0}, &unused));
    TG_RETURN_IF_ERROR(ctx.allocate_output(4, {0}, &unused));
    if (x.NumElements() == 0) {
      std::fill_n(dscale->data<float>(), c, 0.f);
      std::fill_n(doffset->data<float>(), c, 0.f);
      return absl::OkStatus();
    }
    if (attrs_.format == DataFormat::kNCHW) {
      BatchNormBackwardNCHW(
          ctx,
          {dims, dy.data<float>(), x.data<float>(), ctx.input(2).data<float>(),
           ctx.input(3).data<float>(), ctx.input(4).data<float>(), attrs_.epsilon,
           attrs_.is_training, dx->data<float>(), dscale->data<float>(), doffset->data<float>()});
      return absl::OkStatus();
    }
    return Guard("batch normalization backward", [&]() -> absl::Status {
      const int threads = UseIntraOpThreads(ctx);
      auto b = BackwardCache().Get(Key(threads, "bwd", dims, attrs_),
                                   [&] { return MakeBackward(dims); });
      const memory::desc vec = VectorDesc(c);
      // oneDNN 2.6 wants the shift with use_shift, though the gradient
      // does not depend on it; FusedBatchNormGradV3 has no offset input.
      Tensor shift(DT_FLOAT, {c});
      std::fill_n(shift.data<float>(), c, 0.f);
      return Execute(ctx, b->primitive,
                     {{DNNL_ARG_SRC, Memory(b->pd.src_desc(), x.raw_data())},
                      {DNNL_ARG_SHIFT, Memory(vec, shift.raw_data())},
                      {DNNL_ARG_DIFF_DST, Memory(b->pd.diff_dst_desc(), dy.raw_data())},
                      {DNNL_ARG_MEAN, Memory(vec, ctx.input(3).raw_data())},
                      {DNNL_ARG_VARIANCE, Memory(vec, ctx.input(4).raw_data())},
                      {DNNL_ARG_SCALE, Memory(vec, ctx.input(2).raw_data())},
                      {DNNL_ARG_DIFF_SRC, Memory(b->pd.diff_src_desc(), dx->raw_data())},
                      {DNNL_ARG_DIFF_SCALE, Memory(vec, dscale->raw_data())},
                      {DNNL_ARG_DIFF_SHIFT, Memory(vec, doffset->raw_data())}});
    });
  }

 private:
  BnBackward MakeBackward(const std::array<int64_t, 4>& dims) const {
    const memory::desc data = ImageDesc(dims, attrs_.format);
    dnnl::batch_normalization_backward::desc desc(prop_kind::backward, data, data, attrs_.epsilon,
                                                  Flags(attrs_.is_training));
    BnBackward b;
    b.pd = {desc, UserScratchpad(), OneDnnCpuEngine(), ForwardPd(dims, attrs_)};
    b.primitive = dnnl::batch_normalization_backward(b.pd);
    return b;
  }

  BatchNormAttrs attrs_;
};

TG_REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormV3")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<float>("T")
                       .TypeConstraint<float>("U"),
                   FusedBatchNormOp);
TG_REGISTER_KERNEL(KernelDefBuilder("FusedBatchNormGradV3")
                       .Device(DEVICE_CPU)
                       .TypeConstraint<float>("T")
                       .TypeConstraint<float>("U"),
                   FusedBatchNormGradOp);

}  // namespace

absl::Status ReadBatchNormAttrs(OpKernelConstruction& ctx, BatchNormAttrs* a) {
  TG_RETURN_IF_ERROR(ctx.GetAttr("epsilon", &a->epsilon));
  if (!(a->epsilon >= 0)) return errors::InvalidArgument("epsilon must be >= 0, got ", a->epsilon);
  if (ctx.def().attr().count("exponential_avg_factor")) {
    TG_RETURN_IF_ERROR(ctx.GetAttr("exponential_avg_factor", &a->exponential_avg_factor));
  }
  std::string format;
  TG_RETURN_IF_ERROR(ctx.GetAttr("data_format", &format));
  TG_RETURN_IF_ERROR(ParseDataFormat(format, &a->format));
  return ctx.GetAttr("is_training", &a->is_training);
}

absl::StatusOr<std::array<int64_t, 4>> NchwOf(const Tensor& x, const char* what, DataFormat f) {
  if (x.dims() != 4) {
    return errors::InvalidArgument(what, " must be 4-D, got ", x.shape().DebugString());
  }
  const ImageAxes a = AxesOf(f);
  return std::array<int64_t, 4>{x.dim_size(a.batch), x.dim_size(a.channels), x.dim_size(a.rows),
                                x.dim_size(a.cols)};
}

absl::Status CheckChannelVector(const Tensor& t, const char* what, int64_t channels) {
  if (t.dims() == 1 && t.dim_size(0) == channels) return absl::OkStatus();
  return errors::InvalidArgument(what, " must be a vector of ", channels,
                                 " (one per channel), got shape ", t.shape().DebugString());
}

absl::Status CheckBatchNormInputs(const OpKernelContext& ctx, const BatchNormAttrs& a,
                                  int64_t channels) {
  TG_RETURN_IF_ERROR(CheckChannelVector(ctx.input(1), "scale", channels));
  TG_RETURN_IF_ERROR(CheckChannelVector(ctx.input(2), "offset", channels));
  const bool stats_unused = a.is_training && a.exponential_avg_factor == 1.f;
  for (int i : {3, 4}) {
    if (stats_unused && ctx.input(i).NumElements() == 0) continue;
    TG_RETURN_IF_ERROR(CheckChannelVector(ctx.input(i), i == 3 ? "mean" : "variance", channels));
  }
  return absl::OkStatus();
}

absl::Status CheckBatchNormGradInputs(const OpKernelContext& ctx, int64_t channels) {
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  if (dy.shape() != x.shape()) {
    return errors::InvalidArgument("y_backprop and x must have the same shape, got ",
                                   dy.shape().DebugString(), " and ", x.shape().DebugString());
  }
  TG_RETURN_IF_ERROR(CheckChannelVector(ctx.input(2), "scale", channels));
  TG_RETURN_IF_ERROR(CheckChannelVector(ctx.input(3), "reserve_space_1 (mean)", channels));
  return CheckChannelVector(ctx.input(4), "reserve_space_2 (variance)", channels);
}

}  // namespace nn
}  // namespace tensorgrid
