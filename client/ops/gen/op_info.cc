#include "client/ops/gen/op_info.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace op_gen {
namespace {

struct CppType {
  const char* attr_type;
  const char* param;    // how a constructor or setter takes it
  const char* storage;  // how Attrs keeps it
};

// The attr types a wrapper can take, with the C++ types NodeBuilder::Attr
// accepts for them (core/framework/attr_value_util.h).
constexpr CppType kCppTypes[] = {
    {"type", "DataType", "DataType"},
    {"int", "int64_t", "int64_t"},
    {"float", "float", "float"},
    {"bool", "bool", "bool"},
    {"string", "const std::string&", "std::string"},
    {"shape", "const PartialTensorShape&", "PartialTensorShape"},
    {"tensor", "const Tensor&", "Tensor"},
    {"list(type)", "const std::vector<DataType>&", "std::vector<DataType>"},
    {"list(int)", "const std::vector<int64_t>&", "std::vector<int64_t>"},
    {"list(string)", "const std::vector<std::string>&", "std::vector<std::string>"},
    {"list(shape)", "const std::vector<PartialTensorShape>&", "std::vector<PartialTensorShape>"},
};

const CppType* CppTypeOf(const AttrDef& attr) {
  for (const CppType& t : kCppTypes) {
    if (attr.type == t.attr_type) return &t;
  }
  return nullptr;
}

// `name` as a C++ identifier that clashes with no keyword and none of the
// names every wrapper uses.
std::string Identifier(const std::string& name) {
  static const auto* reserved = new std::set<std::string>{
      "attrs",   "auto",      "bool",     "break",     "case",     "catch",   "char",
      "class",   "const",     "continue", "default",   "delete",   "do",      "double",
      "else",    "enum",      "explicit", "export",    "extern",   "false",   "float",
      "for",     "friend",    "goto",     "if",        "inline",   "int",     "long",
      "mutable", "namespace", "new",      "operation", "operator", "private", "protected",
      "public",  "register",  "return",   "scope",     "short",    "signed",  "sizeof",
      "static",  "struct",    "switch",   "template",  "this",     "throw",   "true",
      "try",     "typedef",   "typename", "union",     "unsigned", "using",   "virtual",
      "void",    "volatile",  "while"};
  return reserved->count(name) ? name + "_" : name;
}

// Attrs the inputs determine: their types, counts and type lists.
std::set<std::string> InferredAttrs(const OpDef& op) {
  std::set<std::string> inferred;
  for (const ArgDef& arg : op.inputs) {
    for (const std::string* attr : {&arg.type_attr, &arg.number_attr, &arg.type_list_attr}) {
      if (!attr->empty()) inferred.insert(*attr);
    }
  }
  return inferred;
}

std::string DefaultText(const AttrValue& value) {
  if (value.value_case() == AttrValue::kType) return DataType_Name(value.type());
  return SummarizeAttrValue(value);
}

bool IsList(const ArgDef& arg) { return !arg.number_attr.empty() || !arg.type_list_attr.empty(); }

// Adds the required attrs to info->params and the others to optional_attrs.
absl::Status AddAttrs(const OpDef& op, OpInfo* info) {
  const std::set<std::string> inferred = InferredAttrs(op);
  for (const AttrDef& attr : op.attrs) {
    if (inferred.count(attr.name)) continue;
    const CppType* type = CppTypeOf(attr);
    if (type == nullptr) {
      return errors::InvalidArgument("op ", op.name, ": attr '", attr.name, "' of type ", attr.type,
                                     " has no C++ type in client/ops/gen/op_info.cc");
    }
    if (!attr.default_value) {
      info->params.push_back({Identifier(attr.name), type->param, attr.name, attr.description});
      continue;
    }
    std::string doc = attr.description;
    absl::StrAppend(&doc, doc.empty() ? "" : " ", "Defaults to ", DefaultText(*attr.default_value),
                    ".");
    info->optional_attrs.push_back(
        {attr.name, CamelCase(attr.name), type->param, type->storage, std::move(doc)});
  }
  return absl::OkStatus();
}

// InvalidArgument if two of the class's names would clash.
absl::Status CheckNames(const OpInfo& info) {
  std::set<std::string> params = {"scope", "attrs"};
  // A setter named like a type would hide it inside the class.
  std::set<std::string> members = {"operation", "Attrs",     "DataType", "Input",
                                   "InputList", "Operation", "Output",   "PartialTensorShape",
                                   "Scope",     "Tensor"};
  auto fail = [&](absl::string_view what, absl::string_view name) {
    return errors::InvalidArgument("op ", info.op->name, ": ", what, " '", name,
                                   "' clashes with another name of class ", info.class_name);
  };
  for (const Param& p : info.params) {
    if (!params.insert(p.name).second) return fail("parameter", p.name);
  }
  for (const OutputMember& out : info.outputs) {
    if (!members.insert(out.name).second) return fail("output", out.name);
  }
  for (const OptionalAttr& attr : info.optional_attrs) {
    if (attr.setter == info.class_name || !members.insert(attr.setter).second) {
      return fail("setter", attr.setter);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string CamelCase(absl::string_view name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? absl::ascii_toupper(c) : c);
    upper = false;
  }
  return out;
}

bool OpInfo::has_list_output() const {
  for (const OutputMember& out : outputs) {
    if (out.is_list) return true;
  }
  return false;
}

absl::StatusOr<OpInfo> MakeOpInfo(const OpDef& op, const ApiDef& api) {
  OpInfo info;
  info.op = &op;
  info.class_name = api.endpoint;
  info.node_name = api.node_name;
  for (const ArgDef& arg : op.inputs) {
    info.params.push_back(
        {Identifier(arg.name), IsList(arg) ? "InputList" : "Input", "", arg.description});
  }
  TG_RETURN_IF_ERROR(AddAttrs(op, &info));
  for (const ArgDef& arg : op.outputs) {
    info.outputs.push_back({Identifier(arg.name), IsList(arg), arg.description});
  }
  TG_RETURN_IF_ERROR(CheckNames(info));
  return info;
}

}  // namespace op_gen
}  // namespace tensorgrid
