// What the generated C++ API makes of the registered ops, beyond their OpDefs,
// in the spirit of TensorFlow's api_def files: which ops get a wrapper, under
// what class name, and what each generated header says about its family.
//
// An op needs no entry here: by default it gets a class named after it (ops
// whose names start with '_' are internal and get none). Entries are the
// exceptions: TensorFlow's C++ names for versioned ops (ConcatV2 is
// ops::Concat), ops whose wrappers are hand-written, and ops superseded by
// another that took their name.
#ifndef TENSORGRID_CLIENT_OPS_GEN_API_DEFS_H_
#define TENSORGRID_CLIENT_OPS_GEN_API_DEFS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tensorgrid {
namespace op_gen {

enum class Visibility {
  kVisible,      // a generated class
  kHandWritten,  // a hand-written wrapper, in `header`
  kSkip,         // no wrapper
};

struct ApiDef {
  std::string op;  // the registered op
  Visibility visibility = Visibility::kVisible;
  std::string endpoint;   // the C++ class (or function) name
  std::string node_name;  // the name a node gets when its scope gives none
  std::string header;     // kHandWritten: the header that declares it
};

// The API of the op named `op`, defaults filled in.
ApiDef GetApiDef(absl::string_view op);

// One generated header (client/ops/<name>.h) and its source: the wrappers of
// the ops in //ops:<name>.
struct FamilyDef {
  std::string name;                   // "math_ops"
  std::string intro;                  // the header's opening comment, lines without "// "
  std::vector<std::string> includes;  // hand-written headers it brings in too
};

// nullptr for a family without generated wrappers.
const FamilyDef* FindFamily(absl::string_view name);

}  // namespace op_gen
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_GEN_API_DEFS_H_
