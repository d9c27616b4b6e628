#include "core/framework/op_def.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/logging.h"
#include "core/platform/status.h"

namespace tensorgrid {

const AttrDef* OpDef::FindAttr(absl::string_view name) const {
  for (const AttrDef& a : attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

OpDefBuilder::OpDefBuilder(std::string name) : name_(std::move(name)) {}
OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  stateful_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string text) {
  doc_ = std::move(text);
  return *this;
}

namespace {

// "name: rest" -> (name, rest)
absl::Status SplitSpec(absl::string_view spec, std::string* name, std::string* rest) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  *name = std::string(absl::StripAsciiWhitespace(parts.first));
  *rest = std::string(absl::StripAsciiWhitespace(parts.second));
  if (name->empty() || rest->empty()) {
    return errors::InvalidArgument("malformed spec '", spec, "', expected 'name: type'");
  }
  return absl::OkStatus();
}

absl::StatusOr<AttrDef> ParseAttrSpec(absl::string_view spec) {
  AttrDef attr;
  std::string rest;
  TG_RETURN_IF_ERROR(SplitSpec(spec, &attr.name, &rest));
  std::string default_text;
  size_t eq = rest.find('=');
  while (eq != std::string::npos && eq > 0 && rest[eq - 1] == '>') eq = rest.find('=', eq + 1);
  if (eq != std::string::npos) {
    default_text = std::string(absl::StripAsciiWhitespace(rest.substr(eq + 1)));
    rest = std::string(absl::StripAsciiWhitespace(rest.substr(0, eq)));
  }
  if (size_t ge = rest.find(">="); ge != std::string::npos) {
    int64_t min;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(rest.substr(ge + 2)), &min)) {
      return errors::InvalidArgument("bad minimum in attr spec '", spec, "'");
    }
    attr.minimum = min;
    rest = std::string(absl::StripAsciiWhitespace(rest.substr(0, ge)));
  }
  // "list({float, int64})": a list(type) whose entries are among the set.
  const bool type_list = absl::StartsWith(rest, "list({");
  if (type_list) {
    if (!absl::EndsWith(rest, "})")) {
      return errors::InvalidArgument("unclosed 'list({' in '", spec, "'");
    }
    rest = rest.substr(5, rest.size() - 6);
  }
  if (absl::StartsWith(rest, "{")) {
    if (!absl::EndsWith(rest, "}")) return errors::InvalidArgument("unclosed '{' in '", spec, "'");
    absl::string_view body(rest);
    body = body.substr(1, body.size() - 2);
    for (absl::string_view item : absl::StrSplit(body, ',', absl::SkipWhitespace())) {
      item = absl::StripAsciiWhitespace(item);
      if (absl::StartsWith(item, "'") || absl::StartsWith(item, "\"")) {
        attr.type = "string";
        attr.allowed_strings.emplace_back(item.substr(1, item.size() - 2));
      } else {
        attr.type = type_list ? "list(type)" : "type";
        TG_ASSIGN_OR_RETURN(DataType t, DataTypeFromString(item));
        attr.allowed_types.push_back(t);
      }
    }
    if (type_list && attr.type != "list(type)") {
      return errors::InvalidArgument("'list({...})' in '", spec, "' must list types");
    }
  } else {
    attr.type = rest;
  }
  if (!default_text.empty()) {
    AttrValue v;
    TG_RETURN_IF_ERROR(WithContext(ParseAttrValue(attr.type, default_text, &v),
                                   absl::StrCat("default of attr '", attr.name, "'")));
    attr.default_value = v;
  }
  return attr;
}

absl::StatusOr<ArgDef> ParseArgSpec(absl::string_view spec, const std::vector<AttrDef>& attrs) {
  ArgDef arg;
  std::string type;
  TG_RETURN_IF_ERROR(SplitSpec(spec, &arg.name, &type));
  absl::string_view t(type);
  if (absl::ConsumePrefix(&t, "Ref(")) {
    if (!absl::ConsumeSuffix(&t, ")"))
      return errors::InvalidArgument("unclosed Ref( in '", spec, "'");
    arg.is_ref = true;
  }
  if (size_t star = t.find('*'); star != absl::string_view::npos) {
    arg.number_attr = std::string(absl::StripAsciiWhitespace(t.substr(0, star)));
    t = absl::StripAsciiWhitespace(t.substr(star + 1));
  }
  auto find = [&](absl::string_view name) -> const AttrDef* {
    for (const AttrDef& a : attrs) {
      if (a.name == name) return &a;
    }
    return nullptr;
  };
  if (const AttrDef* a = find(t)) {
    if (a->type == "type") {
      arg.type_attr = std::string(t);
    } else if (a->type == "list(type)") {
      arg.type_list_attr = std::string(t);
    } else {
      return errors::InvalidArgument("arg '", spec, "' names attr '", t, "' of type ", a->type);
    }
  } else {
    auto dt = DataTypeFromString(t);
    if (!dt.ok())
      return errors::InvalidArgument("arg '", spec, "': unknown type or attr '", t, "'");
    arg.type = *dt;
  }
  if (!arg.number_attr.empty()) {
    const AttrDef* n = find(arg.number_attr);
    if (n == nullptr || n->type != "int") {
      return errors::InvalidArgument("arg '", spec, "': '", arg.number_attr,
                                     "' is not an int attr");
    }
  }
  return arg;
}

