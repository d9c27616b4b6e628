#include "client/training/saver.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/node_builder.h"
#include "client/ops/array_ops.h"
#include "client/ops/state_ops.h"
#include "core/framework/device_name.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/util/tensor_bundle.h"

namespace tensorgrid {
namespace training {

namespace internal {

struct SaverVariable {
  std::string name;  // the node's, and the checkpoint key
  Output handle;     // the reference output or the resource handle
  DataType dtype = DT_INVALID;
  PartialTensorShape shape;
  bool resource = false;
  std::string device;  // requested
};

}  // namespace internal

namespace {

using Variable = internal::SaverVariable;

bool IsRefVariableOp(const std::string& op) { return op == "VariableV2" || op == "Variable"; }
bool IsVariableOp(const std::string& op) { return IsRefVariableOp(op) || op == "VarHandleOp"; }

// "node:1" or "^node" -> "node".
std::string NodeNameOf(const std::string& input) {
  std::string name = input;
  if (absl::StartsWith(name, "^")) name = name.substr(1);
  const size_t colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(0, colon);
}

// The graph's nodes by name.
using NodeIndex = absl::flat_hash_map<std::string, const NodeDef*>;
NodeIndex IndexNodes(const GraphDef& graph) {
  NodeIndex index;
  for (const NodeDef& node : graph.node()) index[node.name()] = &node;
  return index;
}

// `path` as written into a state file in `dir`.
std::string RelativePath(const std::string& dir, const std::string& path) {
  const std::string d = absl::EndsWith(dir, "/") ? dir : dir + "/";
  if (dir != "/" && absl::StartsWith(path, d)) return path.substr(d.size());
  return path;
}

// Where the save and restore ops run: the variable's device if it is a CPU,
// else CPU:0 of its task.
std::string SaveDevice(const std::string& variable_device) {
  if (variable_device.empty()) return "";
  auto parsed = DeviceNameUtils::Parse(variable_device);
  if (!parsed.ok()) return "";
  if (parsed->has_type && parsed->type == "CPU") return variable_device;
  parsed->has_type = true;
  parsed->type = "CPU";
  parsed->has_id = true;
  parsed->id = 0;
  return DeviceNameUtils::ToString(*parsed);
}

absl::StatusOr<Variable> VariableFromNode(const NodeDef& node) {
  Variable v;
  v.name = node.name();
  v.resource = node.op() == "VarHandleOp";
  v.device = node.device();
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "dtype", &v.dtype));
  TG_RETURN_IF_ERROR(GetNodeAttr(node, "shape", &v.shape));
  v.handle = Output(Operation(node.name(), {v.resource ? DT_RESOURCE : MakeRefType(v.dtype)}), 0);
  return v;
}

// The variable `output` stands for: a variable node's output, or a
// ReadVariableOp of a resource variable.
absl::StatusOr<Variable> VariableFromOutput(const NodeIndex& nodes, const Output& output) {
  auto it = nodes.find(output.node_name());
  if (it == nodes.end()) {
    return errors::InvalidArgument("Saver: var_list entry '", output.name(),
                                   "' is not a node of the scope's graph");
  }
  const NodeDef* node = it->second;
  if (node->op() == "ReadVariableOp" && node->input_size() > 0) {
    auto handle = nodes.find(NodeNameOf(node->input(0)));
    if (handle != nodes.end() && handle->second->op() == "VarHandleOp") node = handle->second;
  }
  if (!IsVariableOp(node->op())) {
    return errors::InvalidArgument("Saver: var_list entry '", output.name(), "' (op ", node->op(),
                                   ") is not a variable");
  }
  return VariableFromNode(*node);
}

AttrValue ShapesAttr(const std::vector<Variable>& variables) {
  AttrValue value;
  auto* list = value.mutable_list();
  for (const Variable& v : variables) {
    TensorShapeProto* shape = list->add_shape();
    if (v.shape.unknown_rank()) {
      shape->set_unknown_rank(true);
      continue;
    }
    for (int d = 0; d < v.shape.dims(); ++d) shape->add_dim()->set_size(v.shape.dim_size(d));
  }
  return value;
}

// Whether `path` is `save_path` or `save_path`-<digits>.
bool IsOfLineage(const std::string& path, const std::string& save_path) {
  if (path == save_path) return true;
  if (!absl::StartsWith(path, save_path + "-")) return false;
  const std::string step = path.substr(save_path.size() + 1);
  return !step.empty() && std::all_of(step.begin(), step.end(), absl::ascii_isdigit);
}

}  // namespace

