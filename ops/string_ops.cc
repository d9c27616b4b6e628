// String op definitions: StringJoin. Kernels: kernels/string/.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace {

// A scalar if every input is one; otherwise the non-scalar inputs' common
// shape (scalars broadcast). InvalidArgument naming the node and the input
// whose known shape disagrees.
absl::Status StringJoinShapeFn(ShapeInferenceContext& c) {
  bool all_scalars = true;
  bool merged_any = false;
  std::vector<int64_t> dims;
  int first = -1;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const PartialTensorShape& in = c.input(i);
    if (in.unknown_rank()) {
      all_scalars = false;
      continue;
    }
    if (in.dims() == 0) continue;
    all_scalars = false;
    if (!merged_any) {
      for (int d = 0; d < in.dims(); ++d) dims.push_back(in.dim_size(d));
      merged_any = true;
      first = i;
      continue;
    }
    bool compatible = in.dims() == static_cast<int>(dims.size());
    for (int d = 0; compatible && d < in.dims(); ++d) {
      const int64_t a = dims[d], b = in.dim_size(d);
      compatible = a < 0 || b < 0 || a == b;
      if (a < 0) dims[d] = b;
    }
    if (!compatible) {
      return WithContext(errors::InvalidArgument("StringJoin input ", i, " has shape ",
                                                 in.DebugString(), ", but input ", first,
                                                 " has shape ", c.input(first).DebugString(),
                                                 " (inputs must be scalars or all of one shape)"),
                         absl::StrCat("node '", c.node().name(), "' (", c.node().op(), ")"));
    }
  }
  if (all_scalars) {
    c.set_output(0, PartialTensorShape({}));
  } else if (merged_any) {
    c.set_output(0, PartialTensorShape(dims));
  }
  return absl::OkStatus();
}

TG_REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int")
    .Attr("separator: string = ''")
    .SetShapeFn(StringJoinShapeFn)
    .Doc(R"doc(
The strings of `inputs` joined element by element with `separator` between
them. The inputs are scalars or all of one shape; scalars are repeated for
every element.

  inputs = {"model", ["a", "b"], "ckpt"}, separator = "/"
  output = ["model/a/ckpt", "model/b/ckpt"]

separator: Put between the joined strings.
)doc");

}  // namespace
}  // namespace tensorgrid
