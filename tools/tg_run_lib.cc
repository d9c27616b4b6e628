#include "tools/tg_run_lib.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/framework/tensor_shape.h"
#include "core/framework/types.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/proto_text.h"
#include "proto/example.pb.h"
#include "proto/saved_model.pb.h"
#include "tools/flags.h"

namespace tensorgrid {
namespace tg_run {
namespace {

// ---------------------------------------------------------------------------
// Flags

const std::vector<tools::Flag>& FlagTable() {
  // Every flag is repeatable: a repeated --graph, --target or --max_values
  // takes the last value, and --feed, --run and --fetch accumulate.
  static const auto* table = new std::vector<tools::Flag>{
      {"graph", "FILE", true,
       "GraphDef; *.pbtxt, *.pbtx, *.txt are text, others binary\n"
       "(binary falls back to text)"},
      {"saved_model", "DIR", true,
       "a SavedModel directory: load it (variables restored,\n"
       "init op run) and run --signature instead of --graph"},
      {"tag", "A,B", true, "the MetaGraphDef's tag set (default serve)"},
      {"signature", "KEY", true, "the signature to run (default serving_default)"},
      {"input", "KEY=VALUES", true,
       "a signature input by key; its dtype comes from the\n"
       "signature. Repeatable."},
      {"input_examples", "KEY=[{...}]", true,
       "a string input of serialized tf.Examples, written as\n"
       "[{\"x\":[1.5],\"w\":[\"a\"]},{\"x\":2}]: floats, ints or\n"
       "strings per feature (saved_model_cli's syntax)"},
      {"output", "K1,K2", true, "output keys to print (default: all, sorted)"},
      {"show", "", false, "list the tag set's signatures (loads nothing) and exit"},
      {"target", "T", true, "session target; \"\" (default) runs in-process"},
      {"config", "TEXT", true,
       "the session's ConfigProto in text format, e.g.\n"
       "'operation_timeout_in_ms: 5000' (how long a grpc://\n"
       "target waits for its cluster's tasks; default 60 s)\n"
       "or 'log_device_placement: true'"},
      {"run", "A,B", true, "targets (node names) run before the fetch step"},
      {"feed", "NAME=VALUES", true,
       "a tensor to feed; repeatable. NAME may carry a port\n"
       "(\"x:0\") and a dtype (\"x:int32\", \"x:0:int32\"): float\n"
       "(default), double, int32, int64, uint8, bool, string.\n"
       "VALUES: 3 | [1,2] | [[1,2],[3,4]] | [true,false] |\n"
       "[\"a\",\"b\"]; the shape follows the nesting."},
      {"fetch", "X,Y", true,
       "tensors to print (\"node\" or \"node:port\"); may be omitted\n"
       "when --run is given"},
      {"run_metadata", "FILE", true,
       "trace the fetch step (FULL_TRACE, partition graphs) and\n"
       "save its RunMetadata (binary) to FILE; view it with\n"
       "tg_inspect --trace=FILE"},
      {"max_values", "N", true,
       "print at most N values per tensor, then \"...\"\n"
       "(default 0: all)"},
  };
  return *table;
}

absl::Status ApplyFlag(const tools::FlagValue& flag, Options* options) {
  if (flag.name == "graph") {
    options->graph_path = flag.value;
  } else if (flag.name == "saved_model") {
    options->saved_model_dir = flag.value;
  } else if (flag.name == "tag") {
    if (!flag.value.empty()) return tools::AppendCommaList(flag, &options->tags);
  } else if (flag.name == "signature") {
    options->signature = flag.value;
  } else if (flag.name == "input") {
    options->inputs.push_back(flag.value);
  } else if (flag.name == "input_examples") {
    options->input_examples.push_back(flag.value);
  } else if (flag.name == "output") {
    if (!flag.value.empty()) return tools::AppendCommaList(flag, &options->outputs);
  } else if (flag.name == "show") {
    options->show = flag.value == "true";
  } else if (flag.name == "target") {
    options->target = flag.value;
  } else if (flag.name == "config") {
    return tools::ParseTextProtoFlag(flag, &options->config);
  } else if (flag.name == "run_metadata") {
    options->run_metadata_path = flag.value;
  } else if (flag.name == "feed") {
    options->feeds.push_back(flag.value);
  } else if (flag.name == "run") {
    // An empty --run or --fetch adds nothing.
    if (!flag.value.empty()) return tools::AppendCommaList(flag, &options->run_targets);
  } else if (flag.name == "fetch") {
    if (!flag.value.empty()) return tools::AppendCommaList(flag, &options->fetches);
  } else if (flag.name == "max_values") {
    if (!absl::SimpleAtoi(flag.value, &options->max_values) || options->max_values < 0) {
      return errors::InvalidArgument("--max_values wants a non-negative integer, got '", flag.value,
                                     "'");
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Feed values

const std::vector<std::pair<std::string, DataType>>& FeedTypes() {
  static const auto* types = new std::vector<std::pair<std::string, DataType>>{
      {"float", DT_FLOAT}, {"double", DT_DOUBLE}, {"int32", DT_INT32},  {"int64", DT_INT64},
      {"uint8", DT_UINT8}, {"bool", DT_BOOL},     {"string", DT_STRING}};
  return *types;
}

// One scalar as written: its text (unescaped for strings) and 0-based offset.
struct Token {
  std::string text;
  size_t pos = 0;
  bool quoted = false;
};

// Parses the nesting of VALUES into a flat token list and a shape; the
// tokens are converted to the dtype afterwards (FillTensor).
class ValueParser {
 public:
  explicit ValueParser(absl::string_view text) : text_(text) {}

  absl::Status Parse(std::vector<int64_t>* shape, std::vector<Token>* tokens) {
    tokens_ = tokens;
    TG_RETURN_IF_ERROR(ParseValue(0, shape));
    SkipSpace();
    if (pos_ < text_.size()) return Error(pos_, "unexpected text after the value");
    return absl::OkStatus();
  }

 private:
  absl::Status ParseValue(int depth, std::vector<int64_t>* shape) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error(pos_, "expected a value, found the end");
    if (text_[pos_] == '[') return ParseList(depth, shape);
    shape->clear();
    return ParseScalar();
  }

  absl::Status ParseList(int depth, std::vector<int64_t>* shape) {
    if (depth >= kMaxTensorRank) {
      return Error(pos_, absl::StrCat("nesting deeper than the maximum rank ", kMaxTensorRank));
    }
    ++pos_;  // '['
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      *shape = {0};
      return absl::OkStatus();
    }
    std::optional<std::vector<int64_t>> element_shape;
    int64_t count = 0;
    while (true) {
      SkipSpace();
      const size_t element_pos = pos_;
      std::vector<int64_t> s;
      TG_RETURN_IF_ERROR(ParseValue(depth + 1, &s));
      if (!element_shape) {
        element_shape = s;
      } else if (s != *element_shape) {
        return Error(element_pos, absl::StrCat("ragged nesting: element has shape [",
                                               absl::StrJoin(s, ","), "] but the first has [",
                                               absl::StrJoin(*element_shape, ","), "]"));
      }
      ++count;
      SkipSpace();
      if (pos_ >= text_.size()) return Error(pos_, "expected ',' or ']', found the end");
      const char c = text_[pos_++];
      if (c == ']') break;
      if (c != ',') {
        return Error(pos_ - 1,
                     absl::StrCat("expected ',' or ']', found '", std::string(1, c), "'"));
      }
    }
    *shape = {count};
    shape->insert(shape->end(), element_shape->begin(), element_shape->end());
    return absl::OkStatus();
  }

  absl::Status ParseScalar() {
    if (text_[pos_] == '"') return ParseQuoted();
    Token token;
    token.pos = pos_;
    while (pos_ < text_.size() && !IsDelimiter(text_[pos_])) ++pos_;
    token.text = std::string(text_.substr(token.pos, pos_ - token.pos));
    if (token.text.empty()) {
      return Error(token.pos, absl::StrCat("expected a value, found '",
                                           std::string(1, text_[token.pos]), "'"));
    }
    tokens_->push_back(std::move(token));
    return absl::OkStatus();
  }

  absl::Status ParseQuoted() {
    Token token;
    token.pos = pos_;
    token.quoted = true;
    size_t end = pos_ + 1;
    while (end < text_.size() && text_[end] != '"') end += text_[end] == '\\' ? 2 : 1;
    if (end >= text_.size()) return Error(token.pos, "unterminated string");
    std::string error;
    if (!absl::CUnescape(text_.substr(pos_ + 1, end - pos_ - 1), &token.text, &error)) {
      return Error(token.pos, absl::StrCat("bad escape in string: ", error));
    }
    pos_ = end + 1;
    tokens_->push_back(std::move(token));
    return absl::OkStatus();
  }

  static bool IsDelimiter(char c) {
    return c == ',' || c == '[' || c == ']' || c == '"' || absl::ascii_isspace(c);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  absl::Status Error(size_t pos, absl::string_view what) const {
    return errors::InvalidArgument("column ", pos + 1, ": ", what);
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::vector<Token>* tokens_ = nullptr;
};

absl::Status TokenError(const Token& token, absl::string_view what) {
  return errors::InvalidArgument("column ", token.pos + 1, ": ", what);
}

absl::Status ExpectUnquoted(const Token& token, DataType dtype) {
  if (!token.quoted) return absl::OkStatus();
  return TokenError(token,
                    absl::StrCat("expected a ", DataTypeString(dtype), ", found a quoted string"));
}

template <typename T>
absl::Status ConvertFloating(const Token& token, T* out) {
  TG_RETURN_IF_ERROR(ExpectUnquoted(token, DataTypeToEnum<T>::value));
  double d;
  if (!absl::SimpleAtod(token.text, &d)) {
    return TokenError(token, absl::StrCat("'", token.text, "' is not a valid ",
                                          DataTypeString(DataTypeToEnum<T>::value)));
  }
  // SimpleAtod turns overflow into inf; only an explicit "inf" may be infinite.
  const bool wrote_inf = absl::StrContains(absl::AsciiStrToLower(token.text), "inf");
  if ((std::isinf(d) && !wrote_inf) ||
      (std::isfinite(d) && std::fabs(d) > std::numeric_limits<T>::max())) {
    return TokenError(token, absl::StrCat("'", token.text, "' is out of range for ",
                                          DataTypeString(DataTypeToEnum<T>::value)));
  }
  *out = static_cast<T>(d);
  return absl::OkStatus();
}

template <typename T>
absl::Status ConvertInteger(const Token& token, T* out) {
  TG_RETURN_IF_ERROR(ExpectUnquoted(token, DataTypeToEnum<T>::value));
  int64_t v;
  if (!absl::SimpleAtoi(token.text, &v)) {
    return TokenError(token, absl::StrCat("'", token.text, "' is not a valid ",
                                          DataTypeString(DataTypeToEnum<T>::value)));
  }
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
    return TokenError(token, absl::StrCat("'", token.text, "' is out of range for ",
                                          DataTypeString(DataTypeToEnum<T>::value)));
  }
  *out = static_cast<T>(v);
  return absl::OkStatus();
}

// Converts one token to the element type of a feed dtype.
absl::Status ConvertToken(const Token& token, float* out) { return ConvertFloating(token, out); }
absl::Status ConvertToken(const Token& token, double* out) { return ConvertFloating(token, out); }
absl::Status ConvertToken(const Token& token, int32_t* out) { return ConvertInteger(token, out); }
absl::Status ConvertToken(const Token& token, int64_t* out) { return ConvertInteger(token, out); }
absl::Status ConvertToken(const Token& token, uint8_t* out) { return ConvertInteger(token, out); }
absl::Status ConvertToken(const Token& token, bool* out) {
  TG_RETURN_IF_ERROR(ExpectUnquoted(token, DT_BOOL));
  if (token.text == "true" || token.text == "false") {
    *out = token.text == "true";
    return absl::OkStatus();
  }
  return TokenError(token, absl::StrCat("expected true or false, found '", token.text, "'"));
}
absl::Status ConvertToken(const Token& token, std::string* out) {
  if (!token.quoted) {
    return TokenError(token,
                      absl::StrCat("strings must be in double quotes, found '", token.text, "'"));
  }
  *out = token.text;
  return absl::OkStatus();
}

template <typename T>
absl::Status FillTensor(const std::vector<Token>& tokens, Tensor* tensor) {
  T* data = tensor->data<T>();
  for (size_t i = 0; i < tokens.size(); ++i) {
    TG_RETURN_IF_ERROR(ConvertToken(tokens[i], &data[i]));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Formatting

// Tries 1, 2, ... significant digits; `max_digits` (9 for float, 17 for
// double) always round-trips.
template <typename T>
std::string FormatShortest(T value, int max_digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[64];
  for (int digits = 1; digits < max_digits; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(value));
    const T back = std::is_same_v<T, float> ? std::strtof(buf, nullptr)
                                            : static_cast<T>(std::strtod(buf, nullptr));
    if (back == value) return buf;
  }
  std::snprintf(buf, sizeof(buf), "%.*g", max_digits, static_cast<double>(value));
  return buf;
}

// Appends one element in the feed syntax.
template <typename T>
void AppendElement(const T& v, std::string* out) {
  absl::StrAppend(out, v);
}
void AppendElement(float v, std::string* out) { out->append(FormatFloat(v)); }
void AppendElement(double v, std::string* out) { out->append(FormatDouble(v)); }
void AppendElement(half v, std::string* out) { out->append(FormatFloat(static_cast<float>(v))); }
void AppendElement(bfloat16 v, std::string* out) {
  out->append(FormatFloat(static_cast<float>(v)));
}
void AppendElement(bool v, std::string* out) { out->append(v ? "true" : "false"); }
void AppendElement(uint8_t v, std::string* out) { absl::StrAppend(out, static_cast<int>(v)); }
void AppendElement(int8_t v, std::string* out) { absl::StrAppend(out, static_cast<int>(v)); }
void AppendElement(const std::string& v, std::string* out) {
  absl::StrAppend(out, "\"", absl::CEscape(v), "\"");
}
void AppendElement(const ResourceHandle& v, std::string* out) {
  absl::StrAppend(out, "<", v.DebugString(), ">");
}

// Writes the nested lists of a row-major array; stops after `max_values`
// elements (0 = no limit) and writes "..." in place of the rest.
template <typename T>
class NestedWriter {
 public:
  NestedWriter(const Tensor& tensor, int64_t max_values)
      : data_(tensor.data<T>()), shape_(tensor.shape()), max_values_(max_values) {}

  std::string Write() {
    int64_t offset = 0;
    Write(0, &offset);
    return std::move(out_);
  }

 private:
  void Write(int dim, int64_t* offset) {
    if (dim == shape_.dims()) {
      AppendElement(data_[(*offset)++], &out_);
      ++written_;
      return;
    }
    out_.push_back('[');
    for (int64_t i = 0; i < shape_.dim_size(dim) && !cut_; ++i) {
      if (i > 0) out_.push_back(',');
      if (max_values_ > 0 && written_ >= max_values_) {
        // The "..." stands for this element and every later one.
        out_.append("...");
        cut_ = true;
        break;
      }
      Write(dim + 1, offset);
    }
    out_.push_back(']');
  }

  const T* data_;
  const TensorShape& shape_;
  const int64_t max_values_;
  int64_t written_ = 0;
  bool cut_ = false;
  std::string out_;
};

}  // namespace

// ---------------------------------------------------------------------------

absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args) {
  Options options;
  TG_ASSIGN_OR_RETURN(options.help,
                      tools::ParseArgs(FlagTable(), args, [&](const tools::FlagValue& flag) {
                        return ApplyFlag(flag, &options);
                      }));
  if (options.help) return options;
  if (!options.saved_model_dir.empty()) {
    if (!options.graph_path.empty()) {
      return errors::InvalidArgument("give --graph or --saved_model, not both");
    }
    if (!options.feeds.empty() || !options.fetches.empty() || !options.run_targets.empty()) {
      return errors::InvalidArgument(
          "--saved_model runs a signature by its keys: use --input and --output, not --feed, "
          "--fetch or --run");
    }
    if (options.tags.empty()) options.tags = {"serve"};
    if (options.signature.empty()) options.signature = "serving_default";
    return options;
  }
  if (!options.inputs.empty() || !options.input_examples.empty() || !options.outputs.empty() ||
      !options.tags.empty() ||
      !options.signature.empty() || options.show) {
    return errors::InvalidArgument(
        "--input, --input_examples, --output, --tag, --signature and --show need "
        "--saved_model");
  }
  if (options.graph_path.empty()) return errors::InvalidArgument("--graph or --saved_model is required");
  if (options.fetches.empty() && options.run_targets.empty()) {
    return errors::InvalidArgument("nothing to do: give --fetch and/or --run");
  }
  if (!options.feeds.empty() && options.fetches.empty()) {
    return errors::InvalidArgument("--feed applies to the --fetch step; give --fetch too");
  }
  return options;
}

std::string Usage() {
  return R"(usage: tg_run --graph=FILE [--target=T] [--run=A,B] [--feed=NAME=VALUES]...
              [--fetch=X,Y] [--max_values=N]
       tg_run --saved_model=DIR [--tag=serve] [--signature=serving_default]
              [--input=KEY=VALUES]... [--output=K1,K2] [--target=T] [--show]

Loads a GraphDef, runs the --run targets (each in its own step, in order), then
one step that feeds the --feed tensors and prints each --fetch tensor:
  NAME DTYPE [SHAPE] VALUES          e.g.  y float [2,2] [[1,2],[3,4]]
Or loads a SavedModel and runs one signature, printing its outputs by key:
  KEY DTYPE [SHAPE] VALUES           e.g.  y float [3] [2.5,3,3.5]

)" + tools::FlagsHelp(FlagTable()) +
         R"(
Exit status: 0 on success, 1 when loading or running the graph fails
("error: CODE: message" on stderr), 2 for bad flags or feed values.
)";
}

const std::vector<std::string>& FeedTypeNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& t : FeedTypes()) v->push_back(t.first);
    return v;
  }();
  return *names;
}

