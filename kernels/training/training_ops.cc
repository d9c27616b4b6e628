// Optimizer updates, in place on the variable's device: ApplyGradientDescent,
// ApplyMomentum, ApplyAdagrad and ApplyAdam (ref variables, output the
// updated ref) and their Resource* twins (resource handles, no outputs).
// Names, inputs, attrs and update rules are TensorFlow's:
//
//   GradientDescent  var -= alpha * delta
//   Momentum         accum = accum * momentum + grad
//                    var -= lr * accum                                  (use_nesterov = false)
//                    var -= grad * lr + accum * momentum * lr           (use_nesterov = true)
//   Adagrad          accum += grad * grad                               (if update_slots)
//                    var -= lr * grad / sqrt(accum)
//   Adam             lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//                    m += (grad - m) * (1 - beta1)
//                    v += (grad * grad - v) * (1 - beta2)
//                    var -= m * lr_t / (sqrt(v) + epsilon)              (use_nesterov = false)
//                    var -= (grad * (1 - beta1) + beta1 * m) * lr_t / (sqrt(v) + epsilon)
//
// Each update is one Eigen expression per variable on the device's intra-op
// pool. Finding, checking and locking the variables (use_locking) is
// variable_update.h.
#define EIGEN_USE_THREADS

#include <cmath>

#include "core/framework/eigen_views.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/training/variable_update.h"

namespace tensorgrid {
namespace training {
namespace {

// What the four kernels share: use_locking, the variable lookup, and the
// ref forms' output (the updated variable).
template <typename T, bool kResource>
class ApplyOp : public OpKernel {
 public:
  explicit ApplyOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("use_locking", &use_locking_));
  }

  absl::Status Compute(OpKernelContext& ctx) final {
    TG_RETURN_IF_ERROR(Apply(ctx));
    if (!kResource) ctx.set_output_ref(0, ctx.input_ref(0));
    return absl::OkStatus();
  }

 protected:
  using Flat = EigenTensorMap<T, 1>;

  virtual absl::Status Apply(OpKernelContext& ctx) const = 0;

  // Runs `update` on the variables at `args` (see UpdateVariables).
  absl::Status Update(OpKernelContext& ctx, absl::Span<const VariableArg> args,
                      const std::function<absl::Status(absl::Span<Tensor>)>& update) const {
    return UpdateVariables(ctx, kResource, use_locking_, DataTypeToEnum<T>::value, args, update);
  }
  static T Scalar(const OpKernelContext& ctx, int input) { return ctx.input(input).scalar<T>(); }
  static Flat In(const OpKernelContext& ctx, int input) { return EigenFlat<T>(ctx.input(input)); }

 private:
  bool use_locking_ = false;
};

template <typename T, bool kResource>
class ApplyGradientDescentOp final : public ApplyOp<T, kResource> {
  using Base = ApplyOp<T, kResource>;

 public:
  using Base::Base;

 private:
  absl::Status Apply(OpKernelContext& ctx) const override {
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, "alpha"));
    const VariableArg args[] = {{0, "var"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 2, "delta", vars[0].shape()));
      const auto& d = ctx.eigen_cpu_device();
      EigenFlat<T>(vars[0]).device(d) -= Base::In(ctx, 2) * Base::Scalar(ctx, 1);
      return absl::OkStatus();
    });
  }
};

template <typename T, bool kResource>
class ApplyMomentumOp final : public ApplyOp<T, kResource> {
  using Base = ApplyOp<T, kResource>;

 public:
  explicit ApplyMomentumOp(OpKernelConstruction& ctx) : Base(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("use_nesterov", &use_nesterov_));
  }

 private:
  absl::Status Apply(OpKernelContext& ctx) const override {
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "lr"));
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 4, "momentum"));
    const VariableArg args[] = {{0, "var"}, {1, "accum"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 3, "grad", vars[0].shape()));
      const auto& d = ctx.eigen_cpu_device();
      auto var = EigenFlat<T>(vars[0]);
      auto accum = EigenFlat<T>(vars[1]);
      const auto grad = Base::In(ctx, 3);
      const T lr = Base::Scalar(ctx, 2);
      const T momentum = Base::Scalar(ctx, 4);
      accum.device(d) = accum * momentum + grad;
      if (use_nesterov_) {
        var.device(d) -= grad * lr + accum * momentum * lr;
      } else {
        var.device(d) -= accum * lr;
      }
      return absl::OkStatus();
    });
  }

  bool use_nesterov_ = false;
};

template <typename T, bool kResource>
class ApplyAdagradOp final : public ApplyOp<T, kResource> {
  using Base = ApplyOp<T, kResource>;

