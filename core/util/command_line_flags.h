// Command-line flags for small programs (the examples), in the shape of
// TensorFlow's tensorflow/core/util/command_line_flags.h: a list of typed
// flags, each bound to a variable whose initial value is its default, parsed
// from argv in one call that also removes them from argv.
//
//   int64_t steps = 6000;
//   std::string data_dir = "/usr/share/datasets/fashion-mnist";
//   bool is_sync = false;
//   std::vector<Flag> flag_list = {
//       Flag("steps", &steps, "train until the global step is this"),
//       Flag("data_dir", &data_dir, "the Fashion-MNIST files"),
//       Flag("is_sync", &is_sync, "synchronous replicas"),
//   };
//   std::string usage = Flags::Usage("train [--steps=N] [--is_sync]", flag_list);
//   if (!Flags::Parse(&argc, argv, flag_list)) {  // a bad flag (said on stderr), or --help
//     std::fprintf(stderr, "%s", usage.c_str());
//     return 2;
//   }
//
// Syntax: `--name=value` or `--name value` (the next argument, whatever it
// starts with); a bool flag is `--name` or `--name=true|false|1|0` and never
// takes the next argument. `--help`, `-help` and `-h` ask for help. A value
// must parse as its flag's type, whole and in range: `--steps=1e3` is an
// error for an int64, `--lr=1e50` for a float. Checks beyond the type ("must
// be positive") are the program's.
//
// Parse removes the flags it reads (and the help flags) from argv, as
// TensorFlow's does: afterwards argv[0..*argc) holds argv[0] and the other
// arguments in their order, and argv[*argc] is null. The others are the words
// that do not start with "--" (positional arguments, "-x") and, unread, a
// "--" and everything after it; a program that takes no arguments checks
// that *argc is 1. Unlike TensorFlow's, an unknown `--flag` is an error, and
// so is a flag given twice.
#ifndef TENSORGRID_CORE_UTIL_COMMAND_LINE_FLAGS_H_
#define TENSORGRID_CORE_UTIL_COMMAND_LINE_FLAGS_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {

// One flag: its name (`steps` for --steps), the variable it sets, and its
// help text ('\n' starts another line). The variable's value when the Flag
// is made is the default the usage text shows. The variable must outlive
// every Parse of the Flag; a Flag is a small value, copied freely.
class Flag {
 public:
  Flag(absl::string_view name, int32_t* dst, absl::string_view usage_text);
  Flag(absl::string_view name, int64_t* dst, absl::string_view usage_text);
  Flag(absl::string_view name, float* dst, absl::string_view usage_text);
  // Not in TensorFlow's set; here since tensorgrid's hyperparameters are doubles.
  Flag(absl::string_view name, double* dst, absl::string_view usage_text);
  Flag(absl::string_view name, bool* dst, absl::string_view usage_text);
  Flag(absl::string_view name, std::string* dst, absl::string_view usage_text);

  const std::string& name() const { return name_; }

 private:
  friend class Flags;
  using Destination = std::variant<int32_t*, int64_t*, float*, double*, bool*, std::string*>;
  using Value = std::variant<int32_t, int64_t, float, double, bool, std::string>;

  Flag(absl::string_view name, Destination dst, std::string default_text,
       absl::string_view usage_text);

  bool is_bool() const { return std::holds_alternative<bool*>(dst_); }
  // The value `text` gives this flag; InvalidArgument naming the flag and
  // `text` when it is not one of the flag's type.
  absl::StatusOr<Value> ParseValue(absl::string_view text) const;
  void Store(const Value& value) const;
  // "int64, default 6000".
  std::string TypeAndDefault() const;

  std::string name_;
  Destination dst_;
  std::string default_text_;  // the variable's value when the Flag was made
  std::string usage_text_;
};

class Flags {
 public:
  // Parses argv[1..*argc) against `flag_list`, stores each flag's value in
  // its variable and removes the flags from argv (see the top of this file).
  // Sets *help when --help was given. InvalidArgument for an unknown flag, a
  // flag given twice, a value flag with no value, and a value that is not of
  // its flag's type (naming the flag and the value); then nothing changes:
  // no variable, not argv, not *help.
  static absl::Status Parse(int* argc, char** argv, const std::vector<Flag>& flag_list, bool* help);

  // TensorFlow's form: the same, true when the command line is good. False
  // for an error, after writing "PROGRAM: message" to stderr, and false for
  // --help, writing nothing (the caller prints the usage).
  static bool Parse(int* argc, char** argv, const std::vector<Flag>& flag_list);

  // "usage: CMDLINE\n\nflags:\n", then per flag (and --help)
  //   "  --steps (int64, default 6000)\n      help text\n".
  static std::string Usage(absl::string_view cmdline, const std::vector<Flag>& flag_list);
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_COMMAND_LINE_FLAGS_H_
