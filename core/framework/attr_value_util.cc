#include "core/framework/attr_value_util.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {

const char* ValueCaseName(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kList: return "list";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    default: return "nothing";
  }
}

absl::StatusOr<const AttrValue*> FindAttr(const NodeDef& node, absl::string_view name) {
  auto it = node.attr().find(std::string(name));
  if (it == node.attr().end()) {
    return errors::InvalidArgument("node '", node.name(), "' (", node.op(), ") has no attr '", name,
                                   "'");
  }
  return &it->second;
}

absl::Status WrongType(const NodeDef& node, absl::string_view name, const AttrValue& v,
                       absl::string_view want) {
  return errors::InvalidArgument("attr '", name, "' of node '", node.name(), "' (", node.op(),
                                 ") holds ", ValueCaseName(v), ", expected ", want);
}

#define TG_GET_SCALAR_ATTR_(CPP, CASE, FIELD, WANT)                                 \
  absl::Status GetScalar(const NodeDef& node, absl::string_view name, CPP* out) {   \
    TG_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node, name));                  \
    if (v->value_case() != AttrValue::CASE) return WrongType(node, name, *v, WANT); \
    *out = static_cast<CPP>(v->FIELD());                                            \
    return absl::OkStatus();                                                        \
  }
TG_GET_SCALAR_ATTR_(std::string, kS, s, "string")
TG_GET_SCALAR_ATTR_(int64_t, kI, i, "int")
TG_GET_SCALAR_ATTR_(float, kF, f, "float")
TG_GET_SCALAR_ATTR_(bool, kB, b, "bool")
TG_GET_SCALAR_ATTR_(DataType, kType, type, "type")
#undef TG_GET_SCALAR_ATTR_

// An empty list is stored by TensorFlow as `list {}` (value_case kList).
absl::StatusOr<const AttrValue::ListValue*> GetList(const NodeDef& node, absl::string_view name) {
  TG_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node, name));
  if (v->value_case() != AttrValue::kList) return WrongType(node, name, *v, "list");
  return &v->list();
}

}  // namespace

absl::Status GetNodeAttr(const NodeDef& n, absl::string_view a, std::string* o) {
  return GetScalar(n, a, o);
}
absl::Status GetNodeAttr(const NodeDef& n, absl::string_view a, int64_t* o) {
  return GetScalar(n, a, o);
}
absl::Status GetNodeAttr(const NodeDef& n, absl::string_view a, float* o) {
  return GetScalar(n, a, o);
}
absl::Status GetNodeAttr(const NodeDef& n, absl::string_view a, bool* o) {
  return GetScalar(n, a, o);
}
absl::Status GetNodeAttr(const NodeDef& n, absl::string_view a, DataType* o) {
  return GetScalar(n, a, o);
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, int32_t* out) {
  int64_t v;
  TG_RETURN_IF_ERROR(GetScalar(node, name, &v));
  if (v < INT32_MIN || v > INT32_MAX) {
    return errors::InvalidArgument("attr '", name, "' of node '", node.name(), "' is ", v,
                                   ", out of int32 range");
  }
  *out = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, PartialTensorShape* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node, name));
  if (v->value_case() != AttrValue::kShape) return WrongType(node, name, *v, "shape");
  auto shape = PartialTensorShape::FromProto(v->shape());
  if (!shape.ok()) {
    return WithContext(shape.status(),
                       absl::StrCat("attr '", name, "' of node '", node.name(), "'"));
  }
  *out = *shape;
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, Tensor* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node, name));
  if (v->value_case() != AttrValue::kTensor) return WrongType(node, name, *v, "tensor");
  auto t = TensorFromProto(v->tensor());
  if (!t.ok()) {
    return WithContext(t.status(), absl::StrCat("attr '", name, "' of node '", node.name(), "'"));
  }
  *out = std::move(t).value();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::vector<int64_t>* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue::ListValue* l, GetList(node, name));
  out->assign(l->i().begin(), l->i().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::vector<int32_t>* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue::ListValue* l, GetList(node, name));
  out->clear();
  for (int64_t i : l->i()) out->push_back(static_cast<int32_t>(i));
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::vector<DataType>* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue::ListValue* l, GetList(node, name));
  out->clear();
  for (int t : l->type()) out->push_back(static_cast<DataType>(t));
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,
                         std::vector<std::string>* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue::ListValue* l, GetList(node, name));
  out->assign(l->s().begin(), l->s().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,
                         std::vector<PartialTensorShape>* out) {
  TG_ASSIGN_OR_RETURN(const AttrValue::ListValue* l, GetList(node, name));
  out->clear();
  for (const TensorShapeProto& proto : l->shape()) {
    auto shape = PartialTensorShape::FromProto(proto);
    if (!shape.ok()) {
      return WithContext(shape.status(),
                         absl::StrCat("attr '", name, "' of node '", node.name(), "'"));
    }
    out->push_back(*shape);
  }
  return absl::OkStatus();
}

