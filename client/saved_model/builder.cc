#include "client/saved_model/builder.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/saved_model/constants.h"
#include "core/framework/op_def.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"

namespace tensorgrid {
namespace {

// Map fields (signatures, collections, attrs) in key order, so that one
// export always gives the same bytes.
bool SerializeDeterministically(const google::protobuf::Message& message, std::string* out) {
  out->clear();
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  return message.SerializeToCodedStream(&coded);
}

absl::Status CopyFile(const std::string& from, const std::string& to) {
  TG_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(from, "asset file"));
  return WriteWholeFile(to, bytes);
}

}  // namespace

TensorInfo BuildTensorInfo(const std::string& name, DataType dtype,
                           const PartialTensorShape& shape) {
  TensorInfo info;
  info.set_name(name);
  info.set_dtype(dtype);
  TensorShapeProto* proto = info.mutable_tensor_shape();
  if (shape.unknown_rank()) {
    proto->set_unknown_rank(true);
  } else {
    for (int d = 0; d < shape.dims(); ++d) proto->add_dim()->set_size(shape.dim_size(d));
  }
  return info;
}

TensorInfo BuildTensorInfo(const Output& output, const PartialTensorShape& shape) {
  return BuildTensorInfo(output.name(), output.type(), shape);
}

SignatureDef PredictSignatureDef(const std::map<std::string, Output>& inputs,
                                 const std::map<std::string, Output>& outputs) {
  SignatureDef signature;
  for (const auto& [key, output] : inputs) {
    (*signature.mutable_inputs())[key] = BuildTensorInfo(output);
  }
  for (const auto& [key, output] : outputs) {
    (*signature.mutable_outputs())[key] = BuildTensorInfo(output);
  }
  signature.set_method_name(kPredictMethodName);
  return signature;
}

SavedModelBuilder::SavedModelBuilder(std::string export_dir) : export_dir_(std::move(export_dir)) {
  saved_model_.set_saved_model_schema_version(kSavedModelSchemaVersion);
}

SavedModelBuilder::~SavedModelBuilder() {
  if (!temp_dir_.empty() && !saved_) {
    std::error_code ignored;
    std::filesystem::remove_all(temp_dir_, ignored);
  }
}

absl::Status SavedModelBuilder::StartExport() {
  if (saved_) {
    return errors::FailedPrecondition("SavedModel '", export_dir_, "' is already saved");
  }
  if (!temp_dir_.empty()) return absl::OkStatus();
  if (PathExists(export_dir_)) {
    return errors::AlreadyExists("export directory '", export_dir_,
                                 "' already exists; a SavedModel is never written over another");
  }
  const std::string parent = Dirname(export_dir_);
  TG_RETURN_IF_ERROR(CreateDirectories(parent));
  std::string temp = TempPath(export_dir_);
  if (::mkdir(temp.c_str(), 0755) != 0) {
    return ErrnoToStatus(errno, "creating export directory", temp);
  }
  temp_dir_ = std::move(temp);
  return absl::OkStatus();
}

absl::Status SavedModelBuilder::Add(const GraphDef& graph, const SaverDef& saver_def,
                                    const std::vector<std::string>& tags,
                                    const SignatureDefMap& signatures,
                                    const MetaGraphExtras& extras, const SaveFn& save_variables) {
  const std::string context = absl::StrCat("exporting SavedModel '", export_dir_, "'");
  const std::set<std::string> tag_set(tags.begin(), tags.end());
  for (const MetaGraphDef& earlier : saved_model_.meta_graphs()) {
    const auto& t = earlier.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == tag_set) {
      return errors::AlreadyExists(context, ": a MetaGraphDef with the tags {",
                                   absl::StrJoin(tag_set, ", "), "} was already added");
    }
  }
  if (save_variables && variables_saved_) {
    return errors::FailedPrecondition(context,
                                      ": the variables were saved already; add "
                                      "further graphs with AddMetaGraph");
  }
  if (!save_variables && !variables_saved_) {
    return errors::FailedPrecondition(context, ": AddMetaGraphAndVariables comes first");
  }
  TG_RETURN_IF_ERROR(StartExport());

  MetaGraphDef meta_graph;
  MetaGraphDef::MetaInfoDef* info = meta_graph.mutable_meta_info_def();
  for (const std::string& tag : tags) info->add_tags(tag);
  // What TensorFlow's loader and saved_model_cli read about the graph's ops.
  *info->mutable_stripped_op_list() = StrippedOpList(graph);
  *meta_graph.mutable_graph_def() = graph;
  *meta_graph.mutable_saver_def() = saver_def;
  for (const auto& [key, signature] : signatures) {
    (*meta_graph.mutable_signature_def())[key] = signature;
  }
  std::set<std::string> asset_names;
  for (const auto& [tensor, path] : extras.assets) {
    const std::string name = Basename(path);
    if (!asset_names.insert(name).second) {
      return errors::InvalidArgument(context, ": two assets named '", name, "'");
    }
    const std::string dir = JoinPath(temp_dir_, kSavedModelAssetsDirectory);
    TG_RETURN_IF_ERROR(CreateDirectories(dir));
    TG_RETURN_IF_ERROR(WithContext(CopyFile(path, JoinPath(dir, name)), context));
    AssetFileDef* asset = meta_graph.add_asset_file_def();
    asset->mutable_tensor_info()->set_name(tensor);
    asset->mutable_tensor_info()->set_dtype(DT_STRING);
    asset->set_filename(name);
  }
  if (!extras.main_op.empty()) {
    (*meta_graph.mutable_collection_def())[kSavedModelMainOpKey].mutable_node_list()->add_value(
        extras.main_op);
  }
  if (save_variables) {
    const std::string dir = JoinPath(temp_dir_, kSavedModelVariablesDirectory);
    TG_RETURN_IF_ERROR(CreateDirectories(dir));
    TG_RETURN_IF_ERROR(WithContext(save_variables(JoinPath(dir, kSavedModelVariablesFilename)),
                                   absl::StrCat(context, ": saving the variables")));
    variables_saved_ = true;
  }
  *saved_model_.add_meta_graphs() = std::move(meta_graph);
  return absl::OkStatus();
}

