#include "client/ops/gen/cc_op_gen.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/ops/gen/op_info.h"

namespace tensorgrid {
namespace op_gen {
namespace {

constexpr int kColumns = 100;     // code
constexpr int kTextColumns = 80;  // comments' words
constexpr char kGeneratedNote[] =
    "Generated from the op registry by client/ops/gen (docs/ops.md); do not edit.";

// `text`'s words in lines of at most `width` characters (a longer word gets
// a line of its own); the first line is `first` shorter.
std::vector<std::string> WrapWords(absl::string_view text, int width, int first = 0) {
  std::vector<std::string> lines(1);
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const int room = width - (lines.size() == 1 ? first : 0);
    std::string& line = lines.back();
    if (!line.empty() && static_cast<int>(line.size() + 1 + word.size()) > room) {
      lines.emplace_back(word);
    } else {
      absl::StrAppend(&line, line.empty() ? "" : " ", word);
    }
  }
  return lines;
}

// `text` as comment lines at `indent`, keeping its line breaks.
void AppendComment(std::string* out, absl::string_view indent, absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(out, indent, line.empty() ? "//" : "// ", line, "\n");
  }
}

// "  name: text" for a class comment, wrapped, later lines indented 4 more.
std::string ArgEntry(absl::string_view name, absl::string_view doc) {
  const std::string head = absl::StrCat("  ", name, ": ");
  constexpr absl::string_view kIndent = "      ";
  const int width = kTextColumns - 3 - static_cast<int>(kIndent.size());  // after "// " + kIndent
  const int first = static_cast<int>(head.size() - kIndent.size());
  return absl::StrCat(head,
                      absl::StrJoin(WrapWords(doc, width, first), absl::StrCat("\n", kIndent)));
}

// `args` joined by ", " into lines of at most kColumns, the first starting
// at column `first`, the others at `next` (whose indentation this adds).
std::vector<std::string> PackArgs(const std::vector<std::string>& args, absl::string_view tail,
                                  size_t first, size_t next) {
  std::vector<std::string> lines(1);
  size_t column = first;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string piece = args[i] + (i + 1 < args.size() ? "," : absl::StrCat(")", tail));
    if (i > 0 && column + 1 + piece.size() > kColumns) {
      lines.push_back(std::string(next, ' ') + piece);
      column = next + piece.size();
    } else {
      absl::StrAppend(&lines.back(), i > 0 ? " " : "", piece);
      column += (i > 0 ? 1 : 0) + piece.size();
    }
  }
  return lines;
}

bool Fits(const std::vector<std::string>& lines, size_t first) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if ((i == 0 ? first : 0) + lines[i].size() > kColumns) return false;
  }
  return true;
}

// `head(args...)tail` at `indent`: on one line if it fits, else wrapped after
// commas with the arguments aligned after the parenthesis, or, when that
// needs more lines (a long head), indented 4 on the lines after it.
std::string Call(absl::string_view indent, absl::string_view head,
                 const std::vector<std::string>& args, absl::string_view tail) {
  const std::string open = absl::StrCat(indent, head, "(");
  const std::vector<std::string> aligned = PackArgs(args, tail, open.size(), open.size());
  if (aligned.size() == 1 && Fits(aligned, open.size())) return open + aligned[0];
  const size_t deeper = indent.size() + 4;
  const std::vector<std::string> broken = PackArgs(args, tail, deeper, deeper);
  if (Fits(aligned, open.size()) && aligned.size() <= broken.size() + 1) {
    return open + absl::StrJoin(aligned, "\n");
  }
  return absl::StrCat(open, "\n", std::string(deeper, ' '), absl::StrJoin(broken, "\n"));
}

// The class comment: the op's Doc() and what differs from the op's name.
std::string ClassComment(const OpInfo& info) {
  std::vector<std::string> paragraphs;
  if (!info.op->summary.empty()) paragraphs.push_back(info.op->summary);
  if (!info.op->description.empty()) paragraphs.push_back(info.op->description);
  std::vector<std::string> entries;
  for (const Param& p : info.params) {
    if (!p.doc.empty()) entries.push_back(ArgEntry(p.name, p.doc));
  }
  for (const OutputMember& out : info.outputs) {
    if (!out.doc.empty()) entries.push_back(ArgEntry(out.name, out.doc));
  }
  if (!entries.empty()) paragraphs.push_back(absl::StrJoin(entries, "\n"));
  if (info.class_name != info.op->name) {
    paragraphs.push_back(absl::StrCat("Builds a ", info.op->name, " node."));
  }
  std::string out;
  AppendComment(&out, "", absl::StrJoin(paragraphs, "\n\n"));
  return out;
}

