#include "client/training/profiler_hook.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/platform/file.h"
#include "core/platform/status.h"
#include "core/runtime/trace.h"

namespace tensorgrid {
namespace training {

namespace {
constexpr char kWho[] = "ProfilerHook";
}  // namespace

ProfilerHook::ProfilerHook(ProfilerHookOptions options)
    : options_(std::move(options)), timer_(options_.save_steps, options_.save_secs) {}

absl::Status ProfilerHook::Begin(const Scope& scope) {
  TG_RETURN_IF_ERROR(CheckExactlyOne(kWho, options_.save_steps, options_.save_secs));
  TG_ASSIGN_OR_RETURN(global_step_, FindGlobalStep(kWho, scope));
  return WithContext(CreateDirectories(options_.output_dir),
                     absl::StrCat(kWho, ": output_dir '", options_.output_dir, "'"));
}

absl::Status ProfilerHook::AfterCreateSession(ClientSession& session) {
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(session, global_step_));
  last_step_ = step;
  return absl::OkStatus();
}

absl::Status ProfilerHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  tracing_ = !last_step_.has_value() || timer_.ShouldTriggerForStep(*last_step_ + 1);
  args->fetches.push_back(global_step_.value());
  if (tracing_) {
    args->options.set_trace_level(RunOptions::FULL_TRACE);
    args->options.set_output_partition_graphs(true);  // exact transfer arrows
  }
  return absl::OkStatus();
}

absl::Status ProfilerHook::AfterRun(SessionRunContext& context, const SessionRunValues& values) {
  // The fetched value may have been read before or after this step's
  // increment; counting up from the last exact value is exact with one worker.
  TG_ASSIGN_OR_RETURN(int64_t fetched, GlobalStepValue(values.results[0]));
  last_step_ = std::max(last_step_.value_or(0) + 1, fetched);
  if (!tracing_) return absl::OkStatus();
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(context.session(), global_step_));
  last_step_ = step;
  timer_.UpdateLastTriggeredStep(step);
  const std::string path =
      JoinPath(options_.output_dir, absl::StrCat("timeline-", step, ".json"));
  TG_RETURN_IF_ERROR(WithContext(WriteFileAtomically(path, ToChromeTrace(*values.run_metadata)),
                                 absl::StrCat(kWho, ": writing the trace of global step ", step)));
  last_trace_ = path;
  return absl::OkStatus();
}

}  // namespace training
}  // namespace tensorgrid
