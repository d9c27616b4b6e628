// NodeBuilder: adds one node to a Scope's graph. Every ops:: wrapper is a
// few lines over it; use it directly for an op without a wrapper.
//
//   Operation op = NodeBuilder(scope, "MatMul")
//                      .Input(a)                 // one call per input argument,
//                      .Input(b)                 // in the op's argument order
//                      .Attr("transpose_b", true)
//                      .Finalize();              // invalid on error
//
// Finalize looks the op up in the OpRegistry, infers type attrs from the
// inputs' dtypes ("T", "N", list(type) attrs), names the node through the
// scope, adds the scope's control dependencies and colocation, validates the
// node (filling in attr defaults), computes its output dtypes and, last, sets
// its device (the scope's request, through its device functions if any).
// Any error (unknown op, inconsistent input dtypes, bad attr, a device that
// does not parse) is recorded on the scope and Finalize returns an invalid
// Operation; once the scope holds an error nothing more is built.
#ifndef TENSORGRID_CLIENT_NODE_BUILDER_H_
#define TENSORGRID_CLIENT_NODE_BUILDER_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "client/output.h"
#include "client/scope.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/op_def.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

class NodeBuilder {
 public:
  // `default_name` (the op type when empty) is the name the node gets unless
  // the scope has an op name.
  NodeBuilder(const Scope& scope, std::string op_type, std::string default_name = "");

  // The next input argument: one tensor. A constant becomes a Const node here.
  NodeBuilder& Input(const ::tensorgrid::Input& input);
  // The next input argument: a list ("N * T" or a list(type) attr).
  NodeBuilder& Input(const InputList& inputs);

  NodeBuilder& Attr(const std::string& name, AttrValue value);
  template <typename T>
  NodeBuilder& Attr(const std::string& name, const T& value) {
    SetAttr(&node_, name, value);
    return *this;
  }
  // Sets the attr only when `value` holds one (else the op's default applies).
  template <typename T>
  NodeBuilder& Attr(const std::string& name, const std::optional<T>& value) {
    if (value) SetAttr(&node_, name, *value);
    return *this;
  }

  Operation Finalize();

  // After a successful Finalize, the node's outputs for output argument `arg`
  // of the op: several for an "N * T" or list(type) argument. None after a
  // failed one.
  std::vector<Output> OutputList(int arg) const;

 private:
  // The tensors given for one input argument of the op.
  struct Arg {
    std::vector<std::string> names;  // node input strings: "node", "node:1"
    std::vector<DataType> types;
    bool is_list = false;
  };
  // Appends `input` to `arg`, building a Const for a constant; false on error.
  bool AddTo(const ::tensorgrid::Input& input, Arg* arg);
  absl::Status SetOrCheckAttr(const ArgDef& def, const std::string& attr, const AttrValue& value);
  absl::Status InferTypeAttrs(const OpDef& op);
  void Fail(absl::Status status);

  Scope scope_;
  std::string default_name_;
  NodeDef node_;
  std::vector<Arg> args_;
  absl::Status status_;
  Operation operation_;                             // set by a successful Finalize
  std::vector<std::pair<int, int>> output_ranges_;  // [start, end) per output argument
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_NODE_BUILDER_H_
