// tg_run: loads a GraphDef, runs targets, feeds tensors and prints fetches;
// or loads a SavedModel and runs one of its signatures by key.
//
//   tg_run --graph=model.pbtxt --run=init --feed='x=[[1,2],[3,4]]' --fetch=y,z
//   tg_run --saved_model=/models/half_plus_two/123 --input='x=[1,2,3]'
//
// See docs/tg_run.md and `tg_run --help`. The parsing and printing live in
// tg_run_lib; this file only drives a Session.
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/saved_model/loader.h"
#include "client/saved_model/signature_runner.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "tools/flags.h"
#include "tools/tg_run_lib.h"

namespace tensorgrid {
namespace tg_run {
namespace {

absl::Status WriteRunMetadata(const std::string& path, const RunMetadata& metadata) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !metadata.SerializeToOstream(&out) || !out.flush()) {
    return errors::Unavailable("cannot write run metadata to '", path, "'");
  }
  return absl::OkStatus();
}

// Creates the session, runs each --run target in its own step, then one step
// for the feeds and fetches, and prints the fetched tensors to stdout.
absl::Status RunGraph(const Options& options, const GraphDef& graph,
                      const std::vector<std::pair<std::string, Tensor>>& feeds) {
  SessionOptions session_options;
  session_options.target = options.target;
  session_options.config = options.config;
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(session_options));
  TG_RETURN_IF_ERROR(WithContext(
      session->Create(graph), absl::StrCat("creating a session for '", options.graph_path, "'")));
  std::vector<Tensor> outputs;
  for (const std::string& target : options.run_targets) {
    TG_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {target}, &outputs),
                                   absl::StrCat("running target '", target, "'")));
  }
  if (!options.fetches.empty()) {
    RunOptions run_options;
    RunMetadata metadata;
    const bool trace = !options.run_metadata_path.empty();
    if (trace) {
      run_options.set_trace_level(RunOptions::FULL_TRACE);
      run_options.set_output_partition_graphs(true);
    }
    TG_RETURN_IF_ERROR(session->Run(run_options, feeds, options.fetches, {}, &outputs,
                                    trace ? &metadata : nullptr));
    if (trace) TG_RETURN_IF_ERROR(WriteRunMetadata(options.run_metadata_path, metadata));
    for (size_t i = 0; i < outputs.size() && i < options.fetches.size(); ++i) {
      std::cout << FormatFetch(options.fetches[i], outputs[i], options.max_values) << "\n";
    }
  }
  std::cout.flush();
  return session->Close();
}

// Loads the SavedModel and runs --signature with the --input values (each
// parsed as the signature's dtype for its key), printing outputs by key.
// Sets *bad_value when an --input or --input_examples value is what failed
// (it does not parse as its input's dtype, or the key is given twice): a
// bad flag value, as a bad --feed value is.
absl::Status RunSavedModel(const Options& options, bool* bad_value) {
  const std::unordered_set<std::string> tags(options.tags.begin(), options.tags.end());
  if (options.show) {  // reads the MetaGraphDef only: no session, nothing run
    TG_ASSIGN_OR_RETURN(MetaGraphDef meta_graph,
                        ReadMetaGraphDefFromSavedModel(options.saved_model_dir, tags));
    std::cout << FormatSignatures(meta_graph);
    return absl::OkStatus();
  }
  SessionOptions session_options;
  session_options.target = options.target;
  session_options.config = options.config;
  SavedModelBundle bundle;
  TG_RETURN_IF_ERROR(
      LoadSavedModel(session_options, RunOptions(), options.saved_model_dir, tags, &bundle));
  TG_ASSIGN_OR_RETURN(auto runner, SignatureRunner::Create(&bundle, options.signature));
  std::map<std::string, Tensor> inputs;
  for (const std::string& spec : options.inputs) {
    *bad_value = true;
    TG_ASSIGN_OR_RETURN(auto key_values, SplitSignatureInput(spec));
    *bad_value = false;
    const auto& signature_inputs = runner->signature_def().inputs();
    auto it = signature_inputs.find(key_values.first);
    if (it == signature_inputs.end()) {
      return runner->NoSuchInput(key_values.first);
    }
    absl::StatusOr<Tensor> value = ParseTensorValues(key_values.second, it->second.dtype());
    *bad_value = true;
    if (!value.ok()) {
      return WithContext(value.status(), absl::StrCat("--input '", key_values.first, "'"));
    }
    if (!inputs.emplace(key_values.first, *std::move(value)).second) {
      return errors::InvalidArgument("--input '", key_values.first, "' is given more than once");
    }
    *bad_value = false;
  }
  for (const std::string& spec : options.input_examples) {
    *bad_value = true;
    TG_ASSIGN_OR_RETURN(auto key_values, SplitSignatureInput(spec));
    absl::StatusOr<Tensor> examples = ParseExamples(key_values.second);
    if (!examples.ok()) {
      return WithContext(examples.status(),
                         absl::StrCat("--input_examples '", key_values.first, "'"));
    }
    if (!inputs.emplace(key_values.first, *std::move(examples)).second) {
      return errors::InvalidArgument("--input_examples '", key_values.first,
                                     "' is given more than once (or also as an --input)");
    }
    *bad_value = false;
  }
  TG_ASSIGN_OR_RETURN(auto outputs, runner->Run(inputs, options.outputs));
  const std::vector<std::string> keys =
      options.outputs.empty() ? runner->output_keys() : options.outputs;
  for (const std::string& key : keys) {
    std::cout << FormatFetch(key, outputs.at(key), options.max_values) << "\n";
  }
  std::cout.flush();
  runner.reset();
  return bundle.session->Close();
}

int Main(const std::vector<std::string>& args) {
  absl::StatusOr<Options> options = ParseFlags(args);
  if (!options.ok()) return tools::ReportUsageError("tg_run", options.status().message(), Usage());
  if (options->help) {
    std::cout << Usage();
    return 0;
  }

  if (!options->saved_model_dir.empty()) {
    bool bad_value = false;
    const absl::Status status = RunSavedModel(*options, &bad_value);
    return bad_value ? tools::ReportUsageError("tg_run", status.message())
                     : tools::ReportError(status);
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  std::set<std::string> fed;
  for (const std::string& spec : options->feeds) {
    absl::StatusOr<Feed> feed = ParseFeed(spec);
    if (!feed.ok()) return tools::ReportUsageError("tg_run", feed.status().message());
    if (!fed.insert(feed->name).second) {
      return tools::ReportUsageError(
          "tg_run", absl::StrCat("feed '", feed->name, "' is given more than once"));
    }
    feeds.emplace_back(std::move(feed->name), std::move(feed->value));
  }

  absl::StatusOr<GraphDef> graph = LoadGraphDef(options->graph_path);
  return tools::ReportError(graph.ok() ? RunGraph(*options, *graph, feeds) : graph.status());
}

}  // namespace
}  // namespace tg_run
}  // namespace tensorgrid

int main(int argc, char** argv) {
  return tensorgrid::tg_run::Main(std::vector<std::string>(argv + 1, argv + argc));
}
