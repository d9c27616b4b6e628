// Device names: parse, print, merge, match and order
// "/job:<name>/replica:<r>/task:<t>/device:<TYPE>:<id>".
//
// Every part is optional when a device is *requested* and all parts are set
// once it is *assigned*. Parts come in that order, each at most once; "*"
// (job, replica, task, type or id) means "unset"; the legacy "/cpu:0" and
// "/gpu:1" spell "/device:CPU:0" and "/device:GPU:1". Device types are upper
// case ("/device:gpu:0" parses as GPU). "" and "/" leave everything unset.
//
//   TG_ASSIGN_OR_RETURN(ParsedDeviceName want, DeviceNameUtils::Parse("/job:ps/cpu:0"));
//   TG_ASSIGN_OR_RETURN(ParsedDeviceName have, DeviceNameUtils::Parse(device->name()));
//   if (DeviceNameUtils::IsSpecification(want, have)) { ... }   // have satisfies want
//   DeviceNameUtils::ToString(want);  // "/job:ps/device:CPU:0"
#ifndef TENSORGRID_CORE_FRAMEWORK_DEVICE_NAME_H_
#define TENSORGRID_CORE_FRAMEWORK_DEVICE_NAME_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {

// A device name split into its parts; a part's value means nothing unless
// its has_* flag is set.
struct ParsedDeviceName {
  bool has_job = false;
  std::string job;
  bool has_replica = false;
  int replica = 0;
  bool has_task = false;
  int task = 0;
  bool has_type = false;
  std::string type;
  bool has_id = false;
  int id = 0;

  // All five parts set: the name of one concrete device.
  bool IsFullySpecified() const { return has_job && has_replica && has_task && has_type && has_id; }
  // Nothing set: matches every device.
  bool IsEmpty() const { return !has_job && !has_replica && !has_task && !has_type && !has_id; }
};

// Same parts set, with the same values.
bool operator==(const ParsedDeviceName& a, const ParsedDeviceName& b);
inline bool operator!=(const ParsedDeviceName& a, const ParsedDeviceName& b) { return !(a == b); }
// Orders by job, replica, task, type, id (an unset part before a set one;
// numbers numerically, so task:2 < task:10).
bool operator<(const ParsedDeviceName& a, const ParsedDeviceName& b);

class DeviceNameUtils {
 public:
  // InvalidArgument quoting the whole name and saying which part is wrong:
  //   device name '/job:ps/task:x' is malformed: task must be a non-negative integer, got 'x'
  static absl::StatusOr<ParsedDeviceName> Parse(absl::string_view name);

  // The set parts in canonical order: "/job:a/replica:0/task:1/device:CPU:0";
  // "" when nothing is set.
  static std::string ToString(const ParsedDeviceName& name);
  static std::string FullName(absl::string_view job, int replica, int task, absl::string_view type,
                              int id);
  // The address-space part of a name: "/job:ps/replica:0/task:0" (only the
  // set parts among job, replica and task).
  static std::string TaskName(const ParsedDeviceName& name);
  // The task of device `name` ("/job:ps/replica:0/task:0" for its CPU:0);
  // `name` itself when it does not parse.
  static std::string TaskName(absl::string_view name);
  // `name` with type and id cleared.
  static ParsedDeviceName AddressSpace(const ParsedDeviceName& name);

  // Merges `other`'s set parts into `target`. A part set in both to different
  // values is InvalidArgument naming both names — except that with
  // `allow_soft_placement`, a conflicting type or id drops target's type and
  // id instead (job, replica and task conflicts always fail). On error
  // `target` is unchanged.
  static absl::Status MergeDevNames(ParsedDeviceName* target, const ParsedDeviceName& other,
                                    bool allow_soft_placement = false);
  // Whether MergeDevNames(a, b) would succeed without soft placement.
  static bool AreCompatibleDevNames(const ParsedDeviceName& a, const ParsedDeviceName& b);

  // Every part set in `spec` is set in `name` to the same value, i.e. `name`
  // satisfies the request `spec`.
  static bool IsSpecification(const ParsedDeviceName& spec, const ParsedDeviceName& name);
  // IsSpecification, and `name` is fully specified (a concrete device).
  static bool IsCompleteSpecification(const ParsedDeviceName& spec, const ParsedDeviceName& name);
  // Same job, replica and task, all set in both: one process.
  static bool IsSameAddressSpace(const ParsedDeviceName& a, const ParsedDeviceName& b);
  static bool IsSameAddressSpace(absl::string_view a, absl::string_view b);

  // Strict weak order on name strings: names that do not parse first (by
  // string), then by operator< on the parsed names. Sorting device lists with
  // it puts CPU:2 before CPU:10.
  static bool CompareFullNames(absl::string_view a, absl::string_view b);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_DEVICE_NAME_H_
