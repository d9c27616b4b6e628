// DeviceMgr: the devices of one task. ConfigProto.device_count {"CPU": N}
// gives CPU:0..N-1, each a real device that runs its own partition, so
// multi-device behaviour is testable without GPUs. Thread-safe (immutable
// after construction).
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
  // default 1), each with the config's intra-op thread count.
  static std::unique_ptr<DeviceMgr> ForTask(const std::string& task_prefix,
                                            const ConfigProto& config);

  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  // By full name, or by any spec that names exactly one device here
  // ("/device:CPU:1", "/cpu:1"). NotFound listing the devices otherwise;
  // InvalidArgument for a malformed name.
  absl::StatusOr<Device*> LookupDevice(const std::string& name) const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_RUNTIME_DEVICE_MGR_H_
