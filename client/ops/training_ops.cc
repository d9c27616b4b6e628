#include "client/ops/training_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {

ApplyGradientDescent::ApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta,
                                           const Attrs& attrs) {
  operation = NodeBuilder(scope, "ApplyGradientDescent")
                  .Input(var)
                  .Input(alpha)
                  .Input(delta)
                  .Attr("use_locking", attrs.use_locking_)
                  .Finalize();
  out = Output(operation, 0);
}

ResourceApplyGradientDescent::ResourceApplyGradientDescent(const Scope& scope, Input var,
                                                           Input alpha, Input delta,
                                                           const Attrs& attrs) {
  operation = NodeBuilder(scope, "ResourceApplyGradientDescent")
                  .Input(var)
                  .Input(alpha)
                  .Input(delta)
                  .Attr("use_locking", attrs.use_locking_)
                  .Finalize();
}

ApplyMomentum::ApplyMomentum(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                             Input momentum, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ApplyMomentum")
                  .Input(var)
                  .Input(accum)
                  .Input(lr)
                  .Input(grad)
                  .Input(momentum)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("use_nesterov", attrs.use_nesterov_)
                  .Finalize();
  out = Output(operation, 0);
}

ResourceApplyMomentum::ResourceApplyMomentum(const Scope& scope, Input var, Input accum, Input lr,
                                             Input grad, Input momentum, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ResourceApplyMomentum")
                  .Input(var)
                  .Input(accum)
                  .Input(lr)
                  .Input(grad)
                  .Input(momentum)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("use_nesterov", attrs.use_nesterov_)
                  .Finalize();
}

ApplyAdagrad::ApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                           const Attrs& attrs) {
  operation = NodeBuilder(scope, "ApplyAdagrad")
                  .Input(var)
                  .Input(accum)
                  .Input(lr)
                  .Input(grad)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("update_slots", attrs.update_slots_)
                  .Finalize();
  out = Output(operation, 0);
}

ResourceApplyAdagrad::ResourceApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr,
                                           Input grad, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ResourceApplyAdagrad")
                  .Input(var)
                  .Input(accum)
                  .Input(lr)
                  .Input(grad)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("update_slots", attrs.update_slots_)
                  .Finalize();
}

ApplyAdam::ApplyAdam(const Scope& scope, Input var, Input m, Input v, Input beta1_power,
                     Input beta2_power, Input lr, Input beta1, Input beta2, Input epsilon,
                     Input grad, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ApplyAdam")
                  .Input(var)
                  .Input(m)
                  .Input(v)
                  .Input(beta1_power)
                  .Input(beta2_power)
                  .Input(lr)
                  .Input(beta1)
                  .Input(beta2)
                  .Input(epsilon)
                  .Input(grad)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("use_nesterov", attrs.use_nesterov_)
                  .Finalize();
  out = Output(operation, 0);
}

ResourceApplyAdam::ResourceApplyAdam(const Scope& scope, Input var, Input m, Input v,
                                     Input beta1_power, Input beta2_power, Input lr, Input beta1,
                                     Input beta2, Input epsilon, Input grad, const Attrs& attrs) {
  operation = NodeBuilder(scope, "ResourceApplyAdam")
                  .Input(var)
                  .Input(m)
                  .Input(v)
                  .Input(beta1_power)
                  .Input(beta2_power)
                  .Input(lr)
                  .Input(beta1)
                  .Input(beta2)
                  .Input(epsilon)
                  .Input(grad)
                  .Attr("use_locking", attrs.use_locking_)
                  .Attr("use_nesterov", attrs.use_nesterov_)
                  .Finalize();
}

}  // namespace ops
}  // namespace tensorgrid
