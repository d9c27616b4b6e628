// The logic of the tg_run command-line tool, kept out of main() so that it can
// be unit tested: flag parsing, the --feed value syntax, output formatting and
// GraphDef loading. Nothing here runs a graph.
//
//   TG_ASSIGN_OR_RETURN(Feed feed, ParseFeed("x:int32=[[1,2],[3,4]]"));
//   // feed.name == "x"; feed.value is an int32 tensor of shape [2,2]
//   std::string line = FormatFetch("y", y, /*max_values=*/0);
//   // "y float [2] [1,2]"
//
// Value syntax (feeds in, fetches out): a scalar `3`, a list `[1,2]`, nested
// lists `[[1,2],[3,4]]` (the shape follows the nesting and must not be
// ragged), `true`/`false` for bool, double-quoted strings with C escapes.
#ifndef TENSORGRID_TOOLS_TG_RUN_LIB_H_
#define TENSORGRID_TOOLS_TG_RUN_LIB_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/tensor.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "proto/meta_graph.pb.h"

namespace tensorgrid {
namespace tg_run {

// The command line, after ParseFlags.
struct Options {
  std::string graph_path;                // --graph
  std::string target;                    // --target ("" = in-process)
  ConfigProto config;                    // --config, the session's (both modes)
  std::vector<std::string> run_targets;  // --run, in order
  std::vector<std::string> feeds;        // --feed, unparsed "name[:dtype]=VALUES"
  std::vector<std::string> fetches;      // --fetch
  int64_t max_values = 0;                // --max_values; 0 prints every value
  std::string run_metadata_path;         // --run_metadata: save the fetch step's RunMetadata
  bool help = false;                     // --help / -h

  // SavedModel mode (docs/saved_model.md): run one signature by its keys.
  std::string saved_model_dir;           // --saved_model
  std::vector<std::string> tags;         // --tag (default {"serve"})
  std::string signature;                 // --signature (default "serving_default")
  std::vector<std::string> inputs;       // --input, unparsed "KEY=VALUES"
  std::vector<std::string> input_examples;  // --input_examples, unparsed "KEY=[{...},...]"
  std::vector<std::string> outputs;      // --output keys (default: all)
  bool show = false;                     // --show: list the tag set's signatures
};

// Parses the arguments after argv[0]. Flags take `--flag=value` or
// `--flag value`; --feed, --run, --fetch, --tag, --input and --output may
// repeat (they accumulate). InvalidArgument for unknown flags, missing
// values, neither --graph nor --saved_model (or both), and flags of the
// other mode; with --graph: neither --fetch nor --run, or --feed without
// --fetch (unless --help).
absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args);

// The --help text.
std::string Usage();

// A feed's left-hand side split into tensor name and dtype.
struct TensorNameAndType {
  std::string name;
  DataType dtype = DT_FLOAT;
};

// "x:int32" -> {"x", DT_INT32}; "x:0:int32" -> {"x:0", DT_INT32};
// "x:0" -> {"x:0", DT_FLOAT}. A trailing ":suffix" is taken as the dtype only
// when it is one of FeedTypeNames(); otherwise it stays part of the name.
TensorNameAndType SplitNameAndType(absl::string_view spec);

// The dtype names a feed may carry: float double int32 int64 uint8 bool string.
const std::vector<std::string>& FeedTypeNames();

// Parses VALUES into a tensor of `dtype`. InvalidArgument with the 1-based
// column of the offending character for syntax errors, ragged nesting, and
// values that do not fit `dtype`.
absl::StatusOr<Tensor> ParseTensorValues(absl::string_view text, DataType dtype);

struct Feed {
  std::string name;
  Tensor value;
};

// Parses "name=VALUES" or "name:dtype=VALUES"; errors name the feed.
absl::StatusOr<Feed> ParseFeed(absl::string_view spec);

// Splits a signature input "KEY=VALUES" at its first '=' (the values are
// parsed once the signature says their dtype). InvalidArgument without '='
// or with an empty key.
absl::StatusOr<std::pair<std::string, std::string>> SplitSignatureInput(absl::string_view spec);

// tf.Examples written as saved_model_cli's --input_examples does:
//   [{"x":[1.5],"words":["a","b"]},{"x":2.5,"ids":[1,2,3]}]
// one object per Example, each key a feature: a list (or one value) of
// floats (a number with '.', an exponent, inf or nan) -> float_list,
// integers -> int64_list, or double-quoted strings -> bytes_list. Returns the
// serialized Examples as a string tensor of shape [N]. InvalidArgument naming
// the example and feature for mixed kinds, nested or empty lists, bad syntax.
absl::StatusOr<Tensor> ParseExamples(absl::string_view text);

// --show's text for one MetaGraphDef's signatures:
//   signature 'serving_default' (tensorflow/serving/predict)
//     input  x: float [?] (x:0)
//     output y: float [?] (y:0)
std::string FormatSignatures(const MetaGraphDef& meta_graph);

// The shortest decimal text that reads back as the same value ("2", "0.1",
// "1e+20", "inf", "nan").
std::string FormatFloat(float value);
std::string FormatDouble(double value);

// The tensor's values in the feed syntax ("[[1,2],[3,4]]"). With max_values > 0
// at most that many values are printed and "..." marks the cut.
std::string FormatValues(const Tensor& tensor, int64_t max_values);

// One output line (no newline): "name dtype [shape] values".
std::string FormatFetch(absl::string_view name, const Tensor& tensor, int64_t max_values);

// Reads a GraphDef. *.pbtxt, *.pbtx and *.txt are parsed as text; anything
// else as binary, falling back to text. Unknown text fields are skipped.
// NotFound when the file cannot be read, InvalidArgument when it does not
// parse or holds no nodes; messages name the file.
absl::StatusOr<GraphDef> LoadGraphDef(const std::string& path);

}  // namespace tg_run
}  // namespace tensorgrid

#endif  // TENSORGRID_TOOLS_TG_RUN_LIB_H_
