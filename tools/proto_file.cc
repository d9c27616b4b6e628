#include "tools/proto_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

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

absl::StatusOr<std::string> ReadFileToString(const std::string& path, absl::string_view what) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return errors::NotFound("cannot read ", what, " '", path, "': ", std::strerror(errno));
  }
  std::string content;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) content.append(buf, n);
  const int error = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (error != 0) {
    return errors::NotFound("cannot read ", what, " '", path, "': ", std::strerror(error));
  }
  return content;
}

bool HasTextProtoExtension(absl::string_view path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".pbtx") ||
         absl::EndsWith(path, ".txt");
}

bool ParseTextProto(const std::string& text, google::protobuf::Message* message,
                    std::string* error) {
  CollectFirstError errors;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(text, message)) return true;
  *error = errors.error().empty() ? "malformed text" : errors.error();
  return false;
}

}  // namespace tensorgrid