// Where the description of the input, output or attr `name` goes; nullptr
// when the op has none of that name.
std::string* DescriptionOf(OpDef& op, absl::string_view name) {
  for (ArgDef& a : op.inputs) {
    if (a.name == name) return &a.description;
  }
  for (ArgDef& a : op.outputs) {
    if (a.name == name) return &a.description;
  }
  for (AttrDef& a : op.attrs) {
    if (a.name == name) return &a.description;
  }
  return nullptr;
}

// Splits `doc` into op->summary (the first paragraph), the descriptions of
// the args and attrs it names ("name: text" plus indented continuation lines)
// and op->description (everything else).
void ApplyDoc(absl::string_view doc, OpDef* op) {
  std::vector<absl::string_view> summary, description;
  bool summary_done = false;
  std::string* entry = nullptr;  // the arg or attr being described
  for (absl::string_view line : absl::StrSplit(doc, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (entry != nullptr && !line.empty() && absl::ascii_isspace(line[0])) {
      absl::StrAppend(entry, " ", absl::StripLeadingAsciiWhitespace(line));
      continue;
    }
    entry = nullptr;
    if (size_t colon = line.find(": "); colon != absl::string_view::npos) {
      entry = DescriptionOf(*op, line.substr(0, colon));
      if (entry != nullptr) {
        *entry = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
        summary_done = true;
        continue;
      }
    }
    if (line.empty() && description.empty()) {
      if (!summary.empty()) summary_done = true;  // blank lines before either are skipped
    } else if (summary_done) {
      description.push_back(line);
    } else {
      summary.push_back(line);
    }
  }
  while (!description.empty() && description.back().empty()) description.pop_back();
  op->summary = absl::StrJoin(summary, "\n");
  op->description = absl::StrJoin(description, "\n");
}

}  // namespace

absl::StatusOr<OpDef> OpDefBuilder::Finalize() const {
  OpDef op;
  op.name = name_;
  op.is_stateful = stateful_;
  op.shape_fn = shape_fn_;
  for (const auto& spec : attrs_) {
    auto a = ParseAttrSpec(spec);
    if (!a.ok()) return WithContext(a.status(), absl::StrCat("op ", name_));
    op.attrs.push_back(std::move(a).value());
  }
  for (const auto& spec : inputs_) {
    TG_ASSIGN_OR_RETURN(ArgDef a, ParseArgSpec(spec, op.attrs));
    op.inputs.push_back(std::move(a));
  }
  for (const auto& spec : outputs_) {
    TG_ASSIGN_OR_RETURN(ArgDef a, ParseArgSpec(spec, op.attrs));
    op.outputs.push_back(std::move(a));
  }
  // As in TensorFlow: the attr that counts an argument's tensors ("N" of
  // "N * T", or a list(type) giving their types) is at least 1 unless its
  // spec says otherwise.
  for (const std::vector<ArgDef>* args : {&op.inputs, &op.outputs}) {
    for (const ArgDef& arg : *args) {
      for (const std::string& counted : {arg.number_attr, arg.type_list_attr}) {
        for (AttrDef& attr : op.attrs) {
          if (!counted.empty() && attr.name == counted && !attr.minimum.has_value()) {
            attr.minimum = 1;
          }
        }
      }
    }
  }
  ApplyDoc(doc_, &op);
  return op;
}

OpRegistry* OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return registry;
}

absl::Status OpRegistry::Register(OpDef def) {
  absl::MutexLock lock(&mu_);
  std::string name = def.name;
  auto [it, inserted] = ops_.emplace(name, std::make_unique<OpDef>(std::move(def)));
  if (!inserted) return errors::AlreadyExists("op '", name, "' is already registered");
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::ListOps() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

void ArgToProto(const ArgDef& arg, bool docs, OpDefProto::ArgDef* out) {
  out->set_name(arg.name);
  if (docs) out->set_description(arg.description);
  if (arg.type != DT_INVALID) out->set_type(arg.type);
  out->set_type_attr(arg.type_attr);
  out->set_number_attr(arg.number_attr);
  out->set_type_list_attr(arg.type_list_attr);
  out->set_is_ref(arg.is_ref);
}

}  // namespace

