// LoadSavedModel: opens a SavedModel directory that TensorFlow 1.x (or
// SavedModelBuilder here) wrote, in the shape of TensorFlow's
// tensorflow/cc/saved_model/loader.h. docs/saved_model.md.
//
//   SavedModelBundle bundle;
//   TG_RETURN_IF_ERROR(LoadSavedModel(SessionOptions(), RunOptions(), "/models/half_plus_two/123",
//                                     {kSavedModelTagServe}, &bundle));
//   TG_ASSIGN_OR_RETURN(auto predict, SignatureRunner::Create(&bundle, "serving_default"));
//   TG_ASSIGN_OR_RETURN(auto out, predict->Run({{"x", Tensor::FromVector<float>({1, 2, 3},
//   {3})}}));
//   // out["y"] == [2.5, 3, 3.5]
//
// Loading: reads saved_model.pb (or saved_model.pbtxt), takes the
// MetaGraphDef whose tag set equals `tags`, creates a session for
// `session_options` (in-process, or a grpc:// cluster) with its graph,
// restores the variables from `<export_dir>/variables/variables` through the
// SaverDef's restore op, feeding every asset's path, and runs the init op
// (the `__saved_model_init_op` signature, else the `saved_model_main_op`
// collection, else `legacy_init_op`) with the same feeds.
//
// The tag and signature names (kSavedModelTagServe,
// kDefaultServingSignatureDefKey) come with this header (constants.h).
//
// Errors name the export directory and what is missing or wrong: NotFound
// for no saved_model.pb/.pbtxt, for a tag set the model does not have (the
// message lists the tag sets it has), for a missing asset file or variable;
// DataLoss for a saved_model.pb that does not parse; Unimplemented for a
// TensorFlow 2 SavedModel whose graph calls functions (tensorgrid runs graph
// SavedModels only).
//
// With a grpc:// target the restore op reads the variables where it runs (a
// CPU of the task that holds the first variable), so export_dir must be a
// path that task can read: the same machine, or a shared file system.
#ifndef TENSORGRID_CLIENT_SAVED_MODEL_LOADER_H_
#define TENSORGRID_CLIENT_SAVED_MODEL_LOADER_H_

#include <memory>
#include <string>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/saved_model/constants.h"  // kSavedModelTagServe, signature keys
#include "core/public/session.h"
#include "proto/meta_graph.pb.h"
#include "proto/saved_model.pb.h"

namespace tensorgrid {

// A loaded SavedModel: the session with its graph, variables restored and
// init op run, and the MetaGraphDef it came from.
struct SavedModelBundle {
  std::unique_ptr<Session> session;
  MetaGraphDef meta_graph_def;
  std::string export_dir;

  const google::protobuf::Map<std::string, SignatureDef>& GetSignatures() const {
    return meta_graph_def.signature_def();
  }
};

absl::Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                            const std::string& export_dir,
                            const std::unordered_set<std::string>& tags,
                            SavedModelBundle* bundle);

// Whether export_dir holds a saved_model.pb or saved_model.pbtxt.
bool MaybeSavedModelDirectory(const std::string& export_dir);

// saved_model.pb (or, without it, saved_model.pbtxt) of export_dir.
absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir);

// The MetaGraphDef of export_dir whose tag set equals `tags`.
absl::StatusOr<MetaGraphDef> ReadMetaGraphDefFromSavedModel(
    const std::string& export_dir, const std::unordered_set<std::string>& tags);

// The asset files of a MetaGraphDef: its asset_file_def field, or (as older
// TensorFlow wrote them) the saved_model_assets collection.
absl::StatusOr<std::vector<AssetFileDef>> GetAssetFileDefs(const MetaGraphDef& meta_graph);

// The node the loader runs after restoring ("" when there is none):
// FailedPrecondition when a collection names more than one.
absl::StatusOr<std::string> GetInitOp(const MetaGraphDef& meta_graph);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_SAVED_MODEL_LOADER_H_
