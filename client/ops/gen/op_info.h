// The shape of one op's generated wrapper class, derived from its OpDef and
// ApiDef with TensorFlow's cc_op_gen conventions:
//
//   - the constructor takes the scope, then the inputs in OpDef order, as
//     `Input` (one tensor) or `InputList` ("N * T" and list(type) arguments);
//   - then the attrs that must be given: those with no default that no input
//     determines (Cast's DstT, Placeholder's dtype), in OpDef order;
//   - then `const Attrs&`: the attrs with a default, each with a setter named
//     in CamelCase (keep_dims: Sum::KeepDims(true), chained as in
//     Seed(1).Seed2(2)); unset ones get the OpDef's default;
//   - attrs the inputs determine ("T", "N", "Tidx", list(type) attrs) are
//     inferred when the node is built and are not part of the API;
//   - each output argument is a public member named after it: an `Output`,
//     or a `std::vector<Output>` for a list.
#ifndef TENSORGRID_CLIENT_OPS_GEN_OP_INFO_H_
#define TENSORGRID_CLIENT_OPS_GEN_OP_INFO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/ops/gen/api_defs.h"
#include "core/framework/op_def.h"

namespace tensorgrid {
namespace op_gen {

// A constructor parameter after the scope: an input or a required attr.
struct Param {
  std::string name;  // C++ name: the arg's, with '_' appended to a keyword
  std::string type;  // "Input", "InputList", "DataType", "const PartialTensorShape&", ...
  std::string attr;  // for a required attr: its name in the NodeDef; else empty
  std::string doc;
};

// An attr with a default: a setter of Attrs.
struct OptionalAttr {
  std::string attr;          // "keep_dims"
  std::string setter;        // "KeepDims"
  std::string param_type;    // "bool", "const std::string&"
  std::string storage_type;  // "bool", "std::string"
  std::string doc;           // the description and the default
};

struct OutputMember {
  std::string name;
  bool is_list = false;
  std::string doc;
};

struct OpInfo {
  const OpDef* op = nullptr;
  std::string class_name;
  std::string node_name;  // what the node is called when the scope names none
  std::vector<Param> params;
  std::vector<OptionalAttr> optional_attrs;
  std::vector<OutputMember> outputs;

  bool has_list_output() const;
};

// InvalidArgument, naming the op, when the wrapper cannot be written: an
// attr type with no C++ type here, or names that would collide.
absl::StatusOr<OpInfo> MakeOpInfo(const OpDef& op, const ApiDef& api);

// "keep_dims" -> "KeepDims", "seed2" -> "Seed2".
std::string CamelCase(absl::string_view name);

}  // namespace op_gen
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_GEN_OP_INFO_H_
