#include "client/ops/random_ops.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {
namespace internal {

RandomOp::RandomOp(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs,
                   const char* op_type) {
  operation = NodeBuilder(scope, op_type)
                  .Input(shape)
                  .Attr("dtype", dtype)
                  .Attr("seed", attrs.seed_)
                  .Attr("seed2", attrs.seed2_)
                  .Finalize();
  output = Output(operation, 0);
}

}  // namespace internal
}  // namespace ops
}  // namespace tensorgrid
