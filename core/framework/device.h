// Device: one place kernels run (a CPU, later a GPU), with its full name
// ("/job:localhost/replica:0/task:0/device:CPU:0"), its resources, and the
// intra-op Eigen device kernels use for parallel math. Thread-safe.
#ifndef TENSORGRID_CORE_FRAMEWORK_DEVICE_H_
#define TENSORGRID_CORE_FRAMEWORK_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/framework/resource_mgr.h"
#include "core/platform/env.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace tensorgrid {

inline constexpr char DEVICE_CPU[] = "CPU";
inline constexpr char DEVICE_GPU[] = "GPU";

// What a task says about one of its devices (GetStatus, ListDevices).
struct DeviceInfo {
  std::string name;  // full name
  std::string type;  // "CPU", "GPU"
  uint64_t incarnation = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  const std::string& name() const { return name_; }
  const std::string& device_type() const { return type_; }
  // Changes whenever the process restarts; lets peers detect a restarted task.
  uint64_t incarnation() const { return incarnation_; }
  ResourceMgr* resource_manager() { return &resources_; }
  // The device kernels use for Eigen expressions (multi-threaded).
  virtual const Eigen::ThreadPoolDevice& eigen_cpu_device() const = 0;

 protected:
  Device(std::string name, std::string type, uint64_t incarnation)
      : name_(std::move(name)), type_(std::move(type)), incarnation_(incarnation) {}

 private:
  const std::string name_;
  const std::string type_;
  const uint64_t incarnation_;
  ResourceMgr resources_;
};

// A CPU device whose kernels use `intra_op_threads` threads (0: one per core).
std::unique_ptr<Device> NewCpuDevice(const std::string& name, int intra_op_threads);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_DEVICE_H_
