#include "client/training/hooks.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/training/global_step.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {

absl::Status CheckExactlyOne(const char* hook, const std::optional<int64_t>& steps,
                             const std::optional<absl::Duration>& secs) {
  if (steps.has_value() == secs.has_value()) {
    return errors::InvalidArgument(hook, ": give exactly one of a step count and a time interval");
  }
  if (steps.has_value() && *steps <= 0) {
    return errors::InvalidArgument(hook, ": the step count must be positive, not ", *steps);
  }
  if (secs.has_value() && *secs <= absl::ZeroDuration()) {
    return errors::InvalidArgument(hook, ": the time interval must be positive, not ",
                                   absl::FormatDuration(*secs));
  }
  return absl::OkStatus();
}

absl::StatusOr<Variable> FindGlobalStep(const char* hook, const Scope& scope) {
  absl::StatusOr<Variable> step = GetGlobalStep(scope);
  if (!step.ok()) {
    return WithContext(step.status(),
                       absl::StrCat(hook, " needs a global step (GetOrCreateGlobalStep)"));
  }
  return step;
}

// ------------------------------------------------------------------ timer

bool SecondOrStepTimer::ShouldTriggerForStep(int64_t step) const {
  if (!last_step_.has_value()) return true;
  if (*last_step_ == step) return false;
  if (every_secs_.has_value() && absl::Now() - last_time_ >= *every_secs_) return true;
  if (every_steps_.has_value() && step >= *last_step_ + *every_steps_) return true;
  return false;
}

std::optional<std::pair<absl::Duration, int64_t>> SecondOrStepTimer::UpdateLastTriggeredStep(
    int64_t step) {
  const absl::Time now = absl::Now();
  std::optional<std::pair<absl::Duration, int64_t>> elapsed;
  if (last_step_.has_value()) elapsed.emplace(now - last_time_, step - *last_step_);
  last_step_ = step;
  last_time_ = now;
  return elapsed;
}

// ------------------------------------------------------------ global step

void MergeRunOptions(const RunOptions& from, RunOptions* into) {
  into->set_trace_level(std::max(into->trace_level(), from.trace_level()));
  into->set_timeout_in_ms(std::max(into->timeout_in_ms(), from.timeout_in_ms()));
  into->set_output_partition_graphs(into->output_partition_graphs() ||
                                    from.output_partition_graphs());
}

absl::StatusOr<int64_t> GlobalStepValue(const Tensor& value) {
  if (value.NumElements() == 1 && value.dtype() == DT_INT64) return value.scalar<int64_t>();
  if (value.NumElements() == 1 && value.dtype() == DT_INT32) return value.scalar<int32_t>();
  return errors::InvalidArgument("the global step must be an int32 or int64 scalar, not ",
                                 value.DebugString());
}

absl::StatusOr<int64_t> ReadGlobalStep(ClientSession& session, const Variable& global_step) {
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(
      WithContext(session.Run({global_step.value()}, &out), "reading the global step"));
  return GlobalStepValue(out[0]);
}

// --------------------------------------------------------- StopAtStepHook

std::shared_ptr<StopAtStepHook> StopAtStepHook::AtStep(int64_t last_step) {
  return std::shared_ptr<StopAtStepHook>(new StopAtStepHook(std::nullopt, last_step));
}

std::shared_ptr<StopAtStepHook> StopAtStepHook::ForSteps(int64_t num_steps) {
  return std::shared_ptr<StopAtStepHook>(new StopAtStepHook(num_steps, std::nullopt));
}

absl::Status StopAtStepHook::Begin(const Scope& scope) {
  if (num_steps_.has_value() && *num_steps_ < 0) {
    return errors::InvalidArgument("StopAtStepHook: the number of steps must be >= 0, not ",
                                   *num_steps_);
  }
  TG_ASSIGN_OR_RETURN(global_step_, FindGlobalStep("StopAtStepHook", scope));
  return absl::OkStatus();
}

