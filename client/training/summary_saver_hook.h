// SummarySaverHook: writes scalar tensors and global_step/sec to TensorBoard
// event files every N global steps or seconds, and the graph once
// (TensorFlow's SummarySaverHook and StepCounterHook with a summary writer).
//
//   training::SummarySaverHookOptions summaries;
//   summaries.save_steps = 100;
//   summaries.output_dir = "/tmp/logs/run1";      // or a shared `writer`
//   summaries.scalars = {{"loss", loss}, {"accuracy", accuracy}};
//   options.chief_only_hooks.push_back(std::make_shared<training::SummarySaverHook>(summaries));
//   // tensorboard --logdir /tmp/logs
//
// The first step writes, then a step writes when the global step it will
// reach is save_steps past the last written one, or save_secs after it. A
// written step fetches the scalars with the step itself and records them at
// the global step read after it (exact with one worker), in one Event, with
// "global_step/sec" from the second write on (global steps over seconds
// since the previous write). The graph of the Scope given to Begin is
// written when the first session is created. End flushes the writer (and
// closes one the hook made). Needs a global step. docs/tensorboard.md.
#ifndef TENSORGRID_CLIENT_TRAINING_SUMMARY_SAVER_HOOK_H_
#define TENSORGRID_CLIENT_TRAINING_SUMMARY_SAVER_HOOK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/output.h"
#include "client/scope.h"
#include "client/training/hooks.h"
#include "client/training/summary_writer.h"
#include "client/training/variables.h"

namespace tensorgrid {
namespace training {

struct SummarySaverHookOptions {
  // Exactly one of these: write every N global steps, or every so long.
  std::optional<int64_t> save_steps;
  std::optional<absl::Duration> save_secs;
  // Where the events go: `writer` if given, else a SummaryWriter on
  // `output_dir` made in Begin (one of the two is needed).
  std::shared_ptr<SummaryWriter> writer;
  std::string output_dir;
  // (tag, tensor): scalar tensors (float, double, int32 or int64, one
  // element) written under their tags.
  std::vector<std::pair<std::string, Output>> scalars;
  // Also write "global_step/sec".
  bool steps_per_sec = true;
  // Write the graph when the first session is created.
  bool write_graph = true;
};

class SummarySaverHook final : public SessionRunHook {
 public:
  explicit SummarySaverHook(SummarySaverHookOptions options);

  // InvalidArgument for bad options, NotFound without a global step, the
  // SummaryWriter's errors (an unwritable output_dir).
  absl::Status Begin(const Scope& scope) override;
  absl::Status AfterCreateSession(ClientSession& session) override;
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override;
  // InvalidArgument naming the tag of a tensor that is not a numeric scalar.
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override;
  absl::Status End(ClientSession& session) override;

  // The writer the events go to (null before Begin without options.writer).
  SummaryWriter* writer() const { return writer_.get(); }

 private:
  absl::Status Write(const std::vector<Tensor>& values, int64_t step);

  SummarySaverHookOptions options_;
  SecondOrStepTimer timer_;
  std::shared_ptr<SummaryWriter> writer_;
  bool own_writer_ = false;
  std::optional<Scope> scope_;  // whose graph is written
  bool graph_written_ = false;
  Variable global_step_;
  // The global step after the last step (as ProfilerHook counts it).
  std::optional<int64_t> last_step_;
  bool writing_ = false;  // this step
};

}  // namespace training
}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_TRAINING_SUMMARY_SAVER_HOOK_H_
