#include "core/framework/device_name.h"

#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// The parts in the order they must appear; a part's rank is its index + 1.
constexpr const char* kPartNames[] = {"job", "replica", "task", "device"};

template <typename... Args>
absl::Status Malformed(absl::string_view name, const Args&... why) {
  return errors::InvalidArgument("device name '", name, "' is malformed: ", why...);
}

// A letter, then letters, digits and '_' (job names, device types).
bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Parses `text` ("*" or a non-negative int) into *has / *value.
absl::Status ParseIndex(absl::string_view name, absl::string_view what, absl::string_view text,
                        bool* has, int* value) {
  if (text == "*") {
    *has = false;
    return absl::OkStatus();
  }
  bool digits = !text.empty();
  for (char c : text) digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
  if (!digits || !absl::SimpleAtoi(text, value)) {
    return Malformed(name, what, " must be a non-negative integer, got '", text, "'");
  }
  *has = true;
  return absl::OkStatus();
}

absl::Status ParseType(absl::string_view name, absl::string_view text, ParsedDeviceName* out) {
  if (text == "*") {
    out->has_type = false;
    return absl::OkStatus();
  }
  if (!IsIdentifier(text)) {
    return Malformed(name, "device type must be a letter followed by letters, digits or '_', got '",
                     text, "'");
  }
  out->has_type = true;
  out->type = absl::AsciiStrToUpper(text);
  return absl::OkStatus();
}

// "/device:" followed by "TYPE", "TYPE:ID", "TYPE:*", "*" or "*:ID".
absl::Status ParseDevicePart(absl::string_view name, absl::string_view value,
                             ParsedDeviceName* out) {
  const size_t colon = value.find(':');
  TG_RETURN_IF_ERROR(ParseType(name, value.substr(0, colon), out));
  if (colon == absl::string_view::npos) return absl::OkStatus();
  return ParseIndex(name, "device id", value.substr(colon + 1), &out->has_id, &out->id);
}

// Which part `key` names: 1..4 (job..device), 0 if none. *legacy is set for
// "/cpu:0"-style parts.
int PartRank(absl::string_view key, bool* legacy) {
  *legacy = false;
  for (int i = 0; i < 4; ++i) {
    if (key == kPartNames[i]) return i + 1;
  }
  const std::string lower = absl::AsciiStrToLower(key);
  if (lower == "cpu" || lower == "gpu") {
    *legacy = true;
    return 4;
  }
  return 0;
}

auto Key(const ParsedDeviceName& n) {
  return std::make_tuple(n.has_job, n.has_job ? n.job : std::string(), n.has_replica,
                         n.has_replica ? n.replica : 0, n.has_task, n.has_task ? n.task : 0,
                         n.has_type, n.has_type ? n.type : std::string(), n.has_id,
                         n.has_id ? n.id : 0);
}

}  // namespace

bool operator==(const ParsedDeviceName& a, const ParsedDeviceName& b) { return Key(a) == Key(b); }
bool operator<(const ParsedDeviceName& a, const ParsedDeviceName& b) { return Key(a) < Key(b); }

absl::StatusOr<ParsedDeviceName> DeviceNameUtils::Parse(absl::string_view name) {
  ParsedDeviceName out;
  if (name.empty() || name == "/") return out;
  if (name[0] != '/') return Malformed(name, "it must start with '/'");
  int last_rank = 0;
  for (absl::string_view part : absl::StrSplit(name.substr(1), '/')) {
    if (part.empty()) return Malformed(name, "it has an empty part (a stray '/')");
    const size_t colon = part.find(':');
    if (colon == absl::string_view::npos) {
      return Malformed(name, "part '", part,
                       "' has no ':' (expected job:, replica:, task: or device:)");
    }
    const absl::string_view key = part.substr(0, colon);
    const absl::string_view value = part.substr(colon + 1);
    bool legacy = false;
    const int rank = PartRank(key, &legacy);
    if (rank == 0) {
      return Malformed(name, "unknown part '", part, "' (expected job, replica, task or device)");
    }
    if (rank == last_rank) return Malformed(name, kPartNames[rank - 1], " appears twice");
    if (rank < last_rank) {
      return Malformed(name, kPartNames[rank - 1], " must come before ", kPartNames[last_rank - 1]);
    }
    last_rank = rank;
    switch (rank) {
      case 1:
        if (value == "*") break;
        if (!IsIdentifier(value)) {
          return Malformed(name, "job must be a letter followed by letters, digits or '_', got '",
                           value, "'");
        }
        out.has_job = true;
        out.job = std::string(value);
        break;
      case 2:
        TG_RETURN_IF_ERROR(ParseIndex(name, "replica", value, &out.has_replica, &out.replica));
        break;
      case 3: TG_RETURN_IF_ERROR(ParseIndex(name, "task", value, &out.has_task, &out.task)); break;
      default:
        if (legacy) {
          TG_RETURN_IF_ERROR(ParseType(name, key, &out));
          TG_RETURN_IF_ERROR(ParseIndex(name, "device id", value, &out.has_id, &out.id));
        } else {
          TG_RETURN_IF_ERROR(ParseDevicePart(name, value, &out));
        }
    }
  }
  return out;
}

