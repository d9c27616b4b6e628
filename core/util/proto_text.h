// Text-format protos (GraphDefs, SavedModels, tool inputs): parsing that reports the
// first error's line and column. (Reading the file: core/platform/file.h.)
//
//   TG_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path, "graph file"));
//   std::string error;
//   if (!ParseTextProto(bytes, &graph, &error)) return errors::InvalidArgument(error);
#ifndef TENSORGRID_CORE_UTIL_PROTO_TEXT_H_
#define TENSORGRID_CORE_UTIL_PROTO_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace tensorgrid {

// Whether the extension says text format: .pbtxt, .pbtx or .txt.
bool HasTextProtoExtension(absl::string_view path);

// What ParseTextProto does with a field the message does not define: skip
// it (files TensorFlow wrote carry fields tensorgrid's protos lack), or
// refuse it (text a user typed, where it is a typo).
enum class UnknownFields { kSkip, kRefuse };

// Parses text format into `message`. On failure `*error` gets the first
// problem ("line 3, column 7: Expected ...") and `message` may be partly
// filled.
bool ParseTextProto(const std::string& text, google::protobuf::Message* message,
                    std::string* error, UnknownFields unknown = UnknownFields::kSkip);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_PROTO_TEXT_H_