std::string AttrsStruct(const OpInfo& info) {
  std::string out = "  struct Attrs {\n";
  for (const OptionalAttr& attr : info.optional_attrs) {
    AppendComment(&out, "    ", absl::StrJoin(WrapWords(attr.doc, kTextColumns - 7), "\n"));
    absl::StrAppend(&out, "    Attrs ", attr.setter, "(", attr.param_type, " x) const {\n",
                    "      Attrs r = *this;\n", "      r.", attr.attr, "_ = x;\n",
                    "      return r;\n", "    }\n");
  }
  out += "\n";
  for (const OptionalAttr& attr : info.optional_attrs) {
    absl::StrAppend(&out, "    std::optional<", attr.storage_type, "> ", attr.attr, "_;\n");
  }
  return out + "  };\n";
}

std::vector<std::string> ParamList(const OpInfo& info, bool with_default) {
  std::vector<std::string> params = {"const Scope& scope"};
  for (const Param& p : info.params) params.push_back(absl::StrCat(p.type, " ", p.name));
  if (!info.optional_attrs.empty()) {
    params.push_back(with_default ? "const Attrs& attrs = Attrs()" : "const Attrs& attrs");
  }
  return params;
}

// operator Output/Input for one output, operator[] for one list, operator
// Operation for none.
std::string Conversions(const OpInfo& info) {
  if (info.outputs.empty()) return "  operator Operation() const { return operation; }\n";
  if (info.outputs.size() > 1) return "";
  const std::string& name = info.outputs[0].name;
  if (info.outputs[0].is_list) {
    return absl::StrCat("  Output operator[](size_t i) const { return i < ", name, ".size() ? ",
                        name, "[i] : Output(); }\n");
  }
  return absl::StrCat("  operator Output() const { return ", name, "; }\n",
                      "  operator Input() const { return ", name, "; }\n");
}

std::string StaticSetters(const OpInfo& info) {
  std::string out;
  for (const OptionalAttr& attr : info.optional_attrs) {
    const std::string head =
        absl::StrCat("  static Attrs ", attr.setter, "(", attr.param_type, " x) {");
    const std::string body = absl::StrCat("return Attrs().", attr.setter, "(x);");
    if (head.size() + body.size() + 3 <= kColumns) {
      absl::StrAppend(&out, head, " ", body, " }\n");
    } else {
      absl::StrAppend(&out, head, "\n    ", body, "\n  }\n");
    }
  }
  return out;
}

std::string ClassDeclaration(const OpInfo& info) {
  std::string out = ClassComment(info);
  absl::StrAppend(&out, "class ", info.class_name, " {\n public:\n");
  if (!info.optional_attrs.empty()) out += AttrsStruct(info) + "\n";
  const std::vector<std::string> params = ParamList(info, /*with_default=*/true);
  const bool one_arg = params.size() == 1 || (params.size() == 2 && !info.optional_attrs.empty());
  out += Call("  ", absl::StrCat(one_arg ? "explicit " : "", info.class_name), params, ";") + "\n";
  out += Conversions(info) + StaticSetters(info) + "\n  Operation operation;\n";
  for (const OutputMember& o : info.outputs) {
    absl::StrAppend(&out, "  ", o.is_list ? "std::vector<Output> " : "Output ", o.name, ";\n");
  }
  return out + "};\n";
}

// `head.Input(x)...Finalize()` assigned to `operation`: on one line, on the
// next line, or one call per line.
std::string BuildChain(const OpInfo& info, absl::string_view head) {
  std::vector<std::string> links;
  for (const Param& p : info.params) {
    links.push_back(p.attr.empty() ? absl::StrCat(".Input(", p.name, ")")
                                   : absl::StrCat(".Attr(\"", p.attr, "\", ", p.name, ")"));
  }
  for (const OptionalAttr& attr : info.optional_attrs) {
    links.push_back(absl::StrCat(".Attr(\"", attr.attr, "\", attrs.", attr.attr, "_)"));
  }
  links.push_back(".Finalize()");
  const std::string chain = absl::StrCat(head, absl::StrJoin(links, ""), ";");
  if (chain.size() + 14 <= kColumns) return absl::StrCat("  operation = ", chain, "\n");
  if (chain.size() + 6 <= kColumns) return absl::StrCat("  operation =\n      ", chain, "\n");
  // A builder variable is short: its first call stays on its line.
  std::string out = absl::StrCat("  operation = ", head);
  for (size_t i = 0; i < links.size(); ++i) {
    const bool same_line = i == 0 && head == "builder";
    absl::StrAppend(&out, same_line ? "" : "\n                  ", links[i]);
  }
  return out + ";\n";
}

