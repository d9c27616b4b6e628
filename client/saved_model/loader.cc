#include "client/saved_model/loader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/saved_model/constants.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/proto_text.h"

namespace tensorgrid {
namespace {

std::string TagSetString(std::vector<std::string> tags) {
  std::sort(tags.begin(), tags.end());
  return absl::StrCat("{", absl::StrJoin(tags, ", "), "}");
}

// TensorFlow 2's tf.saved_model.save writes graphs whose signatures call
// functions from the graph's library; tensorgrid executes no functions.
absl::Status CheckGraphOnly(const MetaGraphDef& meta_graph, const std::string& export_dir) {
  const GraphDef& graph = meta_graph.graph_def();
  if (graph.has_library() && graph.library().ByteSizeLong() > 0) {
    std::vector<std::string> callers;
    for (const NodeDef& node : graph.node()) {
      if (node.op() == "StatefulPartitionedCall" || node.op() == "PartitionedCall") {
        callers.push_back(node.name());
      }
    }
    return errors::Unimplemented(
        "SavedModel '", export_dir, "' carries a function library (",
        graph.library().ByteSizeLong(), " bytes",
        callers.empty() ? std::string()
                        : absl::StrCat("; called by ", absl::StrJoin(callers, ", ")),
        meta_graph.has_object_graph_def() ? "; it is a TensorFlow 2 object-graph SavedModel" : "",
        "): tensorgrid runs TensorFlow 1.x graph SavedModels only (docs/saved_model.md)");
  }
  return absl::OkStatus();
}

// For a directory without a SavedModel of its own: "; it holds the
// versions ..." when subdirectories hold one (TensorFlow Serving's base
// path, DIR/<version>/saved_model.pb), else "".
std::string VersionsHint(const std::string& export_dir) {
  std::vector<std::string> versions;
  std::error_code error;
  for (std::filesystem::directory_iterator it(export_dir, error), end; !error && it != end;
       it.increment(error)) {
    if (MaybeSavedModelDirectory(it->path().string())) {
      versions.push_back(it->path().filename().string());
    }
  }
  if (versions.empty()) return "";
  // Versions are numbers ("9" before "10"), the newest last, as TensorFlow
  // Serving orders them; other names before them, by name.
  auto number = [](const std::string& name) -> int64_t {
    int64_t n;
    return !name.empty() && absl::c_all_of(name, absl::ascii_isdigit) && absl::SimpleAtoi(name, &n)
               ? n
               : -1;
  };
  std::sort(versions.begin(), versions.end(), [&](const std::string& a, const std::string& b) {
    return std::make_pair(number(a), a) < std::make_pair(number(b), b);
  });
  return absl::StrCat("; it holds the SavedModel version", versions.size() == 1 ? " " : "s ",
                      absl::StrJoin(versions, ", "), " (TensorFlow Serving's layout): give '",
                      JoinPath(export_dir, versions.back()), "'");
}

}  // namespace

bool MaybeSavedModelDirectory(const std::string& export_dir) {
  return IsRegularFile(JoinPath(export_dir, kSavedModelFilenamePb)) ||
         IsRegularFile(JoinPath(export_dir, kSavedModelFilenamePbTxt));
}

absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir) {
  SavedModel saved_model;
  const std::string pb = JoinPath(export_dir, kSavedModelFilenamePb);
  const std::string pbtxt = JoinPath(export_dir, kSavedModelFilenamePbTxt);
  if (IsRegularFile(pb)) {
    TG_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(pb, "SavedModel"));
    if (!saved_model.ParseFromString(bytes)) {
      return errors::DataLoss("SavedModel file '", pb, "' does not parse as a SavedModel (",
                              bytes.size(), " bytes)");
    }
    // An empty file parses (as nothing): a damaged one, as above.
    if (saved_model.meta_graphs_size() == 0) {
      return errors::DataLoss("SavedModel file '", pb, "' holds no MetaGraphDef (", bytes.size(),
                              " bytes: empty or truncated?)");
    }
  } else if (IsRegularFile(pbtxt)) {
    TG_ASSIGN_OR_RETURN(std::string text, ReadFileToString(pbtxt, "SavedModel"));
    std::string error;
    if (!ParseTextProto(text, &saved_model, &error)) {
      return errors::InvalidArgument("SavedModel file '", pbtxt,
                                     "' does not parse as a text SavedModel: ", error);
    }
  } else {
    return errors::NotFound("SavedModel not found in export directory '", export_dir, "': no ",
                            kSavedModelFilenamePb, " or ", kSavedModelFilenamePbTxt,
                            VersionsHint(export_dir));
  }
  if (saved_model.meta_graphs_size() == 0) {
    return errors::InvalidArgument("SavedModel file '", pbtxt, "' holds no MetaGraphDef");
  }
  return saved_model;
}

absl::StatusOr<MetaGraphDef> ReadMetaGraphDefFromSavedModel(
    const std::string& export_dir, const std::unordered_set<std::string>& tags) {
  TG_ASSIGN_OR_RETURN(SavedModel saved_model, ReadSavedModel(export_dir));
  std::vector<std::string> available;
  for (MetaGraphDef& meta_graph : *saved_model.mutable_meta_graphs()) {
    const auto& graph_tags = meta_graph.meta_info_def().tags();
    const std::unordered_set<std::string> tag_set(graph_tags.begin(), graph_tags.end());
    if (tag_set == tags) return std::move(meta_graph);
    available.push_back(TagSetString({graph_tags.begin(), graph_tags.end()}));
  }
  return errors::NotFound("SavedModel '", export_dir, "' has no MetaGraphDef with the tags ",
                          TagSetString({tags.begin(), tags.end()}),
                          "; its tag sets: ", absl::StrJoin(available, ", "));
}

