// Reading protos from files, for the command-line tools: a whole-file read
// with errors that name the file, and text-format parsing that reports the
// first error's line and column.
//
//   TG_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path, "graph file"));
//   std::string error;
//   if (!ParseTextProto(bytes, &graph, &error)) return errors::InvalidArgument(error);
#ifndef TENSORGRID_TOOLS_PROTO_FILE_H_
#define TENSORGRID_TOOLS_PROTO_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace tensorgrid {

// The file's bytes. NotFound naming `what`, the file and the system's reason:
//   cannot read graph file 'g.pb': No such file or directory
absl::StatusOr<std::string> ReadFileToString(const std::string& path, absl::string_view what);

// Whether the extension says text format: .pbtxt, .pbtx or .txt.
bool HasTextProtoExtension(absl::string_view path);

// Parses text format into `message`, skipping fields tensorgrid's protos do
// not define. On failure `*error` gets the first problem
// ("line 3, column 7: Expected ...") and `message` may be partly filled.
bool ParseTextProto(const std::string& text, google::protobuf::Message* message,
                    std::string* error);

}  // namespace tensorgrid

#endif  // TENSORGRID_TOOLS_PROTO_FILE_H_