// Assigns the output members once `operation` (and `builder`) are set.
std::string AssignOutputs(const OpInfo& info) {
  std::string out;
  bool after_list = false;
  for (size_t i = 0; i < info.outputs.size(); ++i) {
    const OutputMember& o = info.outputs[i];
    bool shadowed = false;  // by a constructor parameter of the same name
    for (const Param& p : info.params) shadowed = shadowed || p.name == o.name;
    const std::string member = absl::StrCat(shadowed ? "this->" : "", o.name);
    if (o.is_list) {
      absl::StrAppend(&out, "  ", member, " = builder.OutputList(", i, ");\n");
    } else if (after_list) {  // its index depends on the lists' lengths
      absl::StrAppend(&out, "  if (auto list = builder.OutputList(", i, "); !list.empty()) ",
                      member, " = list[0];\n");
    } else {
      absl::StrAppend(&out, "  ", member, " = Output(operation, ", i, ");\n");
    }
    after_list = after_list || o.is_list;
  }
  return out;
}

std::string ConstructorDefinition(const OpInfo& info) {
  const std::string qualified = absl::StrCat(info.class_name, "::", info.class_name);
  std::string out = Call("", qualified, ParamList(info, /*with_default=*/false), " {") + "\n";
  std::string builder_args = absl::StrCat("scope, \"", info.op->name, "\"");
  if (info.node_name != info.op->name) absl::StrAppend(&builder_args, ", \"", info.node_name, "\"");
  if (info.has_list_output()) {
    absl::StrAppend(&out, "  NodeBuilder builder(", builder_args, ");\n",
                    BuildChain(info, "builder"));
  } else {
    out += BuildChain(info, absl::StrCat("NodeBuilder(", builder_args, ")"));
  }
  return out + AssignOutputs(info) + "}\n";
}

// The #includes the declarations need, standard ones first.
std::string HeaderIncludes(const FamilyDef& family, const std::string& declarations) {
  std::vector<std::string> system, project = {"client/output.h", "client/scope.h"};
  auto uses = [&](absl::string_view s) { return absl::StrContains(declarations, s); };
  if (uses("int64_t")) system.push_back("cstdint");
  if (uses("std::optional")) system.push_back("optional");
  if (uses("std::string")) system.push_back("string");
  if (uses("std::vector")) system.push_back("vector");
  if (uses("PartialTensorShape")) project.push_back("core/framework/tensor_shape.h");
  if (uses("DataType")) project.push_back("core/framework/types.h");
  for (const std::string& include : family.includes) project.push_back(include);
  std::sort(project.begin(), project.end());
  std::string out;
  for (const std::string& s : system) absl::StrAppend(&out, "#include <", s, ">\n");
  if (!system.empty()) out += "\n";
  for (const std::string& p : project) absl::StrAppend(&out, "#include \"", p, "\"\n");
  return out;
}

std::string Header(const FamilyDef& family, const std::vector<OpInfo>& infos) {
  std::vector<std::string> classes;
  for (const OpInfo& info : infos) classes.push_back(ClassDeclaration(info));
  const std::string declarations = absl::StrJoin(classes, "\n");
  const std::string guard =
      absl::StrCat("TENSORGRID_CLIENT_OPS_", absl::AsciiStrToUpper(family.name), "_H_");
  std::string out;
  AppendComment(&out, "", absl::StrCat(family.intro, "\n\n", kGeneratedNote));
  absl::StrAppend(&out, "#ifndef ", guard, "\n#define ", guard, "\n\n",
                  HeaderIncludes(family, declarations), "\n");
  absl::StrAppend(&out, "namespace tensorgrid {\nnamespace ops {\n\n", declarations,
                  "\n}  // namespace ops\n}  // namespace tensorgrid\n\n#endif  // ", guard, "\n");
  return out;
}

std::string Source(const FamilyDef& family, const std::vector<OpInfo>& infos) {
  std::vector<std::string> constructors;
  for (const OpInfo& info : infos) constructors.push_back(ConstructorDefinition(info));
  return absl::StrCat("// ", kGeneratedNote, "\n#include \"client/ops/", family.name,
                      ".h\"\n\n#include \"client/node_builder.h\"\n\n",
                      "namespace tensorgrid {\nnamespace ops {\n\n",
                      absl::StrJoin(constructors, "\n"),
                      "\n}  // namespace ops\n}  // namespace tensorgrid\n");
}

}  // namespace

absl::StatusOr<GeneratedFiles> GenerateFamily(const FamilyDef& family,
                                              const std::vector<const OpDef*>& ops) {
  std::vector<OpInfo> infos;
  for (const OpDef* op : ops) {
    const ApiDef api = GetApiDef(op->name);
    if (api.visibility != Visibility::kVisible) continue;
    absl::StatusOr<OpInfo> info = MakeOpInfo(*op, api);
    if (!info.ok()) return info.status();
    infos.push_back(*std::move(info));
  }
  std::sort(infos.begin(), infos.end(),
            [](const OpInfo& a, const OpInfo& b) { return a.class_name < b.class_name; });
  return GeneratedFiles{Header(family, infos), Source(family, infos)};
}

}  // namespace op_gen
}  // namespace tensorgrid
