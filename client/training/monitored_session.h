// MonitoredTrainingSession: a session for a training loop that initializes or
// restores the model, runs hooks around every step, saves checkpoints, and
// recovers when a task of the cluster fails or restarts (TensorFlow 1.x's
// tf.train.MonitoredTrainingSession).
//
//   Scope root = Scope::NewRootScope();
//   ... the model, training::GetOrCreateGlobalStep(root), optimizer.Minimize(...) ...
//   training::MonitoredTrainingSessionOptions options;
//   options.master = "grpc://localhost:2223";          // "" for an in-process session
//   options.is_chief = task_index == 0;
//   options.checkpoint_dir = "/ckpt";
//   options.save_checkpoint_steps = 100;
//   options.hooks = {training::StopAtStepHook::AtStep(10000)};
//   TG_ASSIGN_OR_RETURN(auto session, training::MonitoredTrainingSession::Create(root, options));
//   while (!session->should_stop()) {
//     TG_RETURN_IF_ERROR(session->Run({{x, batch_x}}, {loss}, {train}, &out));
//   }
//   TG_RETURN_IF_ERROR(session->Close());              // saves a last checkpoint
//
// Create adds to the graph an initializer of every variable
// (GlobalVariablesInitializer), a ReportUninitializedVariables op and, with a
// checkpoint_dir, a Saver over every variable; the hooks' Begin may add more.
// Build the whole model first, from the root scope. The graph must have a
// global step (GetOrCreateGlobalStep).
//
// Creating a session: the chief restores the latest checkpoint in
// checkpoint_dir if there is one and otherwise runs the initializer; a
// non-chief polls ReportUninitializedVariables until the chief has
// initialized every variable, for at most wait_for_chief_timeout
// (DeadlineExceeded naming the variables still uninitialized). Then every
// hook's AfterCreateSession runs.
//
// Recovery: when a step (with its hooks' work) or a session creation fails
// with Aborted (a task restarted) or Unavailable (a task unreachable), the
// session is closed and a new one created and prepared as above — the chief
// restores the last checkpoint, so the global step goes back to it — and
// the step is run again, as TensorFlow does. Up to max_recoveries new
// sessions per Run (or Create) call, waiting recovery_backoff, doubling up to
// max_recovery_backoff, before each, and none started once recovery_timeout
// (by default the startup timeout) has passed since the failure (for Create:
// since it began); every decision is a line on stderr.
// Variables not in the last checkpoint lose their progress; a step whose
// hooks failed after it ran is run twice.
//
// Thread safety: call from one thread (hooks are not thread-safe).
#ifndef TENSORGRID_CLIENT_TRAINING_MONITORED_SESSION_H_
#define TENSORGRID_CLIENT_TRAINING_MONITORED_SESSION_H_

#include <cstdint>
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
#include "client/training/hooks.h"
#include "client/training/saver.h"
#include "client/training/variables.h"
#include "proto/config.pb.h"

namespace tensorgrid {
namespace training {

struct MonitoredTrainingSessionOptions {
  // "" for an in-process session, else a task's master, "grpc://host:port".
  std::string master;
  ConfigProto config;
  // The chief initializes or restores the model and saves checkpoints.
  bool is_chief = true;

  // Where the chief restores from and saves to; "" for no checkpoints.
  std::string checkpoint_dir;
  // How often the chief saves (a CheckpointSaverHook): every N global steps
  // or so long. Neither given: every 10 minutes (TensorFlow's default).
  std::optional<int64_t> save_checkpoint_steps;
  std::optional<absl::Duration> save_checkpoint_secs;
  std::string checkpoint_basename = "model.ckpt";
  SaverOptions saver_options;

  // The chief logs global steps per second (a StepCounterHook) every N
  // steps; 0 turns it off.
  int64_t log_step_count_steps = 100;

  // Where the chief writes TensorBoard event files (a SummarySaverHook):
  // the graph, `summary_scalars` and global_step/sec every N global steps
  // or so long (neither given: every 100 steps). "": no summaries (unlike
  // TensorFlow, checkpoint_dir is not the default). docs/tensorboard.md.
  std::string summary_dir;
  std::optional<int64_t> save_summaries_steps;
  std::optional<absl::Duration> save_summaries_secs;
  std::vector<std::pair<std::string, Output>> summary_scalars;
  // Run on every task, in this order, after the built-in hooks.
  std::vector<std::shared_ptr<SessionRunHook>> hooks;
  // Run on the chief only, after `hooks`.
  std::vector<std::shared_ptr<SessionRunHook>> chief_only_hooks;

  // How long a non-chief waits for the chief to initialize the variables,
  // and how often it checks. TensorFlow waits 2 hours; a worker that hangs
  // silently that long hides a dead chief, so the default is 5 minutes.
  absl::Duration wait_for_chief_timeout = absl::Minutes(5);
  absl::Duration wait_for_chief_poll_interval = absl::Seconds(1);