TensorNameAndType SplitNameAndType(absl::string_view spec) {
  TensorNameAndType result;
  result.name = std::string(spec);
  const size_t colon = spec.rfind(':');
  if (colon == absl::string_view::npos) return result;
  const absl::string_view suffix = spec.substr(colon + 1);
  for (const auto& [type_name, dtype] : FeedTypes()) {
    if (suffix == type_name) {
      result.name = std::string(spec.substr(0, colon));
      result.dtype = dtype;
      break;
    }
  }
  return result;
}

absl::StatusOr<Tensor> ParseTensorValues(absl::string_view text, DataType dtype) {
  std::vector<int64_t> dims;
  std::vector<Token> tokens;
  TG_RETURN_IF_ERROR(ValueParser(text).Parse(&dims, &tokens));
  TG_ASSIGN_OR_RETURN(TensorShape shape, BuildTensorShape(dims));
  TG_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(dtype, shape));
  absl::Status status =
      errors::InvalidArgument("dtype ", DataTypeString(dtype), " cannot be fed from text");
  switch (dtype) {
    case DT_FLOAT: status = FillTensor<float>(tokens, &tensor); break;
    case DT_DOUBLE: status = FillTensor<double>(tokens, &tensor); break;
    case DT_INT32: status = FillTensor<int32_t>(tokens, &tensor); break;
    case DT_INT64: status = FillTensor<int64_t>(tokens, &tensor); break;
    case DT_UINT8: status = FillTensor<uint8_t>(tokens, &tensor); break;
    case DT_BOOL: status = FillTensor<bool>(tokens, &tensor); break;
    case DT_STRING: status = FillTensor<std::string>(tokens, &tensor); break;
    default: break;
  }
  TG_RETURN_IF_ERROR(status);
  return tensor;
}