bool HasNodeAttr(const NodeDef& node, absl::string_view name) {
  return node.attr().count(std::string(name)) > 0;
}

static AttrValue& Slot(NodeDef* node, absl::string_view name) {
  return (*node->mutable_attr())[std::string(name)];
}
void SetAttr(NodeDef* n, absl::string_view a, const std::string& v) { Slot(n, a).set_s(v); }
void SetAttr(NodeDef* n, absl::string_view a, const char* v) { Slot(n, a).set_s(v); }
void SetAttr(NodeDef* n, absl::string_view a, int64_t v) { Slot(n, a).set_i(v); }
void SetAttr(NodeDef* n, absl::string_view a, int v) { Slot(n, a).set_i(v); }
void SetAttr(NodeDef* n, absl::string_view a, float v) { Slot(n, a).set_f(v); }
void SetAttr(NodeDef* n, absl::string_view a, bool v) { Slot(n, a).set_b(v); }
void SetAttr(NodeDef* n, absl::string_view a, DataType v) { Slot(n, a).set_type(v); }
void SetAttr(NodeDef* n, absl::string_view a, const TensorShape& v) {
  v.AsProto(Slot(n, a).mutable_shape());
}
static void ShapeToProto(const PartialTensorShape& v, TensorShapeProto* p) {
  p->Clear();
  if (v.unknown_rank()) {
    p->set_unknown_rank(true);
    return;
  }
  for (int i = 0; i < v.dims(); ++i) p->add_dim()->set_size(v.dim_size(i));
}
void SetAttr(NodeDef* n, absl::string_view a, const PartialTensorShape& v) {
  ShapeToProto(v, Slot(n, a).mutable_shape());
}
void SetAttr(NodeDef* n, absl::string_view a, const Tensor& v) {
  TensorToProto(v, Slot(n, a).mutable_tensor());
}
void SetAttr(NodeDef* n, absl::string_view a, const std::vector<int64_t>& v) {
  auto* l = Slot(n, a).mutable_list();
  l->Clear();
  for (int64_t i : v) l->add_i(i);
}
void SetAttr(NodeDef* n, absl::string_view a, const std::vector<DataType>& v) {
  auto* l = Slot(n, a).mutable_list();
  l->Clear();
  for (DataType t : v) l->add_type(t);
}
void SetAttr(NodeDef* n, absl::string_view a, const std::vector<std::string>& v) {
  auto* l = Slot(n, a).mutable_list();
  l->Clear();
  for (const auto& s : v) l->add_s(s);
}
void SetAttr(NodeDef* n, absl::string_view a, const std::vector<PartialTensorShape>& v) {
  auto* l = Slot(n, a).mutable_list();
  l->Clear();
  for (const PartialTensorShape& s : v) ShapeToProto(s, l->add_shape());
}

absl::Status AttrValueHasType(const AttrValue& v, absl::string_view type) {
  auto want = [&](AttrValue::ValueCase c) -> absl::Status {
    if (v.value_case() == c) return absl::OkStatus();
    return errors::InvalidArgument("holds ", ValueCaseName(v), ", expected ", type);
  };
  if (type == "string") return want(AttrValue::kS);
  if (type == "int") return want(AttrValue::kI);
  if (type == "float") return want(AttrValue::kF);
  if (type == "bool") return want(AttrValue::kB);
  if (type == "type") return want(AttrValue::kType);
  if (type == "shape") return want(AttrValue::kShape);
  if (type == "tensor") return want(AttrValue::kTensor);
  if (type == "func") return want(AttrValue::kFunc);
  if (absl::StartsWith(type, "list(")) {
    if (v.value_case() != AttrValue::kList) return want(AttrValue::kList);
    const auto& l = v.list();
    int kinds = (l.s_size() > 0) + (l.i_size() > 0) + (l.f_size() > 0) + (l.b_size() > 0) +
                (l.type_size() > 0) + (l.shape_size() > 0) + (l.tensor_size() > 0);
    if (kinds > 1) return errors::InvalidArgument("list holds values of several kinds");
    absl::string_view elem = type.substr(5, type.size() - 6);
    bool ok = kinds == 0 || (elem == "string" && l.s_size()) || (elem == "int" && l.i_size()) ||
              (elem == "float" && l.f_size()) || (elem == "bool" && l.b_size()) ||
              (elem == "type" && l.type_size()) || (elem == "shape" && l.shape_size()) ||
              (elem == "tensor" && l.tensor_size());
    if (!ok) return errors::InvalidArgument("list holds other values than ", elem);
    return absl::OkStatus();
  }
  return errors::InvalidArgument("unknown attr type '", type, "'");
}

