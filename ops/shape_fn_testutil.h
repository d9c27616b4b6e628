// Running one op's shape function in a test: a node with attrs (defaults
// filled in as the graph builder does) over partial input shapes.
//
//   ShapeFnRun r = RunShapeFn(NodeDefBuilder("p", "MaxPool").Attr(...), {{1, 4, 4, 2}});
//   EXPECT_OK(r.status);
//   EXPECT_EQ(r.outputs[0], "[1,2,2,2]");
//   RunShapeFn(reshape, {{6}, {2}}, {std::nullopt, shape_tensor});  // a constant input
#ifndef TENSORGRID_OPS_SHAPE_FN_TESTUTIL_H_
#define TENSORGRID_OPS_SHAPE_FN_TESTUTIL_H_

#include <optional>
#include <string>
#include <vector>

#include "core/framework/op_def.h"
#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {

struct ShapeFnRun {
  absl::Status status;
  std::vector<std::string> outputs;  // DebugString of each output
};

// `constants[i]`: input i's value, as a Const would give it (may be short).
inline ShapeFnRun RunShapeFn(const NodeDefBuilder& builder, std::vector<PartialTensorShape> inputs,
                             std::vector<std::optional<Tensor>> constants = {}) {
  ShapeFnRun run;
  NodeDef node = builder.def();
  const OpDef* op = OpRegistry::Global()->Find(node.op());
  if (op == nullptr) {
    run.status = errors::NotFound("no op ", node.op());
    return run;
  }
  for (size_t i = 0; i < inputs.size(); ++i) node.add_input("in" + std::to_string(i));
  run.status = ValidateNodeDef(*op, &node);
  if (!run.status.ok()) return run;
  std::vector<DataType> input_types, output_types;  // list outputs count one per tensor
  run.status = InOutTypesForNode(node, *op, &input_types, &output_types);
  if (!run.status.ok()) return run;
  ShapeInferenceContext c(node, std::move(inputs), static_cast<int>(output_types.size()),
                          std::move(constants));
  run.status = op->shape_fn(c);
  for (int i = 0; i < c.num_outputs(); ++i) run.outputs.push_back(c.output(i).DebugString());
  return run;
}

}  // namespace tensorgrid

#endif  // TENSORGRID_OPS_SHAPE_FN_TESTUTIL_H_
