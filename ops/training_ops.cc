// Training op definitions: the optimizer updates. Kernels: kernels/training/.
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"

namespace tensorgrid {
namespace {

TG_REGISTER_OP("ApplyGradientDescent")
    .Input("var: Ref(T)")
    .Input("alpha: T")
    .Input("delta: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
var -= alpha * delta

Updates a reference variable; `out` is the updated `var`.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
)doc");

TG_REGISTER_OP("ResourceApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
var -= alpha * delta

On resource variables; no outputs: run it as a target.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
)doc");

TG_REGISTER_OP("ApplyMomentum")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
accum = accum * momentum + grad; var -= lr * accum
(Nesterov: var -= grad * lr + accum * momentum * lr)

Updates a reference variable; `out` is the updated `var`.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
use_nesterov: Nesterov momentum.
)doc");

TG_REGISTER_OP("ResourceApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
accum = accum * momentum + grad; var -= lr * accum
(Nesterov: var -= grad * lr + accum * momentum * lr)

On resource variables; no outputs: run it as a target.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
use_nesterov: Nesterov momentum.
)doc");

TG_REGISTER_OP("ApplyAdagrad")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
accum += grad * grad; var -= lr * grad / sqrt(accum)

Updates a reference variable; `out` is the updated `var`.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
update_slots: Add grad^2 to the accumulator before the update.
)doc");

TG_REGISTER_OP("ResourceApplyAdagrad")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetIsStateful()
    .Doc(R"doc(
accum += grad * grad; var -= lr * grad / sqrt(accum)

On resource variables; no outputs: run it as a target.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
update_slots: Add grad^2 to the accumulator before the update.
)doc");

TG_REGISTER_OP("ApplyAdam")
    .Input("var: Ref(T)")
    .Input("m: Ref(T)")
    .Input("v: Ref(T)")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(R"doc(
lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2)
var -= lr_t * m / (sqrt(v) + epsilon)
(Nesterov: var -= (grad * (1 - beta1) + beta1 * m) * lr_t / (sqrt(v) + epsilon))

Updates a reference variable; `out` is the updated `var`.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
use_nesterov: Nesterov momentum.
)doc");

TG_REGISTER_OP("ResourceApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {float, double}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetIsStateful()
    .Doc(R"doc(
lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2)
var -= lr_t * m / (sqrt(v) + epsilon)
(Nesterov: var -= (grad * (1 - beta1) + beta1 * m) * lr_t / (sqrt(v) + epsilon))

On resource variables; no outputs: run it as a target.

use_locking: Hold the variables' locks for the whole update, so concurrent
  steps never lose an update.
use_nesterov: Nesterov momentum.
)doc");

}  // namespace
}  // namespace tensorgrid
