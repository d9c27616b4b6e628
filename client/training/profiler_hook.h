// ProfilerHook: traces a step every N global steps or seconds and writes its
// Chrome trace (TensorFlow's tf.train.ProfilerHook).
//
//   training::ProfilerHookOptions profiling;
//   profiling.save_steps = 100;
//   profiling.output_dir = "/tmp/traces";
//   options.hooks.push_back(std::make_shared<training::ProfilerHook>(profiling));
//   // ... /tmp/traces/timeline-1.json, timeline-101.json, ... for chrome://tracing
//
// A traced step runs with RunOptions FULL_TRACE and partition graphs (merged
// into the step's options, SessionRunArgs), and its RunMetadata becomes
// "<output_dir>/timeline-<global step>.json" through ToChromeTrace
// (core/runtime/trace.h): one process per device, one slice per node, an
// arrow per transfer. The first step is traced; then a step is traced when
// the global step it will reach is save_steps past the last traced one, or
// save_secs after it. The global step in a file's name is read after the
// step (exact with one worker; with several, the value that step saw).
// Needs a global step. Files are written atomically.
#ifndef TENSORGRID_CLIENT_TRAINING_PROFILER_HOOK_H_
#define TENSORGRID_CLIENT_TRAINING_PROFILER_HOOK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/training/hooks.h"
#include "client/training/variables.h"

namespace tensorgrid {
namespace training {

struct ProfilerHookOptions {
  // Exactly one of these: trace every N global steps, or every so long.
  std::optional<int64_t> save_steps;
  std::optional<absl::Duration> save_secs;
  // Where the traces go (made if missing); "" for the current directory.
  std::string output_dir;
};

class ProfilerHook final : public SessionRunHook {
 public:
  explicit ProfilerHook(ProfilerHookOptions options);

  // InvalidArgument for bad options, NotFound without a global step, the
  // error of creating output_dir.
  absl::Status Begin(const Scope& scope) override;
  absl::Status AfterCreateSession(ClientSession& session) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override;

  // The path of the last trace written ("" before the first).
  const std::string& last_trace() const { return last_trace_; }

 private:
  ProfilerHookOptions options_;
  SecondOrStepTimer timer_;
  Variable global_step_;
  // The global step after the last step (exact after a traced step; counted
  // up by one per step, or raised to what a step fetched, in between).
  std::optional<int64_t> last_step_;
  bool tracing_ = false;  // this step
  std::string last_trace_;
};

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_PROFILER_HOOK_H_