absl::Status SavedModelBuilder::AddMetaGraphAndVariables(ClientSession& session, const Scope& scope,
                                                         const training::Saver& saver,
                                                         const std::vector<std::string>& tags,
                                                         const SignatureDefMap& signatures,
                                                         const MetaGraphExtras& extras) {
  TG_RETURN_IF_ERROR(saver.status());
  GraphDef graph;
  TG_RETURN_IF_ERROR(scope.ToGraphDef(&graph));
  const SaverDef saver_def = saver.saver_def();
  return Add(graph, saver_def, tags, signatures, extras,
             [&session, &saver_def](const std::string& prefix) -> absl::Status {
               // A callable sends the scope's newest nodes (the saver's) first.
               CallableOptions options;
               options.add_feed(saver_def.filename_tensor_name());
               options.add_fetch(saver_def.save_tensor_name());
               TG_ASSIGN_OR_RETURN(auto handle, session.MakeCallable(options));
               std::vector<Tensor> out;
               absl::Status status = session.RunCallable(
                   handle, {Tensor::Scalar<std::string>(prefix)}, &out, nullptr);
               session.ReleaseCallable(handle).IgnoreError();
               return status;
             });
}

absl::Status SavedModelBuilder::AddMetaGraphAndVariables(Session& session, const GraphDef& graph,
                                                         const SaverDef& saver_def,
                                                         const std::vector<std::string>& tags,
                                                         const SignatureDefMap& signatures,
                                                         const MetaGraphExtras& extras) {
  return Add(graph, saver_def, tags, signatures, extras,
             [&session, &saver_def](const std::string& prefix) {
               std::vector<Tensor> out;
               return session.Run(
                   {{saver_def.filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}},
                   {saver_def.save_tensor_name()}, {}, &out);
             });
}

absl::Status SavedModelBuilder::AddMetaGraph(const GraphDef& graph, const SaverDef& saver_def,
                                             const std::vector<std::string>& tags,
                                             const SignatureDefMap& signatures,
                                             const MetaGraphExtras& extras) {
  return Add(graph, saver_def, tags, signatures, extras, nullptr);
}

absl::Status SavedModelBuilder::Save(bool as_text) {
  if (saved_model_.meta_graphs_size() == 0) {
    return errors::FailedPrecondition("exporting SavedModel '", export_dir_,
                                      "': no MetaGraphDef was added");
  }
  TG_RETURN_IF_ERROR(StartExport());
  std::string bytes;
  if (as_text) {
    if (!google::protobuf::TextFormat::PrintToString(saved_model_, &bytes)) {
      return errors::Internal("printing the SavedModel as text failed");
    }
  } else if (!SerializeDeterministically(saved_model_, &bytes)) {
    return errors::Internal("serializing the SavedModel failed");
  }
  TG_RETURN_IF_ERROR(WriteWholeFile(
      JoinPath(temp_dir_, as_text ? kSavedModelFilenamePbTxt : kSavedModelFilenamePb), bytes));
  if (PathExists(export_dir_)) {
    return errors::AlreadyExists("export directory '", export_dir_,
                                 "' appeared while exporting; nothing was written there");
  }
  TG_RETURN_IF_ERROR(RenameFile(temp_dir_, export_dir_));
  saved_ = true;
  return absl::OkStatus();
}

}  // namespace tensorgrid
