#include "client/node_builder.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/framework/shape_inference.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

std::string InputString(const std::string& node, int index) {
  return index == 0 ? node : absl::StrCat(node, ":", index);
}

}  // namespace

NodeBuilder::NodeBuilder(const Scope& scope, std::string op_type, std::string default_name)
    : scope_(scope), default_name_(default_name.empty() ? op_type : std::move(default_name)) {
  node_.set_op(std::move(op_type));
}

void NodeBuilder::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

bool NodeBuilder::AddTo(const ::tensorgrid::Input& input, Arg* arg) {
  if (!status_.ok() || !scope_.ok()) return false;
  const int position = static_cast<int>(args_.size());
  auto fail = [&](auto&&... msg) {
    Fail(errors::InvalidArgument("input argument ", position, ": ", msg...));
    return false;
  };
  if (!input.status().ok()) return fail(input.status().message());
  if (input.is_constant()) {
    Scope const_scope = scope_;
    const_scope.op_name_.clear();  // the op name is for the op, not its constants
    Operation c = NodeBuilder(const_scope, "Const")
                      .Attr("value", input.tensor())
                      .Attr("dtype", input.tensor().dtype())
                      .Finalize();
    if (!c.valid()) return false;  // the error is on the scope
    arg->names.push_back(c.name());
    arg->types.push_back(c.output_type(0));
    return true;
  }
  if (!input.node_name().empty()) {
    arg->names.push_back(InputString(input.node_name(), input.index()));
    arg->types.push_back(input.data_type());
    return true;
  }
  const Output& out = input.output();
  if (out.index() == Output::kNotSingleOutput) {
    return fail("operation '", out.node_name(), "' has ", out.op().num_outputs(),
                " outputs, so it cannot stand for one; pick one with output(i)");
  }
  if (!out.valid()) return fail("an invalid Output (default-constructed or from a failed op)");
  if (!out.op().MayBelongTo(scope_.graph_id())) {
    return fail("'", out.node_name(),
                "' is a node of another graph (built from another root scope)");
  }
  if (scope_.FindNode(out.node_name()) == nullptr) {
    return fail("'", out.node_name(), "' is not a node of this scope's graph");
  }
  arg->names.push_back(InputString(out.node_name(), out.index()));
  arg->types.push_back(out.type());
  return true;
}

NodeBuilder& NodeBuilder::Input(const ::tensorgrid::Input& input) {
  Arg arg;
  AddTo(input, &arg);
  args_.push_back(std::move(arg));
  return *this;
}

NodeBuilder& NodeBuilder::Input(const InputList& inputs) {
  Arg arg;
  arg.is_list = true;
  for (const ::tensorgrid::Input& input : inputs.inputs()) {
    if (!AddTo(input, &arg)) break;
  }
  args_.push_back(std::move(arg));
  return *this;
}

NodeBuilder& NodeBuilder::Attr(const std::string& name, AttrValue value) {
  (*node_.mutable_attr())[name] = std::move(value);
  return *this;
}

absl::Status NodeBuilder::SetOrCheckAttr(const ArgDef& def, const std::string& attr,
                                         const AttrValue& value) {
  auto [it, inserted] = node_.mutable_attr()->insert({attr, value});
  if (inserted || it->second.SerializeAsString() == value.SerializeAsString()) {
    return absl::OkStatus();
  }
  return errors::InvalidArgument("node '", node_.name(), "' (", node_.op(), "): input '", def.name,
                                 "' gives ", attr, " = ", SummarizeAttrValue(value),
                                 ", but an earlier input or an explicit attr gave ",
                                 SummarizeAttrValue(it->second));
}

absl::Status NodeBuilder::InferTypeAttrs(const OpDef& op) {
  if (args_.size() != op.inputs.size()) {
    return errors::InvalidArgument("node '", node_.name(), "' (", op.name, ") was given ",
                                   args_.size(), " input arguments, but the op takes ",
                                   op.inputs.size());
  }
  for (size_t i = 0; i < args_.size(); ++i) {
    const ArgDef& def = op.inputs[i];
    const Arg& arg = args_[i];
    const bool list_def = !def.number_attr.empty() || !def.type_list_attr.empty();
    if (arg.is_list && !list_def) {
      return errors::InvalidArgument("node '", node_.name(), "' (", op.name, "): input '", def.name,
                                     "' takes one tensor, not a list");
    }
    std::vector<DataType> base_types;
    for (DataType t : arg.types) {
      if (def.is_ref && !IsRefType(t)) {
        return errors::InvalidArgument("node '", node_.name(), "' (", op.name, "): input '",
                                       def.name, "' must be a reference (a Variable), got ",
                                       DataTypeString(t));
      }
      base_types.push_back(RemoveRefType(t));
    }
    AttrValue v;
    if (!def.number_attr.empty()) {
      v.set_i(static_cast<int64_t>(base_types.size()));
      TG_RETURN_IF_ERROR(SetOrCheckAttr(def, def.number_attr, v));
    }
    if (!def.type_list_attr.empty()) {
      auto* list = v.mutable_list();
      for (DataType t : base_types) list->add_type(t);
      TG_RETURN_IF_ERROR(SetOrCheckAttr(def, def.type_list_attr, v));
    } else if (!def.type_attr.empty()) {
      for (DataType t : base_types) {
        v.set_type(t);
        TG_RETURN_IF_ERROR(SetOrCheckAttr(def, def.type_attr, v));
      }
    } else {
      for (DataType t : base_types) {
        if (t != def.type) {
          return errors::InvalidArgument("node '", node_.name(), "' (", op.name, "): input '",
                                         def.name, "' must be ", DataTypeString(def.type), ", got ",
                                         DataTypeString(t));
        }
      }
    }
  }
  return absl::OkStatus();
}