absl::StatusOr<Feed> ParseFeed(absl::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == absl::string_view::npos) {
    return errors::InvalidArgument("feed '", spec, "': expected NAME=VALUES");
  }
  TensorNameAndType lhs = SplitNameAndType(spec.substr(0, eq));
  if (lhs.name.empty()) {
    return errors::InvalidArgument("feed '", spec, "': empty tensor name");
  }
  const absl::string_view values = spec.substr(eq + 1);
  absl::StatusOr<Tensor> tensor = ParseTensorValues(values, lhs.dtype);
  if (!tensor.ok()) {
    return errors::InvalidArgument("feed '", lhs.name, "', value '", values,
                                   "': ", tensor.status().message());
  }
  return Feed{std::move(lhs.name), *std::move(tensor)};
}

std::string FormatFloat(float value) { return FormatShortest<float>(value, 9); }
std::string FormatDouble(double value) { return FormatShortest<double>(value, 17); }

std::string FormatValues(const Tensor& tensor, int64_t max_values) {
  std::string out;
  if (tensor.raw_data() == nullptr && tensor.NumElements() > 0) return "<no data>";
  switch (tensor.dtype()) {
    case DT_STRING: return NestedWriter<std::string>(tensor, max_values).Write();
    case DT_RESOURCE: return NestedWriter<ResourceHandle>(tensor, max_values).Write();
    default: break;
  }
  TG_SWITCH_POD_TYPES(tensor.dtype(), out = "<unprintable>",
                      { out = NestedWriter<T>(tensor, max_values).Write(); })
  return out;
}

