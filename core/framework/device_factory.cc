#include "core/framework/device_factory.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {
struct Registered {
  DeviceFactory factory;
  DeviceCounter counter;
};
absl::Mutex registry_mu(absl::kConstInit);
std::map<std::string, Registered>& Registry() {
  static auto* registry = new std::map<std::string, Registered>;
  return *registry;
}
}  // namespace

void RegisterDeviceFactory(const std::string& type, DeviceFactory factory, DeviceCounter counter) {
  absl::MutexLock lock(&registry_mu);
  Registry()[type] = Registered{std::move(factory), std::move(counter)};
}

std::map<std::string, DeviceFactory> DeviceFactories() {
  absl::MutexLock lock(&registry_mu);
  std::map<std::string, DeviceFactory> factories;
  for (const auto& [type, registered] : Registry()) factories.emplace(type, registered.factory);
  return factories;
}

int CpuDeviceCount(const ConfigProto& config) {
  auto it = config.device_count().find(DEVICE_CPU);
  return it == config.device_count().end() ? 1 : std::max(it->second, 1);
}

absl::StatusOr<int> LocalDeviceCount(const std::string& type, const ConfigProto& config) {
  if (type == DEVICE_CPU) return CpuDeviceCount(config);
  Registered registered;
  {
    absl::MutexLock lock(&registry_mu);
    auto it = Registry().find(type);
    if (it == Registry().end()) return 0;
    registered = it->second;
  }
  if (registered.counter != nullptr) return registered.counter(config);
  std::vector<std::unique_ptr<Device>> devices;
  TG_RETURN_IF_ERROR(registered.factory(config, "/job:localhost/replica:0/task:0", &devices));
  return static_cast<int>(devices.size());
}

}  // namespace tensorgrid
