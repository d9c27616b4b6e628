#include "tools/flags.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/platform/status.h"
#include "core/util/proto_text.h"

namespace tensorgrid {
namespace tools {
namespace {

const Flag* FindFlag(const std::vector<Flag>& flags, absl::string_view name) {
  for (const Flag& flag : flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::StatusOr<bool> ParseBool(absl::string_view name, absl::string_view value) {
  if (value.empty() || value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return errors::InvalidArgument("--", name, " takes true or false, got '", value, "'");
}

// "--graph=FILE", or "--json" for a bool flag.
std::string Synopsis(const Flag& flag) {
  return flag.is_bool() ? absl::StrCat("--", flag.name)
                        : absl::StrCat("--", flag.name, "=", flag.value_name);
}

}  // namespace

absl::StatusOr<bool> ParseArgs(const std::vector<Flag>& flags, const std::vector<std::string>& args,
                               const FlagHandler& handle) {
  bool help = false;
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
      return errors::InvalidArgument("unexpected argument '", arg, "'");
    }
    const size_t eq = arg.find('=');
    FlagValue given;
    given.name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const Flag* flag = FindFlag(flags, given.name);
    if (flag == nullptr) return errors::InvalidArgument("unknown flag '--", given.name, "'");
    if (!seen.insert(given.name).second && !flag->repeatable) {
      return errors::InvalidArgument("flag '--", given.name, "' is given more than once");
    }
    given.has_value = eq != std::string::npos;
    if (given.has_value) {
      given.value = arg.substr(eq + 1);
    } else if (!flag->is_bool()) {
      if (i + 1 >= args.size()) {
        return errors::InvalidArgument("flag '--", given.name, "' needs a value");
      }
      given.value = args[++i];
      given.has_value = true;
    }
    if (flag->is_bool()) {
      TG_ASSIGN_OR_RETURN(const bool on, ParseBool(given.name, given.value));
      given.value = on ? "true" : "false";
    }
    TG_RETURN_IF_ERROR(handle(given));
  }
  return help;
}

absl::Status AppendCommaList(const FlagValue& flag, std::vector<std::string>* out) {
  for (absl::string_view item : absl::StrSplit(flag.value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return errors::InvalidArgument("--", flag.name, "='", flag.value, "' has an empty name");
    }
    out->emplace_back(item);
  }
  return absl::OkStatus();
}

absl::Status ParseTextProtoFlag(const FlagValue& flag, google::protobuf::Message* message) {
  std::string error;
  message->Clear();
  if (!ParseTextProto(flag.value, message, &error, UnknownFields::kRefuse)) {
    return errors::InvalidArgument("--", flag.name, " is not a ", message->GetDescriptor()->name(),
                                   " in text format: ", error);
  }
  return absl::OkStatus();
}

std::string FlagsHelp(const std::vector<Flag>& flags) {
  std::vector<Flag> rows = flags;
  rows.push_back({"help", "", false, "this text"});
  size_t width = 0;
  for (const Flag& flag : rows) width = std::max(width, Synopsis(flag).size());
  const std::string indent(2 + width + 2, ' ');
  std::string out;
  for (const Flag& flag : rows) {
    const std::string synopsis = Synopsis(flag);
    absl::StrAppend(&out, "  ", synopsis, std::string(width + 2 - synopsis.size(), ' '));
    bool first = true;
    for (absl::string_view line : absl::StrSplit(flag.help, '\n')) {
      absl::StrAppend(&out, first ? "" : indent, line, "\n");
      first = false;
    }
  }
  return out;
}

int ReportUsageError(absl::string_view tool, absl::string_view message, absl::string_view usage) {
  return ReportUsageError(std::cerr, tool, message, usage);
}

int ReportUsageError(std::ostream& err, absl::string_view tool, absl::string_view message,
                     absl::string_view usage) {
  err << tool << ": " << message << "\n";
  if (!usage.empty()) err << "\n" << usage;
  return 2;
}

int ReportError(const absl::Status& status) { return ReportError(std::cerr, status); }

int ReportError(std::ostream& err, const absl::Status& status) {
  if (status.ok()) return 0;
  err << "error: " << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
  return 1;
}

}  // namespace tools
}  // namespace tensorgrid