OpDefProto OpDefToProto(const OpDef& def, bool docs) {
  OpDefProto out;
  out.set_name(def.name);
  for (const ArgDef& arg : def.inputs) ArgToProto(arg, docs, out.add_input_arg());
  for (const ArgDef& arg : def.outputs) ArgToProto(arg, docs, out.add_output_arg());
  for (const AttrDef& attr : def.attrs) {
    OpDefProto::AttrDef* a = out.add_attr();
    a->set_name(attr.name);
    a->set_type(attr.type);
    if (attr.default_value.has_value()) *a->mutable_default_value() = *attr.default_value;
    if (docs) a->set_description(attr.description);
    if (attr.minimum.has_value()) {
      a->set_has_minimum(true);
      a->set_minimum(*attr.minimum);
    }
    for (DataType t : attr.allowed_types) {
      a->mutable_allowed_values()->mutable_list()->add_type(t);
    }
    for (const std::string& s : attr.allowed_strings) {
      a->mutable_allowed_values()->mutable_list()->add_s(s);
    }
  }
  if (docs) {
    out.set_summary(def.summary);
    out.set_description(def.description);
  }
  out.set_is_stateful(def.is_stateful);
  return out;
}

OpList StrippedOpList(const GraphDef& graph) {
  std::set<std::string> used;
  for (const NodeDef& node : graph.node()) used.insert(node.op());
  OpList list;
  for (const std::string& op : used) {
    if (const OpDef* def = OpRegistry::Global()->Find(op); def != nullptr) {
      *list.add_op() = OpDefToProto(*def, /*docs=*/false);
    }
  }
  return list;
}

OpRegistrar::OpRegistrar(const OpDefBuilder& builder) {
  auto op = builder.Finalize();
  if (!op.ok()) {
    std::fprintf(stderr, "bad op registration: %s\n", std::string(op.status().message()).c_str());
    std::abort();
  }
  absl::Status s = OpRegistry::Global()->Register(std::move(op).value());
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    std::abort();
  }
}

namespace {

absl::Status CheckAttrValue(const NodeDef& node, const AttrDef& def, const AttrValue& value) {
  auto fail = [&](auto&&... msg) {
    return errors::InvalidArgument("attr '", def.name, "' of node '", node.name(), "' (", node.op(),
                                   ") ", msg...);
  };
  absl::Status type_ok = AttrValueHasType(value, def.type);
  if (!type_ok.ok()) return fail(type_ok.message());
  // Dimensions of at least -1 (unknown), and a rank a tensor may have.
  auto check_shape = [&](const TensorShapeProto& shape) {
    absl::StatusOr<PartialTensorShape> parsed = PartialTensorShape::FromProto(shape);
    return parsed.ok() ? absl::OkStatus() : fail("is invalid: ", parsed.status().message());
  };
  if (value.value_case() == AttrValue::kShape) TG_RETURN_IF_ERROR(check_shape(value.shape()));
  for (const TensorShapeProto& shape : value.list().shape()) TG_RETURN_IF_ERROR(check_shape(shape));
  if (!def.allowed_types.empty()) {
    std::vector<DataType> got;
    if (value.value_case() == AttrValue::kType) got.push_back(value.type());
    for (int t : value.list().type()) got.push_back(static_cast<DataType>(t));
    for (DataType t : got) {
      if (std::find(def.allowed_types.begin(), def.allowed_types.end(), t) ==
          def.allowed_types.end()) {
        std::string allowed;
        for (DataType a : def.allowed_types)
          absl::StrAppend(&allowed, allowed.empty() ? "" : ", ", DataTypeString(a));
        return fail("is ", DataTypeString(t), ", not one of the allowed types {", allowed, "}");
      }
    }
  }
  if (!def.allowed_strings.empty() && value.value_case() == AttrValue::kS &&
      std::find(def.allowed_strings.begin(), def.allowed_strings.end(), value.s()) ==
          def.allowed_strings.end()) {
    return fail("is \"", value.s(), "\", not an allowed value");
  }
  if (def.minimum) {
    const AttrValue::ListValue& l = value.list();
    int64_t v = value.value_case() == AttrValue::kI
                    ? value.i()
                    : l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() +
                          l.shape_size() + l.tensor_size();
    if (v < *def.minimum) return fail("is ", v, ", less than the minimum ", *def.minimum);
  }
  return absl::OkStatus();
}

// The most tensors one "N * T" argument may stand for. N comes from the
// graph, and every tensor it names costs a slot in the node: without a bound,
// a NodeDef of 30 bytes (AddN with N = 10^9) made ImportGraphDef allocate
// gigabytes, and an N past 2^31 was cut to an int (found by graphdef_fuzzer's
// input kept in tests/fuzz/regressions/graphdef/). A negative N is refused
// here too, for ops whose attr declares no minimum.
constexpr int64_t kMaxArgTensors = int64_t{1} << 20;

// Number of tensors `arg` stands for in `node` (1, or N for "N * T" / lists).
absl::StatusOr<int> ArgCount(const NodeDef& node, const ArgDef& arg) {
  if (!arg.number_attr.empty()) {
    int64_t n;
    TG_RETURN_IF_ERROR(GetNodeAttr(node, arg.number_attr, &n));
    if (n < 0 || n > kMaxArgTensors) {
      return errors::InvalidArgument("attr '", arg.number_attr, "' of node '", node.name(), "' (",
                                     node.op(), ") is ", n, "; an argument stands for 0 to ",
                                     kMaxArgTensors, " tensors");
    }
    return static_cast<int>(n);
  }
  if (!arg.type_list_attr.empty()) {
    std::vector<DataType> types;
    TG_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_list_attr, &types));
    return static_cast<int>(types.size());
  }
  return 1;
}

