// Command-line flags for the tensorgrid tools, stated once in a table that
// drives both the parsing and the --help text, and the tools' shared exit
// conventions: 0 ok, 1 runtime error ("error: CODE: message"), 2 usage error.
//
//   const std::vector<Flag>& Table() {
//     static const auto* table = new std::vector<Flag>{
//         // name    value   repeatable  help ('\n' starts a continuation line)
//         {"graph", "FILE", false, "GraphDef to load"},
//         {"json", "", false, "print JSON"},  // no value name: a bool flag
//     };
//     return *table;
//   }
//   absl::StatusOr<bool> help = ParseArgs(Table(), args, [&](const FlagValue& f) {
//     if (f.name == "graph") options.graph_path = f.value;
//     if (f.name == "json") options.json = f.value == "true";
//     return absl::OkStatus();
//   });
//   if (!help.ok()) return ReportUsageError("tg_x", help.status().message(), Usage());
//   ...
//   return ReportError(RunTheTool(options));
//
// Syntax: `--name=value` or `--name value` for value flags; `--name`,
// `--name=true|false|1|0` for bool flags (a bool flag never takes the next
// argument); `--help`, `-help` and `-h` anywhere ask for help. Anything else
// that does not start with "--" is an error: the tools take no positional
// arguments.
#ifndef TENSORGRID_TOOLS_FLAGS_H_
#define TENSORGRID_TOOLS_FLAGS_H_

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace tensorgrid {
namespace tools {

// One row of a tool's flag table.
struct Flag {
  std::string name;        // "graph" for --graph
  std::string value_name;  // "FILE" shows as --graph=FILE; empty: a bool flag
  // May be given more than once. A non-repeatable flag given twice is an
  // InvalidArgument; a repeatable one reaches the handler every time, in order.
  bool repeatable = false;
  std::string help;  // '\n' separates the lines of the help column

  bool is_bool() const { return value_name.empty(); }
};

// One flag as given on the command line.
struct FlagValue {
  std::string name;  // without the dashes
  // For a bool flag, "true" or "false" (a bare --json is "true").
  std::string value;
  bool has_value = false;  // a value was written; false only for a bare bool flag
};

using FlagHandler = std::function<absl::Status(const FlagValue&)>;

// Parses the arguments after argv[0] against `flags`, calling `handle` for
// each flag in command-line order. Stops at the first error, the parser's or
// the handler's, and returns it; otherwise returns whether --help was given.
// InvalidArgument for a positional argument, an unknown flag, a value flag
// with no value, a bool flag with a value other than true/false/1/0, and a
// non-repeatable flag given twice.
absl::StatusOr<bool> ParseArgs(const std::vector<Flag>& flags, const std::vector<std::string>& args,
                               const FlagHandler& handle);

// For list flags: appends the comma-separated items of `flag.value` to `out`,
// trimmed. InvalidArgument for an empty item ("--fetch='a,,b' has an empty
// name"); an empty value is one empty item.
absl::Status AppendCommaList(const FlagValue& flag, std::vector<std::string>* out);

// For a message flag (--config=TEXT): parses `flag.value` into `*message`
// (cleared first) as text format, refusing unknown fields. InvalidArgument
// "--config is not a ConfigProto in text format: line 1, column 5: ...".
absl::Status ParseTextProtoFlag(const FlagValue& flag, google::protobuf::Message* message);

// The flags section of --help: one entry per flag, then --help itself, each
// "  --name=VALUE" with its help starting two columns after the longest one.
std::string FlagsHelp(const std::vector<Flag>& flags);

// For a bad command line: prints "TOOL: message" to `err`, then a blank line
// and `usage` unless `usage` is empty. Returns 2, the usage-error exit status.
int ReportUsageError(absl::string_view tool, absl::string_view message,
                     absl::string_view usage = "");
int ReportUsageError(std::ostream& err, absl::string_view tool, absl::string_view message,
                     absl::string_view usage = "");

// The exit status for how a tool's work went: 0 when `status` is OK; else
// prints "error: CODE: message" to `err` (stderr by default) and returns 1.
int ReportError(const absl::Status& status);
int ReportError(std::ostream& err, const absl::Status& status);

}  // namespace tools
}  // namespace tensorgrid

#endif  // TENSORGRID_TOOLS_FLAGS_H_
