#include "core/util/command_line_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

template <typename T>
constexpr const char* TypeName() {
  if constexpr (std::is_same_v<T, int32_t>) return "int32";
  if constexpr (std::is_same_v<T, int64_t>) return "int64";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, bool>) return "bool";
  return "string";
}

// Whether `text` is written as a whole number: a sign, then digits only.
bool LooksIntegral(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

// Each ParseAs returns "" when `text` is a T, stored in *out, else why not
// ("is not an int32"), for the caller to put after the flag and the value.
template <typename Int>
std::string ParseAsInt(absl::string_view text, Int* out) {
  if (absl::SimpleAtoi(text, out)) return "";
  return LooksIntegral(text) ? absl::StrCat("is out of range for ", TypeName<Int>())
                             : absl::StrCat("is not an ", TypeName<Int>());
}
std::string ParseAs(absl::string_view text, int32_t* out) { return ParseAsInt(text, out); }
std::string ParseAs(absl::string_view text, int64_t* out) { return ParseAsInt(text, out); }

bool AsciiToReal(absl::string_view text, float* out) { return absl::SimpleAtof(text, out); }
bool AsciiToReal(absl::string_view text, double* out) { return absl::SimpleAtod(text, out); }

// Finite values only: an overflow (Abseil gives it as infinity) is out of
// range, and "inf" or "nan" is no value a flag wants.
template <typename Real>
std::string ParseAsReal(absl::string_view text, Real* out) {
  if (!AsciiToReal(text, out)) return absl::StrCat("is not a ", TypeName<Real>());
  if (std::isfinite(*out)) return "";
  const std::string lower = absl::AsciiStrToLower(text);
  if (absl::StrContains(lower, "inf") || absl::StrContains(lower, "nan")) {
    return absl::StrCat("is not a finite ", TypeName<Real>());
  }
  return absl::StrCat("is out of range for ", TypeName<Real>());
}
std::string ParseAs(absl::string_view text, float* out) { return ParseAsReal(text, out); }
std::string ParseAs(absl::string_view text, double* out) { return ParseAsReal(text, out); }

std::string ParseAs(absl::string_view text, bool* out) {
  if (text == "true" || text == "1") {
    *out = true;
  } else if (text == "false" || text == "0") {
    *out = false;
  } else {
    return "is not a bool (true or false)";
  }
  return "";
}

std::string ParseAs(absl::string_view text, std::string* out) {
  *out = std::string(text);
  return "";
}

bool IsHelp(absl::string_view arg) { return arg == "--help" || arg == "-help" || arg == "-h"; }

const Flag* FindFlag(const std::vector<Flag>& flag_list, absl::string_view name) {
  for (const Flag& flag : flag_list) {
    if (flag.name() == name) return &flag;
  }
  return nullptr;
}

// "  --name (TYPE, default D)\n" and the help text's lines, indented.
void AppendEntry(std::string* out, absl::string_view head, absl::string_view help) {
  absl::StrAppend(out, "  ", head, "\n");
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    absl::StrAppend(out, "      ", line, "\n");
  }
}

}  // namespace

Flag::Flag(absl::string_view name, Destination dst, std::string default_text,
           absl::string_view usage_text)
    : name_(name), dst_(dst), default_text_(std::move(default_text)), usage_text_(usage_text) {}

Flag::Flag(absl::string_view name, int32_t* dst, absl::string_view usage_text)
    : Flag(name, dst, absl::StrCat(*dst), usage_text) {}
Flag::Flag(absl::string_view name, int64_t* dst, absl::string_view usage_text)
    : Flag(name, dst, absl::StrCat(*dst), usage_text) {}
Flag::Flag(absl::string_view name, float* dst, absl::string_view usage_text)
    : Flag(name, dst, absl::StrCat(*dst), usage_text) {}
Flag::Flag(absl::string_view name, double* dst, absl::string_view usage_text)
    : Flag(name, dst, absl::StrCat(*dst), usage_text) {}
Flag::Flag(absl::string_view name, bool* dst, absl::string_view usage_text)
    : Flag(name, dst, *dst ? "true" : "false", usage_text) {}
