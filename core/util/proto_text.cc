#include "core/util/proto_text.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/platform/status.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace tensorgrid {

namespace {

class CollectFirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_.empty())
      error_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace

bool HasTextProtoExtension(absl::string_view path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".pbtx") ||
         absl::EndsWith(path, ".txt");
}

bool ParseTextProto(const std::string& text, google::protobuf::Message* message,
                    std::string* error, UnknownFields unknown) {
  CollectFirstError errors;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowUnknownField(unknown == UnknownFields::kSkip);
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(text, message)) return true;
  *error = errors.error().empty() ? "malformed text" : errors.error();
  return false;
}

}  // namespace tensorgrid
