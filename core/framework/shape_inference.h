// Static shape inference: an op's shape function maps its inputs' partial
// shapes (and attrs, and the values of small integer inputs that are
// constants: shapes, axes, permutations, paddings) to its outputs' partial
// shapes. Unknown stays unknown.
#ifndef TENSORGRID_CORE_FRAMEWORK_SHAPE_INFERENCE_H_
#define TENSORGRID_CORE_FRAMEWORK_SHAPE_INFERENCE_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/framework/tensor.h"
#include "core/framework/tensor_shape.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

class ShapeInferenceContext {
 public:
  // `constants[i]`: input i's value when known at build (InferenceConstant);
  // may be shorter than `inputs`.
  ShapeInferenceContext(const NodeDef& node, std::vector<PartialTensorShape> inputs,
                        int num_outputs, std::vector<std::optional<Tensor>> constants = {})
      : node_(node),
        inputs_(std::move(inputs)),
        constants_(std::move(constants)),
        outputs_(num_outputs) {}

  const NodeDef& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Unknown for an input the node does not have: shape functions run on
  // whatever a user built, before the attrs that size the lists are checked
  // against each other.
  const PartialTensorShape& input(int i) const {
    static const PartialTensorShape* const unknown = new PartialTensorShape();
    return i >= 0 && i < num_inputs() ? inputs_[i] : *unknown;
  }
  // Input i's value when it is a constant known at build, else null.
  const Tensor* input_tensor(int i) const {
    return i >= 0 && i < static_cast<int>(constants_.size()) && constants_[i].has_value()
               ? &*constants_[i]
               : nullptr;
  }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // Ignored for an output the node does not have (as above). (A copy, not a
  // move: GCC 12 warns falsely about moving an inlined absl::InlinedVector
  // at -O3.)
  void set_output(int i, const PartialTensorShape& shape) {
    if (i >= 0 && i < num_outputs()) outputs_[i] = shape;
  }
  const PartialTensorShape& output(int i) const { return outputs_[i]; }

 private:
  const NodeDef& node_;
  std::vector<PartialTensorShape> inputs_;
  std::vector<std::optional<Tensor>> constants_;
  std::vector<PartialTensorShape> outputs_;  // default: unknown rank
};

// The value shape functions may read of output `port` of `producer`: a
// Const's int32 or int64 value of at most kMaxInferenceConstant elements;
// nullopt for anything else.
constexpr int64_t kMaxInferenceConstant = 1024;
std::optional<Tensor> InferenceConstant(const NodeDef& producer, int port);

namespace shape_fns {
// `status` with "node 'name' (Op)" before its message.
absl::Status AtNode(const ShapeInferenceContext& c, const absl::Status& status);
// `axis` in [-rank, rank), made non-negative in *normalized; else
// InvalidArgument naming the node, the axis and the rank.
absl::Status CheckAxis(const ShapeInferenceContext& c, int64_t axis, int rank, int* normalized);
// Input i's values (int32 or int64, any rank, flattened) when it is a
// constant known at build; false otherwise.
bool InputInts(const ShapeInferenceContext& c, int i, std::vector<int64_t>* values);
// The shape that input i (a shape vector: Fill's dims, a random op's shape)
// describes: its values when known (-1 stays unknown; below that is
// InvalidArgument), else as many unknown dimensions as it is long, else
// unknown rank.
absl::Status ShapeFromShapeInput(const ShapeInferenceContext& c, int i, PartialTensorShape* shape);
// The shape that is both `a` and `b` (each one's unknown rank or dims taken
// from the other); false when they conflict.
bool MergeShapes(const PartialTensorShape& a, const PartialTensorShape& b,
                 PartialTensorShape* merged);
// Every output has input 0's shape.
absl::Status UnchangedShape(ShapeInferenceContext& c);
// Every output is a scalar.
absl::Status ScalarShape(ShapeInferenceContext& c);
// Output 0 is the numpy broadcast of inputs 0 and 1; InvalidArgument if incompatible.
absl::Status BroadcastBinary(ShapeInferenceContext& c);
// Output 0 from the "shape" attr (Placeholder, Variable) or "value" (Const).
absl::Status ShapeFromAttr(ShapeInferenceContext& c);
// [m,k] x [k,n] honoring transpose_a / transpose_b.
absl::Status MatMul(ShapeInferenceContext& c);
}  // namespace shape_fns

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_SHAPE_INFERENCE_H_