Saver::Saver(const Scope& scope, const SaverOptions& options) : options_(options) {
  GraphDef graph;
  status_ = scope.ToGraphDef(&graph);
  if (!status_.ok()) return;
  const std::string prefix = scope.name_scope().empty() ? "" : scope.name_scope() + "/";
  std::vector<Variable> variables;
  for (const NodeDef& node : graph.node()) {
    if (!IsVariableOp(node.op()) || !absl::StartsWith(node.name(), prefix)) continue;
    auto v = VariableFromNode(node);
    if (!v.ok()) {
      status_ = v.status();
      return;
    }
    variables.push_back(*std::move(v));
  }
  Build(scope, std::move(variables));
}

Saver::Saver(const Scope& scope, const std::vector<Output>& var_list, const SaverOptions& options)
    : options_(options) {
  GraphDef graph;
  status_ = scope.ToGraphDef(&graph);
  if (!status_.ok()) return;
  const NodeIndex nodes = IndexNodes(graph);
  std::vector<Variable> variables;
  for (const Output& output : var_list) {
    auto v = VariableFromOutput(nodes, output);
    if (!v.ok()) {
      status_ = v.status();
      return;
    }
    variables.push_back(*std::move(v));
  }
  Build(scope, std::move(variables));
}

void Saver::Build(const Scope& scope, std::vector<Variable> variables) {
  if (variables.empty()) {
    status_ =
        errors::InvalidArgument("Saver: no variables to save in scope '", scope.name_scope(), "'");
    return;
  }
  std::sort(variables.begin(), variables.end(),
            [](const Variable& a, const Variable& b) { return a.name < b.name; });
  for (size_t i = 1; i < variables.size(); ++i) {
    if (variables[i].name == variables[i - 1].name) {
      status_ =
          errors::InvalidArgument("Saver: variable '", variables[i].name, "' is listed twice");
      return;
    }
  }
  Tensor names(DT_STRING, TensorShape({static_cast<int64_t>(variables.size())}));
  Tensor slices(DT_STRING, names.shape());  // "": whole tensors
  std::vector<DataType> dtypes;
  for (size_t i = 0; i < variables.size(); ++i) {
    names.data<std::string>()[i] = variables[i].name;
    names_.push_back(variables[i].name);
    dtypes.push_back(variables[i].dtype);
  }

  const Scope s = scope.NewSubScope("save").WithNoControlDependencies().ClearColocation();
  std::string device;
  for (const Variable& v : variables) {
    if (v.device.empty()) continue;
    device = SaveDevice(v.device);
    break;
  }
  const Scope ds = device.empty() ? s : s.WithDevice(device);
  filename_ =
      ops::Placeholder(ds.WithOpName("filename"), DT_STRING,
                       ops::Placeholder::Shape(PartialTensorShape(absl::Span<const int64_t>())));
  Output names_const = ops::Const(ds.WithOpName("tensor_names"), names);
  Output slices_const = ops::Const(ds.WithOpName("shape_and_slices"), slices);

  std::vector<Input> values;
  for (const Variable& v : variables) {
    if (!v.resource) {
      values.emplace_back(v.handle);  // consumers of a reference read its value
      continue;
    }
    values.emplace_back(ops::ReadVariableOp(s.ColocateWith(v.handle.op()), v.handle, v.dtype));
  }
  Operation save = NodeBuilder(ds.WithOpName("SaveV2"), "SaveV2")
                       .Input(filename_)
                       .Input(names_const)
                       .Input(slices_const)
                       .Input(InputList(std::move(values)))
                       .Finalize();
  save_path_out_ =
      ops::Identity(ds.WithOpName("control_dependency").WithControlDependencies({save}), filename_);

  Operation restore = NodeBuilder(ds.WithOpName("RestoreV2"), "RestoreV2")
                          .Input(filename_)
                          .Input(names_const)
                          .Input(slices_const)
                          .Attr("dtypes", dtypes)
                          .Attr("_expected_shapes", ShapesAttr(variables))
                          .Finalize();
  std::vector<Operation> assigns;
  for (size_t i = 0; i < variables.size(); ++i) {
    const Variable& v = variables[i];
    const Scope at = s.ColocateWith(v.handle.op());  // runs where the variable lives
    const Output value(restore, static_cast<int>(i));
    assigns.push_back(v.resource ? ops::AssignVariableOp(at, v.handle, value).operation
                                 : ops::Assign(at, v.handle, value).operation);
  }
  restore_all_ = ops::NoOp(ds.WithOpName("restore_all").WithControlDependencies(assigns)).operation;

  status_ = scope.status();
  filename_name_ = filename_.name();
  save_tensor_name_ = save_path_out_.name();
}