 public:
  explicit ApplyAdagradOp(OpKernelConstruction& ctx) : Base(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("update_slots", &update_slots_));
  }

 private:
  absl::Status Apply(OpKernelContext& ctx) const override {
    TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "lr"));
    const VariableArg args[] = {{0, "var"}, {1, "accum"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 3, "grad", vars[0].shape()));
      const auto& d = ctx.eigen_cpu_device();
      auto var = EigenFlat<T>(vars[0]);
      auto accum = EigenFlat<T>(vars[1]);
      const auto grad = Base::In(ctx, 3);
      if (update_slots_) accum.device(d) += grad.square();
      var.device(d) -= grad * Base::Scalar(ctx, 2) * accum.rsqrt();
      return absl::OkStatus();
    });
  }

  bool update_slots_ = true;
};

template <typename T, bool kResource>
class ApplyAdamOp final : public ApplyOp<T, kResource> {
  using Base = ApplyOp<T, kResource>;

 public:
  explicit ApplyAdamOp(OpKernelConstruction& ctx) : Base(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("use_nesterov", &use_nesterov_));
  }

 private:
  absl::Status Apply(OpKernelContext& ctx) const override {
    static constexpr const char* kScalars[] = {"beta1_power", "beta2_power", "lr",
                                               "beta1",       "beta2",       "epsilon"};
    for (int i = 0; i < 6; ++i) TG_RETURN_IF_ERROR(CheckScalarInput(ctx, 3 + i, kScalars[i]));
    const VariableArg args[] = {{0, "var"}, {1, "m"}, {2, "v"}};
    return this->Update(ctx, args, [&](absl::Span<Tensor> vars) {
      TG_RETURN_IF_ERROR(CheckInputShape(ctx, 9, "grad", vars[0].shape()));
      const auto& d = ctx.eigen_cpu_device();
      auto var = EigenFlat<T>(vars[0]);
      auto m = EigenFlat<T>(vars[1]);
      auto v = EigenFlat<T>(vars[2]);
      const auto grad = Base::In(ctx, 9);
      const T beta1_power = Base::Scalar(ctx, 3), beta2_power = Base::Scalar(ctx, 4);
      const T lr = Base::Scalar(ctx, 5), beta1 = Base::Scalar(ctx, 6);
      const T beta2 = Base::Scalar(ctx, 7), epsilon = Base::Scalar(ctx, 8);
      const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
      m.device(d) += (grad - m) * (T(1) - beta1);
      v.device(d) += (grad.square() - v) * (T(1) - beta2);
      if (use_nesterov_) {
        var.device(d) -= ((grad * (T(1) - beta1) + m * beta1) * alpha) / (v.sqrt() + epsilon);
      } else {
        var.device(d) -= (m * alpha) / (v.sqrt() + epsilon);
      }
      return absl::OkStatus();
    });
  }

  bool use_nesterov_ = false;
};

}  // namespace

TG_REGISTER_KERNEL(KernelDefBuilder("ApplyGradientDescent").TypeConstraint<float>("T"),
                   ApplyGradientDescentOp<float, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ApplyGradientDescent").TypeConstraint<double>("T"),
                   ApplyGradientDescentOp<double, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyGradientDescent").TypeConstraint<float>("T"),
                   ApplyGradientDescentOp<float, true>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyGradientDescent").TypeConstraint<double>("T"),
                   ApplyGradientDescentOp<double, true>);

TG_REGISTER_KERNEL(KernelDefBuilder("ApplyMomentum").TypeConstraint<float>("T"),
                   ApplyMomentumOp<float, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ApplyMomentum").TypeConstraint<double>("T"),
                   ApplyMomentumOp<double, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyMomentum").TypeConstraint<float>("T"),
                   ApplyMomentumOp<float, true>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyMomentum").TypeConstraint<double>("T"),
                   ApplyMomentumOp<double, true>);

TG_REGISTER_KERNEL(KernelDefBuilder("ApplyAdagrad").TypeConstraint<float>("T"),
                   ApplyAdagradOp<float, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ApplyAdagrad").TypeConstraint<double>("T"),
                   ApplyAdagradOp<double, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyAdagrad").TypeConstraint<float>("T"),
                   ApplyAdagradOp<float, true>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyAdagrad").TypeConstraint<double>("T"),
                   ApplyAdagradOp<double, true>);

TG_REGISTER_KERNEL(KernelDefBuilder("ApplyAdam").TypeConstraint<float>("T"),
                   ApplyAdamOp<float, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ApplyAdam").TypeConstraint<double>("T"),
                   ApplyAdamOp<double, false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyAdam").TypeConstraint<float>("T"),
                   ApplyAdamOp<float, true>);
TG_REGISTER_KERNEL(KernelDefBuilder("ResourceApplyAdam").TypeConstraint<double>("T"),
                   ApplyAdamOp<double, true>);

}  // namespace training
}  // namespace tensorgrid
