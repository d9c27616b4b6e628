#include "core/framework/device_factory.h"

#include "absl/synchronization/mutex.h"

namespace tensorgrid {

namespace {
absl::Mutex registry_mu(absl::kConstInit);
std::map<std::string, DeviceFactory>& Registry() {
  static auto* registry = new std::map<std::string, DeviceFactory>;
  return *registry;
}
}  // namespace

void RegisterDeviceFactory(const std::string& type, DeviceFactory factory) {
  absl::MutexLock lock(&registry_mu);
  Registry()[type] = std::move(factory);
}

std::map<std::string, DeviceFactory> DeviceFactories() {
  absl::MutexLock lock(&registry_mu);
  return Registry();
}

}  // namespace tensorgrid