absl::Status ParseAttrValue(absl::string_view type, absl::string_view text, AttrValue* out) {
  text = absl::StripAsciiWhitespace(text);
  auto bad = [&]() {
    return errors::InvalidArgument("cannot parse '", text, "' as a value of type ", type);
  };
  if (type == "bool") {
    if (text == "true")
      out->set_b(true);
    else if (text == "false")
      out->set_b(false);
    else
      return bad();
  } else if (type == "int") {
    int64_t i;
    if (!absl::SimpleAtoi(text, &i)) return bad();
    out->set_i(i);
  } else if (type == "float") {
    float f;
    if (!absl::SimpleAtof(text, &f)) return bad();
    out->set_f(f);
  } else if (type == "string") {
    if (text.size() < 2 || (text.front() != '\'' && text.front() != '"') ||
        text.back() != text.front()) {
      return bad();
    }
    out->set_s(std::string(text.substr(1, text.size() - 2)));
  } else if (type == "type") {
    TG_ASSIGN_OR_RETURN(DataType t, DataTypeFromString(text));
    out->set_type(t);
  } else if (type == "shape") {
    if (text == "<unknown>") {
      out->mutable_shape()->set_unknown_rank(true);
      return absl::OkStatus();
    }
    if (!absl::ConsumePrefix(&text, "[") || !absl::ConsumeSuffix(&text, "]")) return bad();
    auto* shape = out->mutable_shape();
    for (absl::string_view d : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      int64_t size;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &size)) return bad();
      shape->add_dim()->set_size(size);
    }
  } else if (absl::StartsWith(type, "list(")) {
    if (!absl::ConsumePrefix(&text, "[") || !absl::ConsumeSuffix(&text, "]")) return bad();
    absl::string_view elem = type.substr(5, type.size() - 6);
    auto* list = out->mutable_list();
    for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      AttrValue one;
      TG_RETURN_IF_ERROR(ParseAttrValue(elem, item, &one));
      if (elem == "int")
        list->add_i(one.i());
      else if (elem == "float")
        list->add_f(one.f());
      else if (elem == "bool")
        list->add_b(one.b());
      else if (elem == "string")
        list->add_s(one.s());
      else if (elem == "type")
        list->add_type(one.type());
      else
        return bad();
    }
  } else {
    return bad();
  }
  return absl::OkStatus();
}

std::string SummarizeAttrValue(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return absl::StrCat("\"", v.s(), "\"");
    case AttrValue::kI: return absl::StrCat(v.i());
    case AttrValue::kF: return absl::StrCat(v.f());
    case AttrValue::kB: return v.b() ? "true" : "false";
    case AttrValue::kType: return DataTypeString(v.type());
    case AttrValue::kShape: {
      auto s = PartialTensorShape::FromProto(v.shape());
      return s.ok() ? s->DebugString() : "<bad shape>";
    }
    case AttrValue::kTensor: {
      auto t = TensorFromProto(v.tensor());
      return t.ok() ? t->DebugString(4) : "<bad tensor>";
    }
    case AttrValue::kList: {
      std::vector<std::string> items;
      for (const auto& s : v.list().s()) items.push_back(absl::StrCat("\"", s, "\""));
      for (int64_t i : v.list().i()) items.push_back(absl::StrCat(i));
      for (float f : v.list().f()) items.push_back(absl::StrCat(f));
      for (bool b : v.list().b()) items.push_back(b ? "true" : "false");
      for (int t : v.list().type()) items.push_back(DataTypeString(static_cast<DataType>(t)));
      return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
    }
    default: return "<none>";
  }
}

}  // namespace tensorgrid
