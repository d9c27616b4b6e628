// Saver: saves variables to checkpoints and restores them, TensorFlow 1.x's
// tf.train.Saver for the C++ client. It adds SaveV2/RestoreV2 nodes to the
// graph once, at construction; Save and Restore run them.
//
//   Scope root = Scope::NewRootScope();
//   auto w = ops::Variable(root.WithOpName("w"), {2, 2}, DT_FLOAT);
//   auto b = ops::VarHandleOp(root.WithOpName("b"), DT_FLOAT, {2});
//   ... initializers, training ops ...
//   training::Saver saver(root);                    // every variable built so far
//   ClientSession session(root);
//   TG_ASSIGN_OR_RETURN(std::string path, saver.Save(session, "/ckpt/model", step));
//   // path == "/ckpt/model-<step>"; /ckpt/checkpoint now names it
//
//   // Later, in another process, with the same graph:
//   TG_ASSIGN_OR_RETURN(std::string latest, training::LatestCheckpoint("/ckpt"));
//   TG_RETURN_IF_ERROR(saver.Restore(session, latest));
//
// Variables are saved under their node names ("layer1/w"), reference
// variables (VariableV2, Variable) and resource variables (VarHandleOp)
// alike. A var_list may name a resource variable by its handle or by a
// ReadVariableOp of it.
//
// Graph: under the sub scope "save" of the given scope ("save_1", ... for
// more Savers), TensorFlow's names: "save/filename" (a string Placeholder
// fed with the path), "save/SaveV2", "save/control_dependency" (the path,
// after the save), "save/RestoreV2", one Assign/AssignVariableOp per
// variable, and "save/restore_all" (a NoOp after every assignment).
// Placement: one SaveV2 and one RestoreV2 for all variables, on the device
// of the first variable (by name) that has a requested device if that is a
// CPU, otherwise on CPU:0 of its task (the ops have CPU kernels only); with
// no device anywhere the placer chooses. The values of variables elsewhere
// travel there through Send/Recv, and the path is a file name on that task's
// machine. Reads and assignments run where their variables live.
//
// Files: TensorFlow's V2 checkpoint, see docs/checkpoints.md. A save writes
// "<path>.data-00000-of-0000N" and "<path>.index" (the checkpoint is
// committed by renaming its index into place), then rewrites "<dir>/checkpoint" atomically to name it, then
// deletes checkpoints beyond max_to_keep. A crash at any point leaves the
// previously named checkpoint loadable and named.
//
// Restore checks each tensor against the graph: a name missing from the
// checkpoint is NotFound naming it and the checkpoint; a dtype or shape that
// differs is InvalidArgument naming the variable and both shapes; damaged
// files are DataLoss naming the file and the tensor.
//
// Thread safety: Save and Restore may be called from several threads (saves
// of one Saver are serialized); the constructor builds nodes and so follows
// Scope's rules.
#ifndef TENSORGRID_CLIENT_TRAINING_SAVER_H_
#define TENSORGRID_CLIENT_TRAINING_SAVER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "client/client_session.h"
#include "client/output.h"
#include "client/scope.h"
#include "proto/saver.pb.h"

namespace tensorgrid {
namespace training {
namespace internal {
struct SaverVariable;  // what a Saver knows of one variable (saver.cc)
}  // namespace internal

struct SaverOptions {
  // Checkpoints kept by Save; older ones are deleted. <= 0 keeps them all.
  int max_to_keep = 5;
  // The state file naming the latest checkpoint, in the checkpoint directory.
  std::string latest_filename = "checkpoint";
};

class Saver {
 public:
  // Saves every variable whose node lies in `scope`'s name scope (all of
  // them for the root scope) and exists now.
  explicit Saver(const Scope& scope, const SaverOptions& options = SaverOptions());
  // Saves the variables in `var_list`: outputs of Variable/VariableV2 or
  // VarHandleOp nodes (or ReadVariableOps of them).
  Saver(const Scope& scope, const std::vector<Output>& var_list,
        const SaverOptions& options = SaverOptions());

  Saver(const Saver&) = delete;
  Saver& operator=(const Saver&) = delete;

  // The error that kept the Saver from being built (no variables, a var_list
  // entry that is not a variable, an error on the scope), else OK. Save and
  // Restore return it too.
  absl::Status status() const { return status_; }

  // Saves every variable to "<save_path>-<global_step>" (or "<save_path>"
  // without a step), names it in the directory's state file and deletes
  // checkpoints beyond max_to_keep. Returns the checkpoint path.
  absl::StatusOr<std::string> Save(ClientSession& session, const std::string& save_path,
                                   std::optional<int64_t> global_step = std::nullopt);
  // Assigns every variable its value from the checkpoint `save_path` (a path
  // Save returned, or LatestCheckpoint's answer).
  absl::Status Restore(ClientSession& session, const std::string& save_path);

  // The checkpoints kept, oldest first. A Saver saving into a directory whose
  // state file lists checkpoints of the same save_path (from an earlier run)
  // takes them over at its first Save, so max_to_keep counts them too.
  std::vector<std::string> last_checkpoints() const;

  // For running the nodes without ClientSession: feed the path to
  // filename_tensor_name() and fetch save_tensor_name() (to save) or run
  // restore_op_name() (to restore).
  const std::string& filename_tensor_name() const { return filename_name_; }
  const std::string& save_tensor_name() const { return save_tensor_name_; }
  const std::string& restore_op_name() const { return restore_all_.name(); }
  // The nodes above as TensorFlow's SaverDef (format V2, not sharded), for a
  // MetaGraphDef (client/saved_model/builder.h).
  SaverDef saver_def() const;
  // The saved variables' names, sorted.
  const std::vector<std::string>& variable_names() const { return names_; }

 private:
  void Build(const Scope& scope, std::vector<internal::SaverVariable> variables);
  // Takes over the same-lineage checkpoints listed in `dir`'s state file.
  void AdoptPreviousCheckpoints(const std::string& save_path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SaverOptions options_;
  absl::Status status_;
  std::vector<std::string> names_;
  Output filename_;       // save/filename
  Output save_path_out_;  // save/control_dependency
  Operation restore_all_;
  std::string filename_name_, save_tensor_name_;

  mutable absl::Mutex mu_;
  bool adopted_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> last_checkpoints_ ABSL_GUARDED_BY(mu_);
};

// The state file's contents (TensorFlow's CheckpointState, text format):
//   model_checkpoint_path: "model-300"
//   all_model_checkpoint_paths: "model-200"
//   all_model_checkpoint_paths: "model-300"
// Paths are written relative to the directory (so it can be moved) and read
// back as full paths (relative ones joined to the directory).
struct CheckpointState {
  std::string model_checkpoint_path;
  std::vector<std::string> all_model_checkpoint_paths;
};

// Reads `<dir>/<latest_filename>`: NotFound if it does not exist, DataLoss
// naming the file if it does not parse.
absl::StatusOr<CheckpointState> GetCheckpointState(
    const std::string& dir, const std::string& latest_filename = "checkpoint");
// Writes it atomically (a temporary file renamed into place).
absl::Status UpdateCheckpointState(const std::string& dir, const CheckpointState& state,
                                   const std::string& latest_filename = "checkpoint");

// The path of the latest checkpoint in `dir`, as named by its state file.
// NotFound naming the directory when there is no state file or the
// checkpoint it names does not exist.
absl::StatusOr<std::string> LatestCheckpoint(const std::string& dir,
                                             const std::string& latest_filename = "checkpoint");

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_SAVER_H_
