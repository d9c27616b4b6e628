// Gradients of the state ops: a resource variable read passes its gradient
// to the variable's handle, so the gradient "of a resource variable" is the
// one AddSymbolicGradients returns for its VarHandleOp output.
#include <vector>

#include "client/gradients/grad_op_registry.h"

namespace tensorgrid {
namespace {

absl::Status ReadVariableOpGrad(const Scope& scope, const ForwardOp& op,
                                const std::vector<Output>& dy, std::vector<Output>* dx) {
  dx->push_back(dy[0]);
  return absl::OkStatus();
}
TG_REGISTER_GRADIENT("ReadVariableOp", ReadVariableOpGrad);

}  // namespace
}  // namespace tensorgrid