std::string FormatFetch(absl::string_view name, const Tensor& tensor, int64_t max_values) {
  return absl::StrCat(name, " ", DataTypeString(tensor.dtype()), " ", tensor.shape().DebugString(),
                      " ", FormatValues(tensor, max_values));
}

absl::StatusOr<std::pair<std::string, std::string>> SplitSignatureInput(absl::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return errors::InvalidArgument("--input '", spec, "' is not KEY=VALUES");
  }
  return std::make_pair(std::string(spec.substr(0, eq)), std::string(spec.substr(eq + 1)));
}

namespace {

// Reads [{"key": VALUES, ...}, ...]: the objects' keys and the text of each
// value (a list or a scalar, handed to ParseTensorValues).
class ExamplesReader {
 public:
  explicit ExamplesReader(absl::string_view text) : text_(text) {}

  using Example = std::vector<std::pair<std::string, absl::string_view>>;

  absl::StatusOr<std::vector<Example>> Read() {
    std::vector<Example> examples;
    TG_RETURN_IF_ERROR(Expect('['));
    if (Peek() == ']') {
      ++pos_;
      return Finish(examples);
    }
    while (true) {
      TG_RETURN_IF_ERROR(Expect('{'));
      Example example;
      if (Peek() != '}') {
        while (true) {
          TG_ASSIGN_OR_RETURN(std::string key, QuotedString());
          TG_RETURN_IF_ERROR(Expect(':'));
          TG_ASSIGN_OR_RETURN(absl::string_view value, ValueText());
          example.emplace_back(std::move(key), value);
          if (Peek() != ',') break;
          ++pos_;
        }
      }
      TG_RETURN_IF_ERROR(Expect('}'));
      examples.push_back(std::move(example));
      if (Peek() != ',') break;
      ++pos_;
    }
    TG_RETURN_IF_ERROR(Expect(']'));
    return Finish(examples);
  }