SaverDef Saver::saver_def() const {
  SaverDef def;
  def.set_filename_tensor_name(filename_name_);
  def.set_save_tensor_name(save_tensor_name_);
  def.set_restore_op_name(restore_all_.name());
  def.set_max_to_keep(options_.max_to_keep);
  def.set_keep_checkpoint_every_n_hours(10000.0f);  // TensorFlow's default: never
  def.set_version(SaverDef::V2);
  return def;
}

std::vector<std::string> Saver::last_checkpoints() const {
  absl::MutexLock lock(&mu_);
  return last_checkpoints_;
}

void Saver::AdoptPreviousCheckpoints(const std::string& save_path) {
  adopted_ = true;
  auto state = GetCheckpointState(Dirname(save_path), options_.latest_filename);
  if (!state.ok()) return;
  for (const std::string& path : state->all_model_checkpoint_paths) {
    if (IsOfLineage(path, save_path) && checkpoint::CheckpointExists(path) &&
        std::find(last_checkpoints_.begin(), last_checkpoints_.end(), path) ==
            last_checkpoints_.end()) {
      last_checkpoints_.push_back(path);
    }
  }
}

absl::StatusOr<std::string> Saver::Save(ClientSession& session, const std::string& save_path,
                                        std::optional<int64_t> global_step) {
  TG_RETURN_IF_ERROR(status_);
  if (save_path.empty() || absl::EndsWith(save_path, "/")) {
    return errors::InvalidArgument("Saver: save path '", save_path,
                                   "' must name a file prefix, such as '/tmp/ckpt/model'");
  }
  const std::string path =
      global_step.has_value() ? absl::StrCat(save_path, "-", *global_step) : save_path;
  absl::MutexLock lock(&mu_);
  if (!adopted_) AdoptPreviousCheckpoints(save_path);

  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(WithContext(session.Run({{filename_, path}}, {save_path_out_}, &out),
                                 absl::StrCat("Saver: saving checkpoint '", path, "'")));

  std::vector<std::string> kept = last_checkpoints_;
  kept.erase(std::remove(kept.begin(), kept.end(), path), kept.end());
  kept.push_back(path);
  std::vector<std::string> doomed;
  if (options_.max_to_keep > 0 && kept.size() > static_cast<size_t>(options_.max_to_keep)) {
    const size_t excess = kept.size() - static_cast<size_t>(options_.max_to_keep);
    doomed.assign(kept.begin(), kept.begin() + excess);
    kept.erase(kept.begin(), kept.begin() + excess);
  }
  // The state file moves to the new checkpoint before the old ones go, so it
  // never names a deleted checkpoint.
  TG_RETURN_IF_ERROR(
      UpdateCheckpointState(Dirname(path), CheckpointState{path, kept}, options_.latest_filename));
  last_checkpoints_ = std::move(kept);
  for (const std::string& old : doomed) {
    absl::Status s = checkpoint::DeleteCheckpoint(old);
    if (!s.ok())
      std::fprintf(stderr, "Saver: could not delete old checkpoint: %s\n", s.ToString().c_str());
  }
  return path;
}

