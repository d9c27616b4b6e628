#include "client/gradients/grad_op_registry.h"

#include <cstdio>
#include <cstdlib>

namespace tensorgrid {

GradOpRegistry* GradOpRegistry::Global() {
  static GradOpRegistry* registry = new GradOpRegistry;
  return registry;
}

void GradOpRegistry::Register(const std::string& op, GradFunc func) {
  absl::MutexLock lock(&mu_);
  if (!funcs_.emplace(op, func).second) {
    std::fprintf(stderr, "a gradient is already registered for op '%s'\n", op.c_str());
    std::abort();
  }
}

void GradOpRegistry::RegisterNoGradient(const std::string& op) { Register(op, nullptr); }

GradFunc GradOpRegistry::Lookup(absl::string_view op) const {
  absl::MutexLock lock(&mu_);
  auto it = funcs_.find(op);
  return it == funcs_.end() ? nullptr : it->second;
}

bool GradOpRegistry::HasNoGradient(absl::string_view op) const {
  absl::MutexLock lock(&mu_);
  auto it = funcs_.find(op);
  return it != funcs_.end() && it->second == nullptr;
}

GradOpRegistrar::GradOpRegistrar(const std::string& op, GradFunc func) {
  GradOpRegistry::Global()->Register(op, func);
}

GradOpRegistrar::GradOpRegistrar(const std::string& op) {
  GradOpRegistry::Global()->RegisterNoGradient(op);
}

}  // namespace tensorgrid