absl::Status AppendArgTypes(const NodeDef& node, const ArgDef& arg, std::vector<DataType>* out) {
  if (!arg.type_list_attr.empty()) {
    std::vector<DataType> types;
    TG_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_list_attr, &types));
    for (DataType t : types) out->push_back(arg.is_ref ? MakeRefType(t) : t);
    return absl::OkStatus();
  }
  DataType t = arg.type;
  if (!arg.type_attr.empty()) TG_RETURN_IF_ERROR(GetNodeAttr(node, arg.type_attr, &t));
  TG_ASSIGN_OR_RETURN(int n, ArgCount(node, arg));
  for (int i = 0; i < n; ++i) out->push_back(arg.is_ref ? MakeRefType(t) : t);
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateNodeDef(const OpDef& op, NodeDef* node, bool check_inputs) {
  for (const auto& [name, value] : node->attr()) {
    if (absl::StartsWith(name, "_")) continue;
    const AttrDef* def = op.FindAttr(name);
    if (def == nullptr) {
      return errors::InvalidArgument("node '", node->name(), "' has attr '", name, "' that op ",
                                     op.name, " does not define");
    }
    TG_RETURN_IF_ERROR(CheckAttrValue(*node, *def, value));
  }
  for (const AttrDef& def : op.attrs) {
    if (node->attr().count(def.name)) continue;
    if (!def.default_value) {
      return errors::InvalidArgument("node '", node->name(), "' (", op.name, ") is missing attr '",
                                     def.name, "' of type ", def.type);
    }
    (*node->mutable_attr())[def.name] = *def.default_value;
  }
  if (!check_inputs) return absl::OkStatus();
  int expected = 0;
  for (const ArgDef& arg : op.inputs) {
    TG_ASSIGN_OR_RETURN(int n, ArgCount(*node, arg));
    expected += n;
  }
  int data_inputs = 0;
  for (const std::string& in : node->input()) {
    if (absl::StartsWith(in, "^")) continue;
    ++data_inputs;
  }
  if (data_inputs != expected) {
    return errors::InvalidArgument("node '", node->name(), "' (", op.name, ") has ", data_inputs,
                                   " data inputs, but the op takes ", expected);
  }
  return absl::OkStatus();
}

absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op, std::vector<DataType>* inputs,
                               std::vector<DataType>* outputs) {
  inputs->clear();
  outputs->clear();
  for (const ArgDef& arg : op.inputs) TG_RETURN_IF_ERROR(AppendArgTypes(node, arg, inputs));
  for (const ArgDef& arg : op.outputs) TG_RETURN_IF_ERROR(AppendArgTypes(node, arg, outputs));
  return absl::OkStatus();
}

namespace {
absl::Status ArgRanges(const NodeDef& node, const std::vector<ArgDef>& args,
                       std::vector<std::pair<int, int>>* ranges) {
  ranges->clear();
  int start = 0;
  for (const ArgDef& arg : args) {
    std::vector<DataType> types;
    TG_RETURN_IF_ERROR(AppendArgTypes(node, arg, &types));
    const int end = start + static_cast<int>(types.size());
    ranges->emplace_back(start, end);
    start = end;
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status InputArgRanges(const NodeDef& node, const OpDef& op,
                            std::vector<std::pair<int, int>>* ranges) {
  return ArgRanges(node, op.inputs, ranges);
}

absl::Status OutputArgRanges(const NodeDef& node, const OpDef& op,
                             std::vector<std::pair<int, int>>* ranges) {
  return ArgRanges(node, op.outputs, ranges);
}

}  // namespace tensorgrid
