// DeviceMgr: the devices of one task. ConfigProto.device_count {"CPU": N}
// gives CPU:0..N-1, each a real device that runs its own partition, so
// multi-device behaviour is testable without GPUs; every registered device
// factory (device_factory.h: the GPU device when linked) adds its own.
// Thread-safe (immutable after construction).
#ifndef TENSORGRID_CORE_RUNTIME_DEVICE_MGR_H_
#define TENSORGRID_CORE_RUNTIME_DEVICE_MGR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/framework/device.h"
#include "proto/config.pb.h"

namespace tensorgrid {

class DeviceMgr {
 public:
  explicit DeviceMgr(std::vector<std::unique_ptr<Device>> devices);
  // The devices a task's config asks for: CPU:0..N-1 (N from device_count,
  // default 1), each with the config's intra-op thread count, then each
  // registered factory's. A factory's error (a malformed GPU option) leaves
  // its devices out and is kept in status().
  static std::unique_ptr<DeviceMgr> ForTask(const std::string& task_prefix,
                                            const ConfigProto& config);
  // OK, or why a device factory made no devices.
  const absl::Status& status() const { return status_; }

  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  // By full name, or by any spec that names exactly one device here
  // ("/device:CPU:1", "/cpu:1"). NotFound listing the devices otherwise;
  // InvalidArgument for a malformed name.
  absl::StatusOr<Device*> LookupDevice(const std::string& name) const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  absl::Status status_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_DEVICE_MGR_H_