absl::Status Saver::Restore(ClientSession& session, const std::string& save_path) {
  TG_RETURN_IF_ERROR(status_);
  if (save_path.empty()) return errors::InvalidArgument("Saver: the checkpoint path is empty");
  return WithContext(session.Run({{filename_, save_path}}, {}, {restore_all_}, nullptr),
                     absl::StrCat("Saver: restoring variables from checkpoint '", save_path, "'"));
}

// ---------------------------------------------------------------- state file

absl::StatusOr<CheckpointState> GetCheckpointState(const std::string& dir,
                                                   const std::string& latest_filename) {
  const std::string path = JoinPath(dir, latest_filename);
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return errors::NotFound("no checkpoint state file '", path, "'");
    }
    return text.status();
  }
  CheckpointState state;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const size_t colon = line.find(':');
    auto bad = [&](absl::string_view why) {
      return absl::DataLossError(absl::StrCat("checkpoint state file '", path, "' line ",
                                              line_number, ": ", why, ": '", line, "'"));
    };
    if (colon == absl::string_view::npos) return bad("expected 'key: value'");
    const absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, colon));
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    const bool is_path = key == "model_checkpoint_path" || key == "all_model_checkpoint_paths";
    if (!is_path) continue;  // TensorFlow's timestamps and anything newer
    std::string unescaped, error;
    if (value.size() < 2 || value.front() != '"' || value.back() != '"' ||
        !absl::CUnescape(value.substr(1, value.size() - 2), &unescaped, &error)) {
      return bad("expected a quoted path");
    }
    unescaped = JoinPath(dir, unescaped);
    if (key == "model_checkpoint_path") {
      state.model_checkpoint_path = std::move(unescaped);
    } else {
      state.all_model_checkpoint_paths.push_back(std::move(unescaped));
    }
  }
  return state;
}

absl::Status UpdateCheckpointState(const std::string& dir, const CheckpointState& state,
                                   const std::string& latest_filename) {
  std::string text =
      absl::StrCat("model_checkpoint_path: \"",
                   absl::CEscape(RelativePath(dir, state.model_checkpoint_path)), "\"\n");
  for (const std::string& path : state.all_model_checkpoint_paths) {
    absl::StrAppend(&text, "all_model_checkpoint_paths: \"", absl::CEscape(RelativePath(dir, path)),
                    "\"\n");
  }
  TG_RETURN_IF_ERROR(CreateDirectories(dir));
  return WithContext(WriteFileAtomically(JoinPath(dir, latest_filename), text),
                     "updating the checkpoint state file");
}

absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir,
                                             const std::string& latest_filename) {
  TG_ASSIGN_OR_RETURN(CheckpointState state, GetCheckpointState(dir, latest_filename));
  if (state.model_checkpoint_path.empty()) {
    return errors::NotFound("the checkpoint state file in '", dir, "' names no checkpoint");
  }
  if (!checkpoint::CheckpointExists(state.model_checkpoint_path)) {
    return errors::NotFound("the checkpoint state file in '", dir, "' names checkpoint '",
                            state.model_checkpoint_path, "', which does not exist");
  }
  return state.model_checkpoint_path;
}

}  // namespace training
}  // namespace tensorgrid