Flag::Flag(absl::string_view name, std::string* dst, absl::string_view usage_text)
    : Flag(name, dst, absl::StrCat("\"", *dst, "\""), usage_text) {}

absl::StatusOr<Flag::Value> Flag::ParseValue(absl::string_view text) const {
  return std::visit(
      [&](auto* dst) -> absl::StatusOr<Value> {
        std::remove_pointer_t<decltype(dst)> value{};
        const std::string why_not = ParseAs(text, &value);
        if (why_not.empty()) return Value(std::move(value));
        return errors::InvalidArgument("--", name_, "='", text, "' ", why_not);
      },
      dst_);
}

void Flag::Store(const Value& value) const {
  std::visit([&](auto* dst) { *dst = std::get<std::remove_pointer_t<decltype(dst)>>(value); },
             dst_);
}

std::string Flag::TypeAndDefault() const {
  const char* type =
      std::visit([](auto* dst) { return TypeName<std::remove_pointer_t<decltype(dst)>>(); }, dst_);
  return absl::StrCat(type, ", default ", default_text_);
}

absl::Status Flags::Parse(int* argc, char** argv, const std::vector<Flag>& flag_list, bool* help) {
  if (*argc < 1) {  // not even argv[0]: nothing to read or rewrite
    *help = false;
    return absl::OkStatus();
  }
  // Read everything first, so that an error leaves the variables and argv as they were.
  std::vector<std::pair<const Flag*, Flag::Value>> values;
  std::vector<char*> others;  // what stays in argv after argv[0]
  std::set<std::string> seen;
  bool asked_for_help = false;
  for (int i = 1; i < *argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      others.insert(others.end(), argv + i, argv + *argc);
      break;
    }
    if (IsHelp(arg)) {
      asked_for_help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--")) {
      others.push_back(argv[i]);
      continue;
    }
    const size_t eq = arg.find('=');
    const absl::string_view name = arg.substr(2, eq == absl::string_view::npos ? eq : eq - 2);
    const Flag* flag = FindFlag(flag_list, name);
    if (flag == nullptr) return errors::InvalidArgument("unknown flag '--", name, "'");
    if (!seen.emplace(name).second) {
      return errors::InvalidArgument("flag '--", name, "' is given more than once");
    }
    absl::string_view text;
    if (eq != absl::string_view::npos) {
      text = arg.substr(eq + 1);
    } else if (flag->is_bool()) {
      text = "true";
    } else if (i + 1 < *argc) {
      text = argv[++i];
    } else {
      return errors::InvalidArgument("flag '--", name, "' needs a value");
    }
    TG_ASSIGN_OR_RETURN(Flag::Value value, flag->ParseValue(text));
    values.emplace_back(flag, std::move(value));
  }
  for (const auto& [flag, value] : values) flag->Store(value);
  std::copy(others.begin(), others.end(), argv + 1);
  *argc = 1 + static_cast<int>(others.size());
  argv[*argc] = nullptr;
  *help = asked_for_help;
  return absl::OkStatus();
}

bool Flags::Parse(int* argc, char** argv, const std::vector<Flag>& flag_list) {
  bool help = false;
  const absl::Status status = Parse(argc, argv, flag_list, &help);
  if (!status.ok()) {  // then there was an argument, so argv[0] is there
    const absl::string_view program = argv[0];
    const std::string name(program.substr(program.rfind('/') + 1));  // npos + 1 is 0
    std::fprintf(stderr, "%s: %s\n", name.c_str(), std::string(status.message()).c_str());
  }
  return status.ok() && !help;
}

std::string Flags::Usage(absl::string_view cmdline, const std::vector<Flag>& flag_list) {
  std::string out = absl::StrCat("usage: ", cmdline, "\n\nflags:\n");
  for (const Flag& flag : flag_list) {
    AppendEntry(&out, absl::StrCat("--", flag.name_, " (", flag.TypeAndDefault(), ")"),
                flag.usage_text_);
  }
  AppendEntry(&out, "--help", "print this text");
  return out;
}

}  // namespace tensorgrid