std::string DeviceNameUtils::ToString(const ParsedDeviceName& n) {
  std::string out = TaskName(n);
  if (n.has_type || n.has_id) absl::StrAppend(&out, "/device:", n.has_type ? n.type : "*");
  if (n.has_id) absl::StrAppend(&out, ":", n.id);
  return out;
}

std::string DeviceNameUtils::FullName(absl::string_view job, int replica, int task,
                                      absl::string_view type, int id) {
  return absl::StrCat("/job:", job, "/replica:", replica, "/task:", task, "/device:", type, ":",
                      id);
}

std::string DeviceNameUtils::TaskName(const ParsedDeviceName& n) {
  std::string out;
  if (n.has_job) absl::StrAppend(&out, "/job:", n.job);
  if (n.has_replica) absl::StrAppend(&out, "/replica:", n.replica);
  if (n.has_task) absl::StrAppend(&out, "/task:", n.task);
  return out;
}

std::string DeviceNameUtils::TaskName(absl::string_view name) {
  absl::StatusOr<ParsedDeviceName> parsed = Parse(name);
  return parsed.ok() ? TaskName(*parsed) : std::string(name);
}

ParsedDeviceName DeviceNameUtils::AddressSpace(const ParsedDeviceName& name) {
  ParsedDeviceName out = name;
  out.has_type = false;
  out.type.clear();
  out.has_id = false;
  out.id = 0;
  return out;
}

absl::Status DeviceNameUtils::MergeDevNames(ParsedDeviceName* target, const ParsedDeviceName& other,
                                            bool allow_soft_placement) {
  ParsedDeviceName merged = *target;
  auto conflict = [&](absl::string_view what, const auto& a, const auto& b) {
    return errors::InvalidArgument("cannot merge device names '", ToString(*target), "' and '",
                                   ToString(other), "': ", what, " differ ('", a, "' vs '", b,
                                   "')");
  };
  if (other.has_job) {
    if (merged.has_job && merged.job != other.job) return conflict("jobs", merged.job, other.job);
    merged.has_job = true;
    merged.job = other.job;
  }
  if (other.has_replica) {
    if (merged.has_replica && merged.replica != other.replica) {
      return conflict("replicas", merged.replica, other.replica);
    }
    merged.has_replica = true;
    merged.replica = other.replica;
  }
  if (other.has_task) {
    if (merged.has_task && merged.task != other.task) {
      return conflict("tasks", merged.task, other.task);
    }
    merged.has_task = true;
    merged.task = other.task;
  }
  if (other.has_type) {
    if (merged.has_type && merged.type != other.type) {
      if (!allow_soft_placement) return conflict("device types", merged.type, other.type);
      // Soft placement: neither type wins, so let the placer pick any.
      merged.has_type = false;
      merged.has_id = false;
      *target = AddressSpace(merged);
      return absl::OkStatus();
    }
    merged.has_type = true;
    merged.type = other.type;
  }
  if (other.has_id) {
    if (merged.has_id && merged.id != other.id) {
      if (!allow_soft_placement) return conflict("device ids", merged.id, other.id);
      merged.has_id = false;
    } else {
      merged.has_id = true;
      merged.id = other.id;
    }
  }
  *target = merged;
  return absl::OkStatus();
}

bool DeviceNameUtils::AreCompatibleDevNames(const ParsedDeviceName& a, const ParsedDeviceName& b) {
  ParsedDeviceName merged = a;
  return MergeDevNames(&merged, b).ok();
}

bool DeviceNameUtils::IsSpecification(const ParsedDeviceName& spec, const ParsedDeviceName& name) {
  if (spec.has_job && !(name.has_job && name.job == spec.job)) return false;
  if (spec.has_replica && !(name.has_replica && name.replica == spec.replica)) return false;
  if (spec.has_task && !(name.has_task && name.task == spec.task)) return false;
  if (spec.has_type && !(name.has_type && name.type == spec.type)) return false;
  if (spec.has_id && !(name.has_id && name.id == spec.id)) return false;
  return true;
}

bool DeviceNameUtils::IsCompleteSpecification(const ParsedDeviceName& spec,
                                              const ParsedDeviceName& name) {
  return name.IsFullySpecified() && IsSpecification(spec, name);
}

bool DeviceNameUtils::IsSameAddressSpace(const ParsedDeviceName& a, const ParsedDeviceName& b) {
  return a.has_job && b.has_job && a.job == b.job && a.has_replica && b.has_replica &&
         a.replica == b.replica && a.has_task && b.has_task && a.task == b.task;
}

bool DeviceNameUtils::IsSameAddressSpace(absl::string_view a, absl::string_view b) {
  absl::StatusOr<ParsedDeviceName> pa = Parse(a);
  absl::StatusOr<ParsedDeviceName> pb = Parse(b);
  return pa.ok() && pb.ok() && IsSameAddressSpace(*pa, *pb);
}

bool DeviceNameUtils::CompareFullNames(absl::string_view a, absl::string_view b) {
  absl::StatusOr<ParsedDeviceName> pa = Parse(a);
  absl::StatusOr<ParsedDeviceName> pb = Parse(b);
  if (pa.ok() != pb.ok()) return !pa.ok();
  if (!pa.ok()) return a < b;
  return *pa < *pb;
}

}  // namespace tensorgrid
