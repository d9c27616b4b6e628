#include "core/runtime/device_mgr.h"

#include "absl/strings/str_join.h"
#include "core/framework/device_factory.h"
#include "core/framework/device_name.h"
#include "core/platform/status.h"

namespace tensorgrid {

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> devices) : devices_(std::move(devices)) {}

std::unique_ptr<DeviceMgr> DeviceMgr::ForTask(const std::string& task_prefix,
                                              const ConfigProto& config) {
  const int cpus = CpuDeviceCount(config);
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < cpus; ++i) {
    devices.push_back(NewCpuDevice(absl::StrCat(task_prefix, "/device:CPU:", i),
                                   config.intra_op_parallelism_threads()));
  }
  absl::Status status;
  for (const auto& [type, factory] : DeviceFactories()) {
    std::vector<std::unique_ptr<Device>> more;
    absl::Status s = factory(config, task_prefix, &more);
    if (!s.ok()) {
      if (status.ok()) status = WithContext(s, absl::StrCat(type, " devices of ", task_prefix));
      continue;
    }
    for (auto& d : more) devices.push_back(std::move(d));
  }
  auto mgr = std::make_unique<DeviceMgr>(std::move(devices));
  mgr->status_ = std::move(status);
  return mgr;
}

absl::StatusOr<Device*> DeviceMgr::LookupDevice(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& d : devices_) {
    if (d->name() == name) return d.get();
    names.push_back(d->name());
  }
  TG_ASSIGN_OR_RETURN(ParsedDeviceName spec, DeviceNameUtils::Parse(name));
  Device* match = nullptr;
  int matches = 0;
  for (const auto& d : devices_) {
    auto parsed = DeviceNameUtils::Parse(d->name());
    if (parsed.ok() && DeviceNameUtils::IsSpecification(spec, *parsed)) {
      match = d.get();
      ++matches;
    }
  }
  if (matches == 1) return match;
  return errors::NotFound("device '", name, "' ",
                          matches == 0 ? "does not exist here" : "is ambiguous here",
                          "; devices: ", absl::StrJoin(names, ", "));
}

}  // namespace tensorgrid
