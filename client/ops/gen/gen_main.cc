// Writes the wrappers of every op registered in this binary, which links one
// op family (//ops:<family>), as client/ops/<family>.{h,cc}:
//
//   op_gen <family> <header path> <source path>
//
// The genrules in client/BUILD (tg_op_wrappers in op_gen.bzl) run it.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "client/ops/gen/cc_op_gen.h"

namespace tensorgrid {
namespace op_gen {
namespace {

bool WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream file(path, std::ios::binary);
  file << contents;
  file.close();
  if (!file) std::fprintf(stderr, "op_gen: cannot write %s\n", path.c_str());
  return static_cast<bool>(file);
}

int Main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <family> <header path> <source path>\n", argv[0]);
    return 2;
  }
  const FamilyDef* family = FindFamily(argv[1]);
  if (family == nullptr) {
    std::fprintf(stderr, "op_gen: no family '%s' in client/ops/gen/api_defs.cc\n", argv[1]);
    return 2;
  }
  std::vector<const OpDef*> ops;
  for (const std::string& name : OpRegistry::Global()->ListOps()) {
    ops.push_back(OpRegistry::Global()->Find(name));
  }
  absl::StatusOr<GeneratedFiles> files = GenerateFamily(*family, ops);
  if (!files.ok()) {
    std::fprintf(stderr, "op_gen: %s\n", files.status().ToString().c_str());
    return 1;
  }
  return WriteFile(argv[2], files->header) && WriteFile(argv[3], files->source) ? 0 : 1;
}

}  // namespace
}  // namespace op_gen
}  // namespace tensorgrid

int main(int argc, char** argv) { return tensorgrid::op_gen::Main(argc, argv); }