 private:
  absl::StatusOr<std::vector<Example>> Finish(std::vector<Example>& examples) {
    if (Peek() != '\0') return Error("unexpected text after the list");
    return std::move(examples);
  }
  char Peek() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  absl::Status Error(absl::string_view what) const {
    return errors::InvalidArgument("column ", pos_ + 1, ": ", what);
  }
  absl::Status Expect(char c) {
    if (Peek() != c) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
    return absl::OkStatus();
  }
  // The end of the string literal starting at `from` (its opening quote).
  absl::StatusOr<size_t> StringEnd(size_t from) const {
    for (size_t i = from + 1; i < text_.size(); ++i) {
      if (text_[i] == '\\') {
        ++i;
      } else if (text_[i] == '"') {
        return i + 1;
      }
    }
    return errors::InvalidArgument("column ", from + 1, ": unterminated string");
  }
  absl::StatusOr<std::string> QuotedString() {
    if (Peek() != '"') return Error("expected a feature name in double quotes");
    TG_ASSIGN_OR_RETURN(size_t end, StringEnd(pos_));
    std::string out;
    std::string error;
    if (!absl::CUnescape(text_.substr(pos_ + 1, end - pos_ - 2), &out, &error)) {
      return Error(error);
    }
    pos_ = end;
    return out;
  }
  // A value's text: a bracketed list (strings skipped whole) or a scalar up
  // to the next ',' or '}'.
  absl::StatusOr<absl::string_view> ValueText() {
    Peek();
    const size_t start = pos_;
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        TG_ASSIGN_OR_RETURN(pos_, StringEnd(pos_));
        continue;
      }
      if (depth == 0 && (c == ',' || c == '}')) break;
      if (c == '{' || c == '}') return Error("unbalanced '['");
      if (c == '[') ++depth;
      if (c == ']' && --depth < 0) return Error("unbalanced ']'");
      ++pos_;
    }
    if (depth != 0) return Error("unbalanced '['");
    if (pos_ == start) return Error("expected a value");
    return absl::StripAsciiWhitespace(text_.substr(start, pos_ - start));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// The feature kind a value's text asks for: bytes when it has strings,
// float when a number has a point, an exponent, inf or nan, else int64.
DataType FeatureDtype(absl::string_view value) {
  if (absl::StrContains(value, '"')) return DT_STRING;
  for (char c : value) {
    if (c == '.' || c == 'e' || c == 'E' || c == 'n' || c == 'N') return DT_FLOAT;
  }
  return DT_INT64;
}

}  // namespace

