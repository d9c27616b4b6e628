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

// Parses text format into `message`, skipping fields tensorgrid's protos do
// not define. On failure `*error` gets the first problem
// ("line 3, column 7: Expected ...") and `message` may be partly filled.
bool ParseTextProto(const std::string& text, google::protobuf::Message* message,
                    std::string* error);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_PROTO_TEXT_H_
