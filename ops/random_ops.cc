// Random op definitions: tensors of random values. Kernels: kernels/random/.
#include <cstdint>
#include <vector>

#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// The output's shape is `shape` (its rank when only its length is known).
absl::Status RandomShapeFn(ShapeInferenceContext& c) {
  PartialTensorShape shape;
  TG_RETURN_IF_ERROR(shape_fns::ShapeFromShapeInput(c, 0, &shape));
  c.set_output(0, shape);
  return absl::OkStatus();
}

TG_REGISTER_OP("RandomUniform")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShapeFn)
    .Doc(R"doc(
Uniform in [0, 1).

shape: The output's shape, a 1-D int32 or int64 tensor.
dtype: The output's type.
seed: With seed and seed2 both 0 every run draws fresh values; otherwise
  the sequence is fixed by the pair.
seed2: The second seed.
)doc");

TG_REGISTER_OP("RandomStandardNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShapeFn)
    .Doc(R"doc(
Normal with mean 0 and standard deviation 1.

shape: The output's shape, a 1-D int32 or int64 tensor.
dtype: The output's type.
seed: With seed and seed2 both 0 every run draws fresh values; otherwise
  the sequence is fixed by the pair.
seed2: The second seed.
)doc");

TG_REGISTER_OP("TruncatedNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShapeFn)
    .Doc(R"doc(
Normal with mean 0 and standard deviation 1, redrawn beyond 2 deviations.

shape: The output's shape, a 1-D int32 or int64 tensor.
dtype: The output's type.
seed: With seed and seed2 both 0 every run draws fresh values; otherwise
  the sequence is fixed by the pair.
seed2: The second seed.
)doc");

}  // namespace
}  // namespace tensorgrid
