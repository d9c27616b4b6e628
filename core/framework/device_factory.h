// Device factories: the libraries that add a device type (the GPU device in
// devices/gpu, the fake GPU of tests) register a factory at static
// initialization; DeviceMgr::ForTask asks each for its devices. CPU devices
// are built in. Thread-safe.
#ifndef TENSORGRID_CORE_FRAMEWORK_DEVICE_FACTORY_H_
#define TENSORGRID_CORE_FRAMEWORK_DEVICE_FACTORY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/framework/device.h"
#include "proto/config.pb.h"

namespace tensorgrid {

// Appends the devices of its type that `config` asks for to `devices`,
// named `task_prefix` + "/device:<TYPE>:<k>". An error (a malformed
// option) names the option.
using DeviceFactory =
    std::function<absl::Status(const ConfigProto& config, const std::string& task_prefix,
                               std::vector<std::unique_ptr<Device>>* devices)>;

// How many devices of its type the factory would make for `config`,
// without making them (setting up a GPU takes a while). An error names the
// malformed option, as the factory's would.
using DeviceCounter = std::function<absl::StatusOr<int>(const ConfigProto& config)>;

// A second registration of a type replaces the first (tests swap factories).
// Without a counter, counting makes the devices and drops them.
void RegisterDeviceFactory(const std::string& type, DeviceFactory factory,
                           DeviceCounter counter = nullptr);
// Every registered factory by type.
std::map<std::string, DeviceFactory> DeviceFactories();

// The CPU devices `config` gives a task: device_count {"CPU": N}, at least
// one (one when unset).
int CpuDeviceCount(const ConfigProto& config);

// How many devices of `type` a task of this process has under `config`:
// CPUs as device_count {"CPU": N} says (default 1), other types as their
// factory would make them (0 when none is registered). For what defaults
// to every local GPU, as TensorFlow's MirroredStrategy does.
absl::StatusOr<int> LocalDeviceCount(const std::string& type, const ConfigProto& config);

struct DeviceFactoryRegistrar {
  DeviceFactoryRegistrar(const std::string& type, DeviceFactory factory,
                         DeviceCounter counter = nullptr) {
    RegisterDeviceFactory(type, std::move(factory), std::move(counter));
  }
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_DEVICE_FACTORY_H_
