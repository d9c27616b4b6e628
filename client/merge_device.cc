#include "client/merge_device.h"

#include "core/platform/status.h"

namespace tensorgrid {

ParsedDeviceName MergeDevice(const ParsedDeviceName& base, const ParsedDeviceName& request) {
  // Clear what the request sets, so that MergeDevNames only fills in.
  ParsedDeviceName merged = base;
  if (request.has_job) merged.has_job = false;
  if (request.has_replica) merged.has_replica = false;
  if (request.has_task) merged.has_task = false;
  if (request.has_type) merged.has_type = false;
  if (request.has_id) merged.has_id = false;
  DeviceNameUtils::MergeDevNames(&merged, request).IgnoreError();  // no part is set in both
  return merged;
}

absl::StatusOr<std::string> MergeDevice(absl::string_view base, absl::string_view request) {
  TG_ASSIGN_OR_RETURN(ParsedDeviceName parsed_base, DeviceNameUtils::Parse(base));
  TG_ASSIGN_OR_RETURN(ParsedDeviceName parsed_request, DeviceNameUtils::Parse(request));
  return DeviceNameUtils::ToString(MergeDevice(parsed_base, parsed_request));
}

}  // namespace tensorgrid