  // New sessions tried per Run call after Aborted or Unavailable, and the
  // wait before the first (doubling up to max_recovery_backoff).
  int max_recoveries = 5;
  absl::Duration recovery_backoff = absl::Seconds(1);
  absl::Duration max_recovery_backoff = absl::Seconds(30);
  // No new session is tried once this has passed since the failure (for
  // Create, since it began), so that a task that never comes costs about
  // one startup timeout, not one per attempt. Zero: the startup timeout,
  // config.operation_timeout_in_ms (60 s when unset). More patience: a
  // longer duration (each attempt still waits up to the startup timeout).
  absl::Duration recovery_timeout = absl::ZeroDuration();
};

class MonitoredTrainingSession {
 public:
  // Adds the initializer, the readiness check and the Saver to `scope`'s
  // graph, runs the hooks' Begin and creates the first session (the chief
  // initializing or restoring, a non-chief waiting for it). Errors:
  // InvalidArgument for bad options, NotFound without a global step, the
  // hooks' errors, DeadlineExceeded when the chief never initializes, the
  // last Aborted/Unavailable once max_recoveries sessions have failed.
  static absl::StatusOr<std::unique_ptr<MonitoredTrainingSession>> Create(
      const Scope& scope, MonitoredTrainingSessionOptions options);
  // Closes the session (as Close) if it is still open; errors go to stderr.
  ~MonitoredTrainingSession();

  MonitoredTrainingSession(const MonitoredTrainingSession&) = delete;
  MonitoredTrainingSession& operator=(const MonitoredTrainingSession&) = delete;

  // One step: the hooks' BeforeRun, the step with what they asked for added,
  // their AfterRun. `outputs` gets the values of `fetches` only. Recovers from
  // Aborted and Unavailable as the header says. FailedPrecondition after Close.
  absl::Status Run(const ClientSession::FeedType& feeds, const std::vector<Output>& fetches,
                   const std::vector<Operation>& targets, std::vector<Tensor>* outputs);
  // The same, run with `run_options` merged with the hooks' (a ProfilerHook
  // asks for FULL_TRACE; see SessionRunArgs); `run_metadata` (may be null)
  // gets what the step recorded (step_stats, partition graphs), as
  // TensorFlow's run(fetches, feed_dict, options, run_metadata).
  absl::Status Run(const RunOptions& run_options, const ClientSession::FeedType& feeds,
                   const std::vector<Output>& fetches, const std::vector<Operation>& targets,
                   std::vector<Tensor>* outputs, RunMetadata* run_metadata);

  // True once a hook asked to stop (StopAtStepHook at its last step) or after Close.
  bool should_stop() const { return stop_requested_ || closed_; }

  // Runs every hook's End (the CheckpointSaverHook saves a last checkpoint)
  // and closes the session. Returns the first error; closing twice is OK.
  absl::Status Close();

  // Sessions created after the first one (recoveries so far).
  int recoveries() const { return sessions_created_ > 1 ? sessions_created_ - 1 : 0; }
  // The checkpoint the current session was restored from ("" if it was
  // initialized, or on a non-chief).
  const std::string& restored_checkpoint() const { return restored_checkpoint_; }

 private:
  MonitoredTrainingSession(const Scope& scope, MonitoredTrainingSessionOptions options);

  // Graph additions and every hook's Begin.
  absl::Status Build();
  // A new session, prepared (initialized, restored or waited for) and shown
  // to the hooks; retried after Aborted/Unavailable, counting `attempt` up
  // to max_recoveries (attempt 0 is the first session, not a recovery).
  absl::Status CreateSession(absl::Status cause, int* attempt);
  // options_.recovery_timeout, or the startup timeout when that is zero.
  absl::Duration RecoveryTimeout() const;
  absl::Status PrepareSession();
  absl::Status RestoreOrInitialize();
  absl::Status WaitForChief();
  // One step with the hooks around it, on the current session.
  absl::Status RunWithHooks(const SessionRunArgs& original, std::vector<Tensor>* outputs,
                            RunMetadata* run_metadata);
  // The wait before recovery `attempt` (1-based).
  absl::Duration BackOffBefore(int attempt) const;
  // Waits before recovery `attempt` (1-based) and says why on stderr.
  void BackOff(const absl::Status& cause, const char* what, int attempt) const;

  Scope scope_;
  const MonitoredTrainingSessionOptions options_;
  std::vector<std::shared_ptr<SessionRunHook>> hooks_;  // built-in, then the options'
  Variable global_step_;
  Operation init_op_;
  Output ready_op_;
  std::shared_ptr<Saver> saver_;  // with a checkpoint_dir

  std::unique_ptr<ClientSession> session_;
  bool stop_requested_ = false;
  bool closed_ = false;
  int sessions_created_ = 0;
  absl::Time recovery_start_;  // of the failure being recovered from (or of Create)
  std::string restored_checkpoint_;
};

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_MONITORED_SESSION_H_
