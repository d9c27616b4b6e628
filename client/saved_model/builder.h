// SavedModelBuilder: exports a graph and its variables' current values as a
// SavedModel directory in TensorFlow's format, in the shape of TensorFlow's
// SavedModelBuilder (tf.compat.v1.saved_model.Builder), so that
// LoadSavedModel here — and TensorFlow, and TensorFlow Serving — load it.
// docs/saved_model.md.
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
//   ... variables, the model's output y ...
//   training::Saver saver(root);               // after every variable
//   ClientSession session(root);
//   ... initialize, train ...
//   SavedModelBuilder builder("/models/mine/1");
//   TG_RETURN_IF_ERROR(builder.AddMetaGraphAndVariables(
//       session, root, saver, {kSavedModelTagServe},
//       {{kDefaultServingSignatureDefKey, PredictSignatureDef({{"x", x}}, {{"y", y}})}}));
//   TG_RETURN_IF_ERROR(builder.Save());
//
// The directory: saved_model.pb (or saved_model.pbtxt with Save(true)), a
// SavedModel with one MetaGraphDef per Add call (the graph, the tags, the
// signatures, the Saver's SaverDef); variables/variables.{index,data-*}, a
// TensorFlow V2 checkpoint of every variable the Saver saves, written by the
// first call (AddMetaGraphAndVariables) through the session; assets/ with
// copies of the asset files.
//
// Atomic: everything is written under a temporary directory beside
// export_dir, which Save renames to export_dir once saved_model.pb is
// synced, so a model server polling the parent directory never sees half an
// export. AlreadyExists when export_dir exists (TensorFlow's rule: never
// overwrite an export). With a grpc:// session the variables are written by
// the task that holds the first variable, to its file system: the temporary
// directory must be visible there too (the same machine, or a shared file
// system).
//
// Not thread-safe.
#ifndef TENSORGRID_CLIENT_SAVED_MODEL_BUILDER_H_
#define TENSORGRID_CLIENT_SAVED_MODEL_BUILDER_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "client/client_session.h"
#include "client/output.h"
#include "client/saved_model/constants.h"  // kSavedModelTagServe, signature keys
#include "client/scope.h"
#include "client/training/saver.h"
#include "core/framework/tensor_shape.h"
#include "core/public/session.h"
#include "proto/meta_graph.pb.h"
#include "proto/saved_model.pb.h"

namespace tensorgrid {

// What a MetaGraphDef carries besides its graph, tags and signatures.
struct MetaGraphExtras {
  // Asset files: the string tensor the loader feeds each file's path to
  // (usually a Placeholder) and the file to copy into assets/ (its base name
  // is kept; two assets with one base name are InvalidArgument).
  std::vector<std::pair<std::string, std::string>> assets;
  // A node the loader runs after restoring the variables (a table
  // initializer, say): written as the saved_model_main_op collection.
  std::string main_op;
};

class SavedModelBuilder {
 public:
  explicit SavedModelBuilder(std::string export_dir);
  // Removes the temporary directory of an export that was not saved.
  ~SavedModelBuilder();
  SavedModelBuilder(const SavedModelBuilder&) = delete;
  SavedModelBuilder& operator=(const SavedModelBuilder&) = delete;

  using SignatureDefMap = std::map<std::string, SignatureDef>;

  // The first MetaGraphDef, with the variables' values now: saves them by
  // running the saver's save op in `session`. Once per builder, before any
  // AddMetaGraph.
  absl::Status AddMetaGraphAndVariables(ClientSession& session, const Scope& scope,
                                        const training::Saver& saver,
                                        const std::vector<std::string>& tags,
                                        const SignatureDefMap& signatures,
                                        const MetaGraphExtras& extras = MetaGraphExtras());
  // The same for a graph given as a GraphDef already in `session` (a loaded
  // SavedModel's, say) and its SaverDef.
  absl::Status AddMetaGraphAndVariables(Session& session, const GraphDef& graph,
                                        const SaverDef& saver_def,
                                        const std::vector<std::string>& tags,
                                        const SignatureDefMap& signatures,
                                        const MetaGraphExtras& extras = MetaGraphExtras());
  // A further MetaGraphDef sharing the variables saved by the first (another
  // tag set: a training graph beside the serving one). Its tag set must
  // differ from every earlier one.
  absl::Status AddMetaGraph(const GraphDef& graph, const SaverDef& saver_def,
                            const std::vector<std::string>& tags,
                            const SignatureDefMap& signatures,
                            const MetaGraphExtras& extras = MetaGraphExtras());
  // Writes saved_model.pb (saved_model.pbtxt with as_text) and moves the
  // export into place at export_dir.
  absl::Status Save(bool as_text = false);

  const std::string& export_dir() const { return export_dir_; }

 private:
  using SaveFn = std::function<absl::Status(const std::string& prefix)>;
  absl::Status Add(const GraphDef& graph, const SaverDef& saver_def,
                   const std::vector<std::string>& tags, const SignatureDefMap& signatures,
                   const MetaGraphExtras& extras, const SaveFn& save_variables);
  absl::Status StartExport();

  const std::string export_dir_;
  std::string temp_dir_;  // where the export is written until Save
  SavedModel saved_model_;
  bool variables_saved_ = false;
  bool saved_ = false;
};

// A TensorInfo for the tensor `name` ("x:0").
TensorInfo BuildTensorInfo(const std::string& name, DataType dtype,
                           const PartialTensorShape& shape = PartialTensorShape());
TensorInfo BuildTensorInfo(const Output& output,
                           const PartialTensorShape& shape = PartialTensorShape());

// A predict signature (method tensorflow/serving/predict) over these
// outputs, keyed as given.
SignatureDef PredictSignatureDef(const std::map<std::string, Output>& inputs,
                                 const std::map<std::string, Output>& outputs);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_SAVED_MODEL_BUILDER_H_
