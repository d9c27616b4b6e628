// Op definitions and the op registry.
//
// An op is declared once, in TensorFlow's spelling, next to its kernels:
//
//   TG_REGISTER_OP("MatMul")
//       .Input("a: T")
//       .Input("b: T")
//       .Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("transpose_b: bool = false")
//       .Attr("T: {float, double, int32, int64}")
//       .SetShapeFn(shape_fns::MatMul)
//       .Doc(R"doc(
// product = a x b, each optionally transposed, for matrices.
//
// transpose_a: Multiply by the transpose of `a`.
// )doc");
//
// Argument specs: "name: float" (fixed type), "name: T" (type attr),
// "name: N * T" (N tensors of type T), "name: Tlist" (list(type) attr),
// "name: Ref(T)" (a legacy reference). Attr specs: "name: TYPE [= default]"
// with TYPE one of type, {float, int32} (type with allowed values), int,
// "int >= 1", float, bool, string, shape, tensor, list(type), list(int), ...
#ifndef TENSORGRID_CORE_FRAMEWORK_OP_DEF_H_
#define TENSORGRID_CORE_FRAMEWORK_OP_DEF_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/tensor_shape.h"
#include "core/framework/types.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace tensorgrid {

class ShapeInferenceContext;
using ShapeFn = std::function<absl::Status(ShapeInferenceContext&)>;

struct ArgDef {
  std::string name;
  DataType type = DT_INVALID;  // fixed type, or DT_INVALID when from an attr
  std::string type_attr;       // "T"
  std::string number_attr;     // "N" in "N * T"
  std::string type_list_attr;  // "Tlist"
  bool is_ref = false;
  std::string description;  // from the op's Doc(), may be empty
};

struct AttrDef {
  std::string name;
  std::string
      type;  // "type", "int", "float", "bool", "string", "shape", "tensor", "list(type)", ...
  std::optional<AttrValue> default_value;
  std::vector<DataType> allowed_types;  // empty: any
  std::vector<std::string> allowed_strings;
  std::optional<int64_t> minimum;
  std::string description;  // from the op's Doc(), may be empty
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  bool is_stateful = false;
  ShapeFn shape_fn;  // may be empty (outputs of unknown shape)
  // From Doc(): the first paragraph, and the rest but the "name: text" lines.
  std::string summary;
  std::string description;

  const AttrDef* FindAttr(absl::string_view name) const;
};

// Builds an OpDef from spec strings; errors surface at Finalize().
class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);
  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  // Documentation, in the shape of TensorFlow's REGISTER_OP(...).Doc(): a
  // one-paragraph summary, an optional longer description, and optional
  // "name: text" lines (continued on indented lines) describing inputs,
  // outputs and attrs. The client's generated wrappers (client/ops/) carry it
  // as comments; line breaks in the summary and description are kept.
  OpDefBuilder& Doc(std::string text);
  absl::StatusOr<OpDef> Finalize() const;

 private:
  std::string name_;
  std::vector<std::string> inputs_, outputs_, attrs_;
  bool stateful_ = false;
  ShapeFn shape_fn_;
  std::string doc_;
};

// `def` as TensorFlow's OpDef proto (the stripped_op_list of the
// MetaGraphDefs a SavedModel holds): arguments, attrs with their defaults,
// allowed values and minimums, statefulness; with `docs`, the summary and
// the descriptions too (TensorFlow strips them from stripped_op_list).
OpDefProto OpDefToProto(const OpDef& def, bool docs);

// TensorFlow's stripped_op_list for `graph`: the OpDef, without docs, of
// every registered op its nodes use, sorted by name. Ops that
// are not registered here are left out.
OpList StrippedOpList(const GraphDef& graph);

// All registered ops, keyed by name. Thread-safe.
class OpRegistry {
 public:
  static OpRegistry* Global();
  // AlreadyExists if an op of that name is registered.
  absl::Status Register(OpDef def);
  // nullptr when unknown.
  const OpDef* Find(absl::string_view name) const;
  std::vector<std::string> ListOps() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_ ABSL_GUARDED_BY(mu_);
};

// Static registration; CHECK-fails on a malformed spec (a programmer error).
struct OpRegistrar {
  OpRegistrar(const OpDefBuilder& builder);  // NOLINT: implicit by design
};

#define TG_REGISTER_OP(name) TG_REGISTER_OP_UNIQ_(__COUNTER__, name)
#define TG_REGISTER_OP_UNIQ_(ctr, name) TG_REGISTER_OP_UNIQ2_(ctr, name)
#define TG_REGISTER_OP_UNIQ2_(ctr, name) \
  static ::tensorgrid::OpRegistrar tg_op_registrar_##ctr = ::tensorgrid::OpDefBuilder(name)

// Validates `node` against `op`: every attr present with the right type and
// an allowed value (defaults are filled in), no unknown attrs (names starting
// with '_' are allowed), and, with `check_inputs`, the right number of data
// inputs. Errors are InvalidArgument naming the node and the attr or input.
absl::Status ValidateNodeDef(const OpDef& op, NodeDef* node, bool check_inputs = true);

// Input and output dtypes of a validated node (ref inputs/outputs as *_REF).
absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op, std::vector<DataType>* inputs,
                               std::vector<DataType>* outputs);

// [start, end) of each of `op`'s output (input) arguments among the outputs
// (inputs) of the validated `node` (an "N * T" or list(type) argument spans
// several).
absl::Status OutputArgRanges(const NodeDef& node, const OpDef& op,
                             std::vector<std::pair<int, int>>* ranges);
absl::Status InputArgRanges(const NodeDef& node, const OpDef& op,
                            std::vector<std::pair<int, int>>* ranges);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_OP_DEF_H_