absl::StatusOr<std::vector<AssetFileDef>> GetAssetFileDefs(const MetaGraphDef& meta_graph) {
  std::vector<AssetFileDef> assets(meta_graph.asset_file_def().begin(),
                                   meta_graph.asset_file_def().end());
  if (!assets.empty()) return assets;
  auto it = meta_graph.collection_def().find(kSavedModelAssetsKey);
  if (it == meta_graph.collection_def().end()) return assets;
  if (!it->second.has_any_list()) {
    return errors::InvalidArgument("collection '", kSavedModelAssetsKey,
                                   "' is not a list of AssetFileDefs (Any)");
  }
  for (const google::protobuf::Any& any : it->second.any_list().value()) {
    AssetFileDef asset;
    if (any.type_url() != kAssetFileDefTypeUrl || !asset.ParseFromString(any.value())) {
      return errors::InvalidArgument("collection '", kSavedModelAssetsKey, "' holds a '",
                                     any.type_url(), "' that is not an AssetFileDef");
    }
    assets.push_back(std::move(asset));
  }
  return assets;
}

absl::StatusOr<std::string> GetInitOp(const MetaGraphDef& meta_graph) {
  auto sig = meta_graph.signature_def().find(kSavedModelInitOpSignatureKey);
  if (sig != meta_graph.signature_def().end()) {
    auto out = sig->second.outputs().find(kSavedModelInitOpSignatureKey);
    if (out == sig->second.outputs().end() || out->second.name().empty()) {
      return errors::FailedPrecondition("signature '", kSavedModelInitOpSignatureKey,
                                        "' has no output '", kSavedModelInitOpSignatureKey, "'");
    }
    return out->second.name();
  }
  for (const char* key : {kSavedModelMainOpKey, kSavedModelLegacyInitOpKey}) {
    auto it = meta_graph.collection_def().find(key);
    if (it == meta_graph.collection_def().end()) continue;
    const auto& nodes = it->second.node_list().value();
    if (nodes.size() != 1) {
      return errors::FailedPrecondition("collection '", key,
                                        "' must name exactly one op; it names ", nodes.size());
    }
    return nodes[0];
  }
  return std::string();
}

absl::Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                            const std::string& export_dir,
                            const std::unordered_set<std::string>& tags, SavedModelBundle* bundle) {
  const std::string context = absl::StrCat("loading SavedModel '", export_dir, "'");
  TG_ASSIGN_OR_RETURN(MetaGraphDef meta_graph, ReadMetaGraphDefFromSavedModel(export_dir, tags));
  TG_RETURN_IF_ERROR(CheckGraphOnly(meta_graph, export_dir));

  // Asset paths are fed to both the restore and the init op.
  std::vector<std::pair<std::string, Tensor>> asset_feeds;
  absl::StatusOr<std::vector<AssetFileDef>> assets = GetAssetFileDefs(meta_graph);
  if (!assets.ok()) return WithContext(assets.status(), context);
  for (const AssetFileDef& asset : *assets) {
    const std::string path =
        JoinPath(JoinPath(export_dir, kSavedModelAssetsDirectory), asset.filename());
    if (!IsRegularFile(path)) {
      return errors::NotFound(context, ": asset '", asset.filename(), "' (fed to '",
                              asset.tensor_info().name(), "') is missing: no file '", path, "'");
    }
    asset_feeds.emplace_back(asset.tensor_info().name(), Tensor::Scalar<std::string>(path));
  }
  absl::StatusOr<std::string> init_op = GetInitOp(meta_graph);
  if (!init_op.ok()) return WithContext(init_op.status(), context);

  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(session_options));
  TG_RETURN_IF_ERROR(WithContext(session->Create(meta_graph.graph_def()), context));

  // Variables: TensorFlow restores only when the graph has a saver and the
  // directory has a checkpoint (a model may have no variables at all).
  const std::string variables_prefix =
      JoinPath(JoinPath(export_dir, kSavedModelVariablesDirectory), kSavedModelVariablesFilename);
  if (meta_graph.has_saver_def() && IsRegularFile(variables_prefix + ".index")) {
    const SaverDef& saver = meta_graph.saver_def();
    std::vector<std::pair<std::string, Tensor>> feeds = asset_feeds;
    feeds.emplace_back(saver.filename_tensor_name(), Tensor::Scalar<std::string>(variables_prefix));
    TG_RETURN_IF_ERROR(WithContext(
        session->Run(run_options, feeds, {}, {saver.restore_op_name()}, nullptr, nullptr),
        absl::StrCat(context, ": restoring variables from '", variables_prefix, "' (",
                     saver.restore_op_name(), ")")));
  } else if (meta_graph.has_saver_def()) {
    // As TensorFlow logs it: variables read later are uninitialized.
    std::fprintf(stderr,
                 "tensorgrid: SavedModel '%s' has no variables (no '%s.index'); no checkpoint "
                 "was restored\n",
                 export_dir.c_str(), variables_prefix.c_str());
  }
  if (!init_op->empty()) {
    TG_RETURN_IF_ERROR(
        WithContext(session->Run(run_options, asset_feeds, {}, {*init_op}, nullptr, nullptr),
                    absl::StrCat(context, ": running its init op '", *init_op, "'")));
  }
  bundle->session = std::move(session);
  bundle->meta_graph_def = std::move(meta_graph);
  bundle->export_dir = export_dir;
  return absl::OkStatus();
}

}  // namespace tensorgrid