absl::Status StopAtStepHook::AfterCreateSession(ClientSession& session) {
  // ForSteps counts from where the first session started; a recovered
  // session keeps that last step.
  if (last_step_.has_value()) return absl::OkStatus();
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(session, global_step_));
  last_step_ = step + *num_steps_;
  return absl::OkStatus();
}

absl::Status StopAtStepHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  args->fetches.push_back(global_step_.value());
  return absl::OkStatus();
}

absl::Status StopAtStepHook::AfterRun(SessionRunContext& context, const SessionRunValues& values) {
  // The value fetched may predate the step's increment; only when it is
  // close is the global step read again, after the step.
  TG_ASSIGN_OR_RETURN(int64_t stale, GlobalStepValue(values.results[0]));
  if (stale + 1 < *last_step_) return absl::OkStatus();
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(context.session(), global_step_));
  if (step >= *last_step_) context.RequestStop();
  return absl::OkStatus();
}

// ---------------------------------------------------- CheckpointSaverHook

CheckpointSaverHook::CheckpointSaverHook(CheckpointSaverHookOptions options)
    : options_(std::move(options)), timer_(options_.save_steps, options_.save_secs) {}

absl::Status CheckpointSaverHook::Begin(const Scope& scope) {
  TG_RETURN_IF_ERROR(
      CheckExactlyOne("CheckpointSaverHook", options_.save_steps, options_.save_secs));
  if (options_.checkpoint_dir.empty()) {
    return errors::InvalidArgument("CheckpointSaverHook: the checkpoint directory is empty");
  }
  TG_ASSIGN_OR_RETURN(global_step_, FindGlobalStep("CheckpointSaverHook", scope));
  if (options_.saver == nullptr) {
    options_.saver = std::make_shared<Saver>(scope, options_.saver_options);
  }
  return WithContext(options_.saver->status(), "CheckpointSaverHook");
}

absl::Status CheckpointSaverHook::Save(ClientSession& session, int64_t step) {
  const std::string prefix =
      absl::StrCat(options_.checkpoint_dir, "/", options_.checkpoint_basename);
  TG_ASSIGN_OR_RETURN(last_checkpoint_, options_.saver->Save(session, prefix, step));
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::AfterCreateSession(ClientSession& session) {
  // The state the session starts from: after a recovery, the restored step.
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(session, global_step_));
  TG_RETURN_IF_ERROR(Save(session, step));
  timer_.UpdateLastTriggeredStep(step);
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  args->fetches.push_back(global_step_.value());
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::AfterRun(SessionRunContext& context,
                                           const SessionRunValues& values) {
  TG_ASSIGN_OR_RETURN(int64_t stale, GlobalStepValue(values.results[0]));
  if (!timer_.ShouldTriggerForStep(stale + 1)) return absl::OkStatus();
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(context.session(), global_step_));
  if (!timer_.ShouldTriggerForStep(step)) return absl::OkStatus();
  timer_.UpdateLastTriggeredStep(step);
  return Save(context.session(), step);
}

absl::Status CheckpointSaverHook::End(ClientSession& session) {
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(session, global_step_));
  if (timer_.last_triggered_step() == step) return absl::OkStatus();
  timer_.UpdateLastTriggeredStep(step);
  return Save(session, step);
}

// -------------------------------------------------------- StepCounterHook

StepCounterHook::StepCounterHook(std::optional<int64_t> every_n_steps,
                                 std::optional<absl::Duration> every_n_secs, Report report)
    : status_(CheckExactlyOne("StepCounterHook", every_n_steps, every_n_secs)),
      timer_(every_n_steps, every_n_secs),
      report_(std::move(report)) {
  if (report_ == nullptr) {
    report_ = [](int64_t step, double rate) {
      std::fprintf(stderr, "StepCounterHook: global_step/sec: %g (global step %lld)\n", rate,
                   static_cast<long long>(step));
    };
  }
}