absl::StatusOr<Tensor> ParseExamples(absl::string_view text) {
  TG_ASSIGN_OR_RETURN(std::vector<ExamplesReader::Example> examples, ExamplesReader(text).Read());
  Tensor out(DT_STRING, TensorShape({static_cast<int64_t>(examples.size())}));
  for (size_t i = 0; i < examples.size(); ++i) {
    Example example;
    auto& features = *example.mutable_features()->mutable_feature();
    for (const auto& [key, value_text] : examples[i]) {
      const std::string where = absl::StrCat("example ", i, ", feature '", key, "'");
      if (features.count(key)) return errors::InvalidArgument(where, ": given twice");
      const DataType dtype = FeatureDtype(value_text);
      absl::StatusOr<Tensor> values = ParseTensorValues(value_text, dtype);
      if (!values.ok()) return WithContext(values.status(), where);
      if (values->dims() > 1) {
        return errors::InvalidArgument(where, ": a feature is a flat list, not ",
                                       values->shape().DebugString());
      }
      if (values->NumElements() == 0) {
        return errors::InvalidArgument(where, ": an empty list has no kind; leave the feature out");
      }
      Feature& feature = features[key];
      const int64_t n = values->NumElements();
      if (dtype == DT_STRING) {
        for (int64_t j = 0; j < n; ++j) {
          feature.mutable_bytes_list()->add_value(values->data<std::string>()[j]);
        }
      } else if (dtype == DT_FLOAT) {
        for (int64_t j = 0; j < n; ++j) {
          feature.mutable_float_list()->add_value(values->data<float>()[j]);
        }
      } else {
        for (int64_t j = 0; j < n; ++j) {
          feature.mutable_int64_list()->add_value(values->data<int64_t>()[j]);
        }
      }
    }
    if (!example.SerializeToString(&out.data<std::string>()[i])) {
      return errors::Internal("serializing example ", i, " failed");
    }
  }
  return out;
}

