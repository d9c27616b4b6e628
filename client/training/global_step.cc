#include "client/training/global_step.h"

#include <vector>

#include "core/platform/status.h"

namespace tensorgrid {
namespace training {

absl::StatusOr<Variable> CreateGlobalStep(const Scope& scope) {
  TG_RETURN_IF_ERROR(scope.status());
  absl::StatusOr<Variable> existing = GetGlobalStep(scope);
  if (existing.ok()) {
    return errors::AlreadyExists("the graph already has a global step: '", existing->name(), "'");
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  VariableOptions options;
  options.trainable = false;
  options.collections = {kGlobalStep};
  Variable step(scope, "global_step", TensorShape({}), DT_INT64, Zeros(), options);
  TG_RETURN_IF_ERROR(scope.status());
  return step;
}

absl::StatusOr<Variable> GetGlobalStep(const Scope& scope) {
  TG_RETURN_IF_ERROR(scope.status());
  std::vector<Variable> steps = GetCollection(scope, kGlobalStep);
  if (steps.empty()) return errors::NotFound("the graph has no global step");
  if (steps.size() > 1) {
    return errors::InvalidArgument("the graph has ", steps.size(), " global steps: '",
                                   steps[0].name(), "', '", steps[1].name(), "'");
  }
  const Variable& step = steps[0];
  if ((step.dtype() != DT_INT64 && step.dtype() != DT_INT32) || step.shape().dims() != 0) {
    return errors::InvalidArgument("global step '", step.name(), "' must be an int32 or int64 ",
                                   "scalar, not ", DataTypeString(step.dtype()), " ",
                                   step.shape().DebugString());
  }
  return step;
}

Variable GetOrCreateGlobalStep(const Scope& scope) {
  absl::StatusOr<Variable> step = GetGlobalStep(scope);
  if (absl::IsNotFound(step.status())) step = CreateGlobalStep(scope);
  if (!step.ok()) {
    scope.UpdateStatus(step.status());
    return Variable();
  }
  return *std::move(step);
}

}  // namespace training
}  // namespace tensorgrid
