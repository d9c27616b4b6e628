// MergeDevice: a device request laid over a default, part by part, as
// TensorFlow's `tf.device` merges nested device specs and a device function's
// result with what a node already asks for.
//
//   MergeDevice("/job:ps/task:0", "/device:CPU:1");     // "/job:ps/task:0/device:CPU:1"
//   MergeDevice("/job:worker/task:0", "/task:1");       // "/job:worker/task:1"
//   MergeDevice("/job:worker", "");                     // "/job:worker"
//
// Each of the five parts (job, replica, task, type, id) is taken from
// `request` when it sets it, else from `base`; so the request wins every
// conflict and never fails to merge.
#ifndef TENSORGRID_CLIENT_MERGE_DEVICE_H_
#define TENSORGRID_CLIENT_MERGE_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/device_name.h"

namespace tensorgrid {

ParsedDeviceName MergeDevice(const ParsedDeviceName& base, const ParsedDeviceName& request);
// The same on names; InvalidArgument (DeviceNameUtils::Parse's) when either
// does not parse.
absl::StatusOr<std::string> MergeDevice(absl::string_view base, absl::string_view request);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_MERGE_DEVICE_H_
