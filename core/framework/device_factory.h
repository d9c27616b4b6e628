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
#include "core/framework/device.h"
#include "proto/config.pb.h"

namespace tensorgrid {

// Appends the devices of its type that `config` asks for to `devices`,
// named `task_prefix` + "/device:<TYPE>:<k>". An error (a malformed
// option) names the option.
using DeviceFactory = std::function<absl::Status(
    const ConfigProto& config, const std::string& task_prefix,
    std::vector<std::unique_ptr<Device>>* devices)>;

// A second registration of a type replaces the first (tests swap factories).
void RegisterDeviceFactory(const std::string& type, DeviceFactory factory);
// Every registered factory by type.
std::map<std::string, DeviceFactory> DeviceFactories();

struct DeviceFactoryRegistrar {
  DeviceFactoryRegistrar(const std::string& type, DeviceFactory factory) {
    RegisterDeviceFactory(type, std::move(factory));
  }
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_DEVICE_FACTORY_H_