Operation NodeBuilder::Finalize() {
  if (!scope_.ok()) return Operation();
  node_.set_name(scope_.GetUniqueNameForOp(default_name_));
  if (!scope_.ok()) return Operation();  // a duplicate name
  if (!status_.ok()) {                   // a bad input
    scope_.UpdateStatus(
        WithContext(status_, absl::StrCat("node '", node_.name(), "' (", node_.op(), ")")));
    return Operation();
  }
  auto fail = [&](const absl::Status& s) {
    scope_.UpdateStatus(s);
    return Operation();
  };
  const OpDef* op = OpRegistry::Global()->Find(node_.op());
  if (op == nullptr) {
    return fail(errors::InvalidArgument("node '", node_.name(), "': unknown op '", node_.op(),
                                        "' (is the library that registers it linked in?)"));
  }
  absl::Status s = InferTypeAttrs(*op);
  if (!s.ok()) return fail(s);
  for (const Arg& arg : args_) {
    for (const std::string& name : arg.names) node_.add_input(name);
  }
  for (const Operation& dep : scope_.control_deps()) {
    if (!dep.valid() || !dep.MayBelongTo(scope_.graph_id()) ||
        scope_.FindNode(dep.name()) == nullptr) {
      return fail(errors::InvalidArgument("node '", node_.name(), "': control dependency '",
                                          dep.name(), "' is not a node of this scope's graph"));
    }
    node_.add_input("^" + dep.name());
  }
  if (!scope_.colocation_.empty()) SetAttr(&node_, "_class", scope_.colocation_);
  s = ValidateNodeDef(*op, &node_);
  if (!s.ok()) return fail(s);
  std::vector<DataType> inputs, outputs;
  s = InOutTypesForNode(node_, *op, &inputs, &outputs);
  if (s.ok()) s = OutputArgRanges(node_, *op, &output_ranges_);
  if (!s.ok()) return fail(WithContext(s, absl::StrCat("node '", node_.name(), "'")));
  // The static shapes: a shape function's error (shapes that cannot go
  // together) stops the build here, as in TensorFlow, not at Run.
  std::vector<PartialTensorShape> shapes(outputs.size());
  if (op->shape_fn) {
    std::vector<PartialTensorShape> input_shapes;
    std::vector<std::optional<Tensor>> constants;
    for (const std::string& input : node_.input()) {
      if (absl::StartsWith(input, "^")) continue;
      input_shapes.push_back(scope_.InputShape(input));
      constants.push_back(scope_.InputConstant(input));
    }
    ShapeInferenceContext ctx(node_, std::move(input_shapes), static_cast<int>(outputs.size()),
                              std::move(constants));
    s = op->shape_fn(ctx);
    if (!s.ok()) {  // most shape functions name the node themselves
      const std::string node = absl::StrCat("node '", node_.name(), "'");
      return fail(absl::StrContains(s.message(), node)
                      ? s
                      : WithContext(s, absl::StrCat(node, " (", node_.op(), ")")));
    }
    for (size_t i = 0; i < shapes.size(); ++i) shapes[i] = ctx.output(static_cast<int>(i));
  }
  // Last, so that device functions see the finished node.
  s = scope_.AssignDevice(&node_);
  if (!s.ok()) return fail(s);
  std::string name = node_.name();
  scope_.AddNode(std::move(node_), std::move(shapes));
  operation_ = Operation(std::move(name), std::move(outputs), scope_.graph_id());
  return operation_;
}

std::vector<Output> NodeBuilder::OutputList(int arg) const {
  std::vector<Output> outputs;
  if (!operation_.valid() || arg < 0 || arg >= static_cast<int>(output_ranges_.size())) {
    return outputs;
  }
  for (int i = output_ranges_[arg].first; i < output_ranges_[arg].second; ++i) {
    outputs.emplace_back(operation_, i);
  }
  return outputs;
}

}  // namespace tensorgrid
