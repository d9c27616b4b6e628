// Device: one place kernels run (a CPU, later a GPU), with its full name
// ("/job:localhost/replica:0/task:0/device:CPU:0"), its resources, and the
// intra-op Eigen device kernels use for parallel math. Thread-safe.
#ifndef TENSORGRID_CORE_FRAMEWORK_DEVICE_H_
#define TENSORGRID_CORE_FRAMEWORK_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/framework/allocator.h"
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
  int64_t memory_limit = 0;  // bytes of device memory; 0 for host-only devices
  std::string description;   // "NVIDIA H100 80GB HBM3, compute capability 9.0"
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

  // Where this device's tensors of `type` come from: null means the host
  // heap, which is all a CPU device has. A GPU device returns its own memory
  // for DEVICE_MEMORY and pinned host memory for HOST_MEMORY.
  virtual Allocator* GetAllocator(MemoryType type) { return nullptr; }
  // Copies in and out of this device's memory (null: host-only device).
  virtual DeviceContext* device_context() { return nullptr; }
  // Called when a partition's step has queued all its work here: returns
  // once the device has finished it, with the first asynchronous error.
  virtual absl::Status Sync() { return absl::OkStatus(); }
  // What GetStatus/ListDevices report about this device.
  virtual DeviceInfo info() const {
    DeviceInfo info;
    info.name = name_;
    info.type = type_;
    info.incarnation = incarnation_;
    return info;
  }

 protected:
  Device(std::string name, std::string type, uint64_t incarnation)
      : name_(std::move(name)), type_(std::move(type)), incarnation_(incarnation) {}

 private:
  const std::string name_;
  const std::string type_;
  const uint64_t incarnation_;
  ResourceMgr resources_;
};

// A fresh random incarnation (never 0) for a device being created.
uint64_t NewDeviceIncarnation();

// A CPU device whose kernels use `intra_op_threads` threads (0: one per core).
std::unique_ptr<Device> NewCpuDevice(const std::string& name, int intra_op_threads);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_DEVICE_H_
