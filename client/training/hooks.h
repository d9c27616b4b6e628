// SessionRunHook: code that runs around every step of a
// MonitoredTrainingSession (TensorFlow's tf.train.SessionRunHook), and the
// stock hooks: StopAtStepHook, CheckpointSaverHook, StepCounterHook and
// LoggingTensorHook (ProfilerHook and SummarySaverHook have files of their
// own).
//
//   class LossWatcher : public training::SessionRunHook {
//    public:
//     explicit LossWatcher(Output loss) : loss_(loss) {}
//     absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override {
//       args->fetches.push_back(loss_);           // fetched in the same step
//       return absl::OkStatus();
//     }
//     absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override {
//       if (values.results[0].scalar<float>() < 0.01f) context.RequestStop();
//       return absl::OkStatus();
//     }
//    private:
//     Output loss_;
//   };
//
// The calls, in order: Begin(scope) once, before the first session exists
// (the last moment to add ops to the graph); AfterCreateSession(session) each
// time a session is created and its variables are ready (again after every
// recovery); per step BeforeRun, then the step with the fetches, targets,
// feeds and RunOptions the hooks asked for merged into the caller's, then
// AfterRun with the values of the hook's own fetches, the merged options and
// the step's RunMetadata (AfterRun is skipped when the step fails); End(session) once, from Close. A hook's error fails the call it
// came from. Hooks may run extra steps through the session they are given;
// no hook runs around those.
//
// Thread safety: a hook is called from one thread at a time (the one calling
// the MonitoredTrainingSession).
#ifndef TENSORGRID_CLIENT_TRAINING_HOOKS_H_
#define TENSORGRID_CLIENT_TRAINING_HOOKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client_session.h"
#include "client/output.h"
#include "client/scope.h"
#include "client/training/saver.h"
#include "client/training/variables.h"
#include "core/framework/tensor.h"
#include "proto/config.pb.h"

namespace tensorgrid {
namespace training {

// What a step runs: tensors to fetch, ops to run, tensors to feed, and the
// RunOptions to run it with. A hook's BeforeRun fills one to add to the
// caller's step; its options are merged with the caller's and the other
// hooks' (as TensorFlow merges them): the highest trace_level, the longest
// timeout_in_ms, output_partition_graphs if anyone asks.
struct SessionRunArgs {
  std::vector<Output> fetches;
  std::vector<Operation> targets;
  ClientSession::FeedType feeds;
  RunOptions options;
};

// What a hook gets after the step: the values of its own fetches, in the
// order it asked for them, the merged options the step ran with, and what
// the step recorded (step_stats under a trace level, partition graphs):
// `run_metadata` is never null, and valid during AfterRun only.
struct SessionRunValues {
  std::vector<Tensor> results;
  RunOptions options;
  const RunMetadata* run_metadata = nullptr;
};

// `from` merged into `into`: the higher trace_level and timeout_in_ms,
// output_partition_graphs if either sets it.
void MergeRunOptions(const RunOptions& from, RunOptions* into);

// The step being run, as a hook sees it.
class SessionRunContext {
 public:
  SessionRunContext(const SessionRunArgs& original_args, ClientSession* session)
      : original_args_(original_args), session_(session) {}

  // What the caller asked this step to run.
  const SessionRunArgs& original_args() const { return original_args_; }
  // The session the step runs on (valid for this call only: a recovery
  // replaces it).
  ClientSession& session() const { return *session_; }
  // Asks the MonitoredTrainingSession to stop: should_stop() turns true
  // after this step.
  void RequestStop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  const SessionRunArgs& original_args_;
  ClientSession* session_;
  bool stop_requested_ = false;
};

class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;
  // Once, before any session exists; may add ops to the graph through `scope`.
  virtual absl::Status Begin(const Scope& scope) { return absl::OkStatus(); }
  // After each session creation, once the variables are initialized or restored.
  virtual absl::Status AfterCreateSession(ClientSession& session) { return absl::OkStatus(); }
  // Before each step: add what the hook wants run or fed to `args` (empty on entry).
  virtual absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
    return absl::OkStatus();
  }
  // After each successful step, with the values of the hook's fetches.
  virtual absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) {
    return absl::OkStatus();
  }
  // Once, from MonitoredTrainingSession::Close.
  virtual absl::Status End(ClientSession& session) { return absl::OkStatus(); }
};

// Triggers every `every_steps` steps or every `every_secs` (the one given;
// TensorFlow's SecondOrStepTimer). Nothing given: never triggers, except
// the first time.
class SecondOrStepTimer {
 public:
  SecondOrStepTimer(std::optional<int64_t> every_steps, std::optional<absl::Duration> every_secs)
      : every_steps_(every_steps), every_secs_(every_secs) {}

  // True the first time, never for the step it last triggered at, else when
  // enough steps or time have passed since it last triggered.
  bool ShouldTriggerForStep(int64_t step) const;
  // Records a trigger at `step`; returns the time and steps since the
  // previous trigger (nullopt for the first).
  std::optional<std::pair<absl::Duration, int64_t>> UpdateLastTriggeredStep(int64_t step);
  std::optional<int64_t> last_triggered_step() const { return last_step_; }

