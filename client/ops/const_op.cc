#include "client/ops/const_op.h"

#include "client/node_builder.h"

namespace tensorgrid {
namespace ops {

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!value.status.ok()) {
    scope.UpdateStatus(value.status);
    return Output();
  }
  return Output(NodeBuilder(scope, "Const")
                    .Attr("value", value.tensor)
                    .Attr("dtype", value.tensor.dtype())
                    .Finalize(),
                0);
}

}  // namespace ops
}  // namespace tensorgrid
