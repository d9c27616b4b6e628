// Writes the C++ wrappers of one op family: client/ops/<family>.h with one
// class per op (op_info.h says what each looks like, the op's Doc() becomes
// its comments) and client/ops/<family>.cc, where each constructor builds
// its node with NodeBuilder. gen_main.cc runs it at build time.
#ifndef TENSORGRID_CLIENT_OPS_GEN_CC_OP_GEN_H_
#define TENSORGRID_CLIENT_OPS_GEN_CC_OP_GEN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/ops/gen/api_defs.h"
#include "core/framework/op_def.h"

namespace tensorgrid {
namespace op_gen {

struct GeneratedFiles {
  std::string header;
  std::string source;
};

// The wrappers of those of `ops` whose ApiDef is kVisible, sorted by class
// name. InvalidArgument (from MakeOpInfo) when one cannot be written.
absl::StatusOr<GeneratedFiles> GenerateFamily(const FamilyDef& family,
                                              const std::vector<const OpDef*>& ops);

}  // namespace op_gen
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OPS_GEN_CC_OP_GEN_H_