 private:
  std::optional<int64_t> every_steps_;
  std::optional<absl::Duration> every_secs_;
  std::optional<int64_t> last_step_;
  absl::Time last_time_;
};

// For hooks that trigger every N steps or so long: InvalidArgument naming
// `hook` unless exactly one of the two is given, and it is positive.
absl::Status CheckExactlyOne(const char* hook, const std::optional<int64_t>& steps,
                             const std::optional<absl::Duration>& secs);
// The graph's global step; NotFound saying that `hook` needs one.
absl::StatusOr<Variable> FindGlobalStep(const char* hook, const Scope& scope);

// The value of a global step tensor (int32 or int64 scalar).
absl::StatusOr<int64_t> GlobalStepValue(const Tensor& value);
// Runs `global_step`'s value in `session` (a step of its own).
absl::StatusOr<int64_t> ReadGlobalStep(ClientSession& session, const Variable& global_step);

// Requests a stop once the global step reaches a last step: `AtStep(n)`, or
// `ForSteps(n)` steps after the global step the first session started at
// (TensorFlow's last_step and num_steps). Needs a global step.
class StopAtStepHook final : public SessionRunHook {
 public:
  static std::shared_ptr<StopAtStepHook> AtStep(int64_t last_step);
  static std::shared_ptr<StopAtStepHook> ForSteps(int64_t num_steps);

  absl::Status Begin(const Scope& scope) override;
  absl::Status AfterCreateSession(ClientSession& session) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override;

  // The step it stops at (nullopt before the first session for ForSteps).
  std::optional<int64_t> last_step() const { return last_step_; }

 private:
  StopAtStepHook(std::optional<int64_t> num_steps, std::optional<int64_t> last_step)
      : num_steps_(num_steps), last_step_(last_step) {}

  std::optional<int64_t> num_steps_;
  std::optional<int64_t> last_step_;
  Variable global_step_;
};

struct CheckpointSaverHookOptions {
  std::string checkpoint_dir;
  // Exactly one of these: save every N global steps, or every so long.
  std::optional<int64_t> save_steps;
  std::optional<absl::Duration> save_secs;
  // Checkpoints are "<checkpoint_dir>/<basename>-<global step>".
  std::string checkpoint_basename = "model.ckpt";
  // The Saver to save with; null: one over every variable, built in Begin
  // with `saver_options`.
  std::shared_ptr<Saver> saver;
  SaverOptions saver_options;
};

// Saves a checkpoint when a session is created (the state it starts from),
// every save_steps global steps or save_secs, and at End (unless the last
// save was already at the final global step). Needs a global step.
class CheckpointSaverHook final : public SessionRunHook {
 public:
  explicit CheckpointSaverHook(CheckpointSaverHookOptions options);

  absl::Status Begin(const Scope& scope) override;
  absl::Status AfterCreateSession(ClientSession& session) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override;
  absl::Status End(ClientSession& session) override;

  // The path of the last checkpoint written (empty before the first).
  const std::string& last_checkpoint() const { return last_checkpoint_; }

 private:
  absl::Status Save(ClientSession& session, int64_t step);

  CheckpointSaverHookOptions options_;
  SecondOrStepTimer timer_;
  Variable global_step_;
  std::string last_checkpoint_;
};

// Measures global steps per second every N steps or seconds and hands the
// rate to `report` (default: a line "StepCounterHook: global_step/sec: 41.7
// (global step 200)" on stderr). Needs a global step.
class StepCounterHook final : public SessionRunHook {
 public:
  using Report = std::function<void(int64_t global_step, double steps_per_sec)>;
  // Exactly one of every_n_steps (> 0) and every_n_secs.
  StepCounterHook(std::optional<int64_t> every_n_steps, std::optional<absl::Duration> every_n_secs,
                  Report report = nullptr);

  absl::Status Begin(const Scope& scope) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override;

 private:
  absl::Status status_;
  SecondOrStepTimer timer_;
  Report report_;
  Variable global_step_;
};

// Fetches `tensors` every N local steps (this session's Run calls, counted
// from 0, which logs) or every so long, and hands a line
// "loss = 0.25, w = 1 2 3 (0.125 sec)" to `output` (default: stderr; the
// time since the previous line, from the second line on). With at_end, once
// more at End.
class LoggingTensorHook final : public SessionRunHook {
 public:
  struct Options {
    // Exactly one of these.
    std::optional<int64_t> every_n_iter;
    std::optional<absl::Duration> every_n_secs;
    bool at_end = false;
    // Where lines go; null: stderr.
    std::function<void(const std::string& line)> output;
    // Values shown per tensor.
    int max_entries = 16;
  };
  // `tensors`: (label, tensor) pairs, logged in this order.
  LoggingTensorHook(std::vector<std::pair<std::string, Output>> tensors, Options options);

  absl::Status Begin(const Scope& scope) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override;
  absl::Status End(ClientSession& session) override;

 private:
  void Log(const std::vector<Tensor>& values);

  std::vector<std::pair<std::string, Output>> tensors_;
  Options options_;
  SecondOrStepTimer timer_;
  int64_t iter_count_ = 0;
  bool should_trigger_ = false;
  absl::Status status_;
};

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_HOOKS_H_