namespace {

std::string ShapeText(const TensorShapeProto& shape) {
  absl::StatusOr<PartialTensorShape> partial = PartialTensorShape::FromProto(shape);
  return partial.ok() ? partial->DebugString() : "<invalid>";
}

void AppendTensorInfos(const char* kind, const google::protobuf::Map<std::string, TensorInfo>& infos,
                       std::string* out) {
  std::vector<std::string> keys;
  for (const auto& [key, info] : infos) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) {
    const TensorInfo& info = infos.at(key);
    absl::StrAppend(out, "  ", kind, " ", key, ": ", DataTypeString(info.dtype()), " ",
                    ShapeText(info.tensor_shape()), " (",
                    info.name().empty() ? "sparse or composite" : info.name(), ")\n");
  }
}

}  // namespace

std::string FormatSignatures(const MetaGraphDef& meta_graph) {
  std::vector<std::string> keys;
  for (const auto& [key, signature] : meta_graph.signature_def()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  std::string out;
  for (const std::string& key : keys) {
    const SignatureDef& signature = meta_graph.signature_def().at(key);
    absl::StrAppend(&out, "signature '", key, "' (", signature.method_name(), ")\n");
    AppendTensorInfos("input ", signature.inputs(), &out);
    AppendTensorInfos("output", signature.outputs(), &out);
  }
  return out;
}

absl::StatusOr<GraphDef> LoadGraphDef(const std::string& path) {
  TG_ASSIGN_OR_RETURN(const std::string content, ReadFileToString(path, "graph file"));

  GraphDef graph;
  std::string text_error;
  if (HasTextProtoExtension(path)) {
    if (!ParseTextProto(content, &graph, &text_error)) {
      return errors::InvalidArgument("cannot parse '", path, "' as a text GraphDef: ", text_error);
    }
  } else if (!graph.ParseFromString(content) || graph.node_size() == 0) {
    // Not binary (or binary noise that decoded to nothing): try text.
    graph.Clear();
    if (!ParseTextProto(content, &graph, &text_error)) {
      SavedModel saved_model;
      if (saved_model.ParseFromString(content) && saved_model.meta_graphs_size() > 0) {
        return errors::InvalidArgument(
            "'", path, "' is a SavedModel, not a GraphDef: tg_run --saved_model=", Dirname(path),
            " runs it, and with --show lists its signatures");
      }
      return errors::InvalidArgument(
          "cannot parse '", path,
          "' as a GraphDef: not a binary GraphDef, and as text: ", text_error);
    }
  }
  if (graph.node_size() == 0) {
    return errors::InvalidArgument("graph file '", path, "' holds no nodes");
  }
  return graph;
}

}  // namespace tg_run
}  // namespace tensorgrid