absl::Status StepCounterHook::Begin(const Scope& scope) {
  TG_RETURN_IF_ERROR(status_);
  TG_ASSIGN_OR_RETURN(global_step_, FindGlobalStep("StepCounterHook", scope));
  return absl::OkStatus();
}

absl::Status StepCounterHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  args->fetches.push_back(global_step_.value());
  return absl::OkStatus();
}

absl::Status StepCounterHook::AfterRun(SessionRunContext& context, const SessionRunValues& values) {
  TG_ASSIGN_OR_RETURN(int64_t stale, GlobalStepValue(values.results[0]));
  if (!timer_.ShouldTriggerForStep(stale + 1)) return absl::OkStatus();
  TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(context.session(), global_step_));
  if (!timer_.ShouldTriggerForStep(step)) return absl::OkStatus();
  const auto elapsed = timer_.UpdateLastTriggeredStep(step);
  if (!elapsed.has_value()) return absl::OkStatus();  // the first trigger starts the clock
  const double secs = absl::ToDoubleSeconds(elapsed->first);
  if (secs > 0) report_(step, static_cast<double>(elapsed->second) / secs);
  return absl::OkStatus();
}

// ------------------------------------------------------ LoggingTensorHook

LoggingTensorHook::LoggingTensorHook(std::vector<std::pair<std::string, Output>> tensors,
                                     Options options)
    : tensors_(std::move(tensors)),
      options_(std::move(options)),
      timer_(options_.every_n_iter, options_.every_n_secs),
      status_(CheckExactlyOne("LoggingTensorHook", options_.every_n_iter, options_.every_n_secs)) {
  if (options_.output == nullptr) {
    options_.output = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  }
}

absl::Status LoggingTensorHook::Begin(const Scope& scope) {
  TG_RETURN_IF_ERROR(status_);
  if (tensors_.empty()) return errors::InvalidArgument("LoggingTensorHook: no tensors to log");
  for (const auto& [label, tensor] : tensors_) {
    if (!tensor.valid()) {
      return errors::InvalidArgument("LoggingTensorHook: tensor '", label, "' is invalid");
    }
  }
  return absl::OkStatus();
}

absl::Status LoggingTensorHook::BeforeRun(SessionRunContext& context, SessionRunArgs* args) {
  should_trigger_ = timer_.ShouldTriggerForStep(iter_count_);
  if (should_trigger_) {
    for (const auto& entry : tensors_) args->fetches.push_back(entry.second);
  }
  return absl::OkStatus();
}

absl::Status LoggingTensorHook::AfterRun(SessionRunContext& context,
                                         const SessionRunValues& values) {
  if (should_trigger_) {
    Log(values.results);
    should_trigger_ = false;
  }
  ++iter_count_;
  return absl::OkStatus();
}

absl::Status LoggingTensorHook::End(ClientSession& session) {
  if (!options_.at_end) return absl::OkStatus();
  std::vector<Output> fetches;
  for (const auto& entry : tensors_) fetches.push_back(entry.second);
  std::vector<Tensor> values;
  TG_RETURN_IF_ERROR(WithContext(session.Run(fetches, &values), "LoggingTensorHook at the end"));
  Log(values);
  return absl::OkStatus();
}

void LoggingTensorHook::Log(const std::vector<Tensor>& values) {
  std::string line;
  for (size_t i = 0; i < tensors_.size() && i < values.size(); ++i) {
    absl::StrAppend(&line, i == 0 ? "" : ", ", tensors_[i].first, " = ",
                    values[i].SummarizeValue(options_.max_entries));
  }
  const auto elapsed = timer_.UpdateLastTriggeredStep(iter_count_);
  if (elapsed.has_value()) {
    absl::StrAppend(&line, absl::StrFormat(" (%.3f sec)", absl::ToDoubleSeconds(elapsed->first)));
  }
  options_.output(line);
}

}  // namespace training
}  // namespace tensorgrid
