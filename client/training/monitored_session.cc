#include "client/training/monitored_session.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/training/global_step.h"
#include "client/training/summary_saver_hook.h"
#include "core/platform/status.h"

namespace tensorgrid {
namespace training {

namespace {

constexpr char kWho[] = "MonitoredTrainingSession";

// What a new session may cure: a task that restarted or could not be reached.
bool IsRecoverable(const absl::Status& status) {
  return absl::IsAborted(status) || absl::IsUnavailable(status);
}

void Say(const std::string& line) { std::fprintf(stderr, "%s: %s\n", kWho, line.c_str()); }

absl::Status CheckOptions(const MonitoredTrainingSessionOptions& options) {
  if (options.max_recoveries < 0) {
    return errors::InvalidArgument(kWho, ": max_recoveries must be >= 0, not ",
                                   options.max_recoveries);
  }
  if (options.recovery_backoff < absl::ZeroDuration() ||
      options.max_recovery_backoff < absl::ZeroDuration() ||
      options.recovery_timeout < absl::ZeroDuration() ||
      options.wait_for_chief_timeout < absl::ZeroDuration() ||
      options.wait_for_chief_poll_interval <= absl::ZeroDuration()) {
    return errors::InvalidArgument(kWho,
                                   ": the backoffs, the recovery timeout and the chief wait "
                                   "must not be negative, "
                                   "and the poll interval must be positive");
  }
  if (options.checkpoint_dir.empty() &&
      (options.save_checkpoint_steps.has_value() || options.save_checkpoint_secs.has_value())) {
    return errors::InvalidArgument(kWho, ": save_checkpoint_steps/secs need a checkpoint_dir");
  }
  if (options.summary_dir.empty() &&
      (options.save_summaries_steps.has_value() || options.save_summaries_secs.has_value() ||
       !options.summary_scalars.empty())) {
    return errors::InvalidArgument(kWho,
                                   ": save_summaries_steps/secs and summary_scalars need a "
                                   "summary_dir");
  }
  if (options.log_step_count_steps < 0) {
    return errors::InvalidArgument(kWho, ": log_step_count_steps must be >= 0, not ",
                                   options.log_step_count_steps);
  }
  return absl::OkStatus();
}

// A step's fetches and targets, each once, with where every requester's
// values are.
class MergedStep {
 public:
  // Adds `outputs` (InvalidArgument for an invalid one) and returns their
  // indexes in fetches().
  absl::StatusOr<std::vector<size_t>> AddFetches(const std::vector<Output>& outputs) {
    std::vector<size_t> indexes;
    for (const Output& output : outputs) {
      if (!output.valid()) return errors::InvalidArgument(kWho, ": fetching an invalid Output");
      auto [it, added] = fetch_index_.emplace(output.name(), fetches_.size());
      if (added) fetches_.push_back(output);
      indexes.push_back(it->second);
    }
    return indexes;
  }
  void AddTargets(const std::vector<Operation>& ops) {
    for (const Operation& op : ops) {
      if (target_names_.insert(op.name()).second) targets_.push_back(op);
    }
  }
  absl::Status AddFeeds(const ClientSession::FeedType& feeds, bool from_hook) {
    for (const auto& [output, value] : feeds) {
      if (!feeds_.emplace(output, value).second) {
        return errors::InvalidArgument(
            kWho, ": tensor '", output.name(), "' is fed by ",
            from_hook ? "a hook and by the caller or another hook" : "the caller twice");
      }
    }
    return absl::OkStatus();
  }

  const std::vector<Output>& fetches() const { return fetches_; }
  const std::vector<Operation>& targets() const { return targets_; }
  const ClientSession::FeedType& feeds() const { return feeds_; }

 private:
  std::vector<Output> fetches_;
  std::unordered_map<std::string, size_t> fetch_index_;
  std::vector<Operation> targets_;
  std::unordered_set<std::string> target_names_;
  ClientSession::FeedType feeds_;
};

std::vector<Tensor> Pick(const std::vector<Tensor>& values, const std::vector<size_t>& indexes) {
  std::vector<Tensor> picked;
  picked.reserve(indexes.size());
  for (size_t i : indexes) picked.push_back(values[i]);
  return picked;
}

}  // namespace

MonitoredTrainingSession::MonitoredTrainingSession(const Scope& scope,
                                                   MonitoredTrainingSessionOptions options)
    : scope_(scope), options_(std::move(options)) {}

MonitoredTrainingSession::~MonitoredTrainingSession() {
  absl::Status status = Close();
  if (!status.ok()) Say(absl::StrCat("closing: ", status.ToString()));
}

absl::StatusOr<std::unique_ptr<MonitoredTrainingSession>> MonitoredTrainingSession::Create(
    const Scope& scope, MonitoredTrainingSessionOptions options) {
  TG_RETURN_IF_ERROR(CheckOptions(options));
  std::unique_ptr<MonitoredTrainingSession> session(
      new MonitoredTrainingSession(scope, std::move(options)));
  TG_RETURN_IF_ERROR(session->Build());
  int attempt = 0;
  TG_RETURN_IF_ERROR(session->CreateSession(absl::OkStatus(), &attempt));
  return session;
}

absl::Status MonitoredTrainingSession::Build() {
  TG_RETURN_IF_ERROR(scope_.status());
  absl::StatusOr<Variable> step = GetGlobalStep(scope_);
  if (!step.ok()) {
    return WithContext(step.status(),
                       absl::StrCat(kWho, " needs a global step (GetOrCreateGlobalStep)"));
  }
  global_step_ = *step;
  const Scope scope = scope_.WithNoControlDependencies();
  init_op_ = GlobalVariablesInitializer(scope);
  ready_op_ = ReportUninitializedVariables(scope);
  if (!options_.checkpoint_dir.empty()) {
    saver_ = std::make_shared<Saver>(scope, options_.saver_options);
    TG_RETURN_IF_ERROR(WithContext(saver_->status(), kWho));
  }
  if (options_.is_chief) {
    if (options_.log_step_count_steps > 0) {
      hooks_.push_back(
          std::make_shared<StepCounterHook>(options_.log_step_count_steps, std::nullopt));
    }
    if (saver_ != nullptr) {
      CheckpointSaverHookOptions saving;
      saving.checkpoint_dir = options_.checkpoint_dir;
      saving.save_steps = options_.save_checkpoint_steps;
      saving.save_secs = options_.save_checkpoint_secs;
      if (!saving.save_steps.has_value() && !saving.save_secs.has_value()) {
        saving.save_secs = absl::Minutes(10);
      }
      saving.checkpoint_basename = options_.checkpoint_basename;
      saving.saver = saver_;
      hooks_.push_back(std::make_shared<CheckpointSaverHook>(std::move(saving)));
    }
    if (!options_.summary_dir.empty()) {
      SummarySaverHookOptions summaries;
      summaries.output_dir = options_.summary_dir;
      summaries.save_steps = options_.save_summaries_steps;
      summaries.save_secs = options_.save_summaries_secs;
      if (!summaries.save_steps.has_value() && !summaries.save_secs.has_value()) {
        summaries.save_steps = 100;
      }
      summaries.scalars = options_.summary_scalars;
      hooks_.push_back(std::make_shared<SummarySaverHook>(std::move(summaries)));
    }
  }
  hooks_.insert(hooks_.end(), options_.hooks.begin(), options_.hooks.end());
  if (options_.is_chief) {
    hooks_.insert(hooks_.end(), options_.chief_only_hooks.begin(), options_.chief_only_hooks.end());
  }
  for (const auto& hook : hooks_) {
    if (hook == nullptr) return errors::InvalidArgument(kWho, ": a hook is null");
    TG_RETURN_IF_ERROR(hook->Begin(scope_));
  }
  return scope_.status();
}

absl::Duration MonitoredTrainingSession::BackOffBefore(int attempt) const {
  absl::Duration wait = options_.recovery_backoff;
  for (int i = 1; i < attempt && wait < options_.max_recovery_backoff; ++i) wait *= 2;
  return std::min(wait, options_.max_recovery_backoff);
}

void MonitoredTrainingSession::BackOff(const absl::Status& cause, const char* what,
                                       int attempt) const {
  const absl::Duration wait = BackOffBefore(attempt);
  Say(absl::StrCat(what, " (", cause.ToString(), "); recreating the session in ",
                   absl::FormatDuration(wait), ", attempt ", attempt, "/",
                   options_.max_recoveries));
  absl::SleepFor(wait);
}

absl::Duration MonitoredTrainingSession::RecoveryTimeout() const {
  if (options_.recovery_timeout > absl::ZeroDuration()) return options_.recovery_timeout;
  const int64_t ms = options_.config.operation_timeout_in_ms();
  return ms > 0 ? absl::Milliseconds(ms) : absl::Seconds(60);
}

absl::Status MonitoredTrainingSession::CreateSession(absl::Status cause, int* attempt) {
  const char* what = "step failed";
  if (*attempt == 0) recovery_start_ = absl::Now();
  while (true) {
    if (!cause.ok()) {
      // The next attempt would start after the recovery timeout.
      const absl::Duration spent = absl::Now() - recovery_start_;
      if (*attempt < options_.max_recoveries &&
          spent + BackOffBefore(*attempt + 1) >= RecoveryTimeout()) {
        return WithContext(cause,
                           absl::StrCat(kWho, ": gave up recreating the session after ",
                                        absl::FormatDuration(absl::Trunc(spent, absl::Seconds(1))),
                                        ", at attempt ", *attempt, "/", options_.max_recoveries,
                                        ": the next would start past recovery_timeout ",
                                        absl::FormatDuration(RecoveryTimeout())));
      }
      if (*attempt >= options_.max_recoveries) {
        return WithContext(cause, options_.max_recoveries == 0
                                      ? absl::StrCat(kWho,
                                                     ": not recreating the session "
                                                     "(max_recoveries 0)")
                                      : absl::StrCat(kWho,
                                                     ": gave up recreating the session "
                                                     "after attempt ",
                                                     *attempt, "/", options_.max_recoveries));
      }
      ++*attempt;
      BackOff(cause, what, *attempt);
    }
    session_.reset();  // closes the broken session first
    absl::Status status = PrepareSession();
    if (status.ok()) {
      if (++sessions_created_ > 1) {
        Say(absl::StrCat("session recreated (attempt ", *attempt, "/", options_.max_recoveries,
                         ")"));
      }
      return absl::OkStatus();
    }
    session_.reset();
    if (!IsRecoverable(status)) return status;
    cause = status;
    what = "creating the session failed";
  }
}

absl::Status MonitoredTrainingSession::PrepareSession() {
  SessionOptions session_options;
  session_options.target = options_.master;
  session_options.config = options_.config;
  session_ = std::make_unique<ClientSession>(scope_, session_options);
  restored_checkpoint_.clear();
  TG_RETURN_IF_ERROR(options_.is_chief ? RestoreOrInitialize() : WaitForChief());
  for (const auto& hook : hooks_) TG_RETURN_IF_ERROR(hook->AfterCreateSession(*session_));
  return absl::OkStatus();
}

absl::Status MonitoredTrainingSession::RestoreOrInitialize() {
  if (saver_ != nullptr) {
    absl::StatusOr<std::string> latest =
        LatestCheckpoint(options_.checkpoint_dir, options_.saver_options.latest_filename);
    if (latest.ok()) {
      TG_RETURN_IF_ERROR(saver_->Restore(*session_, *latest));
      restored_checkpoint_ = *latest;
      TG_ASSIGN_OR_RETURN(int64_t step, ReadGlobalStep(*session_, global_step_));
      Say(absl::StrCat("restored the variables from ", *latest, " (global step ", step, ")"));
      return absl::OkStatus();
    }
    if (!absl::IsNotFound(latest.status())) {
      return WithContext(latest.status(), absl::StrCat(kWho, ": finding the latest checkpoint"));
    }
  }
  TG_RETURN_IF_ERROR(WithContext(session_->Run({}, {}, {init_op_}, nullptr),
                                 absl::StrCat(kWho, ": initializing the variables")));
  Say(saver_ == nullptr ? "initialized the variables"
                        : absl::StrCat("initialized the variables (no checkpoint in ",
                                       options_.checkpoint_dir, ")"));
  return absl::OkStatus();
}

absl::Status MonitoredTrainingSession::WaitForChief() {
  const absl::Duration timeout = options_.wait_for_chief_timeout;
  const absl::Time deadline = absl::Now() + timeout;
  absl::Time next_report = absl::Now();
  bool waited = false;
  while (true) {
    std::vector<Tensor> out;
    TG_RETURN_IF_ERROR(WithContext(
        session_->Run({ready_op_}, &out),
        absl::StrCat(kWho, ": checking whether the chief has initialized the variables")));
    if (out[0].NumElements() == 0) {
      if (waited) Say("the chief has initialized the variables");
      return absl::OkStatus();
    }
    const std::string missing = absl::StrJoin(out[0].values<std::string>(), ", ");
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return errors::DeadlineExceeded(kWho, ": waited ", absl::FormatDuration(timeout),
                                      " (wait_for_chief_timeout) for the chief to initialize the "
                                      "variables; still uninitialized: ",
                                      missing);
    }
    if (now >= next_report) {
      Say(absl::StrCat("waiting up to ",
                       absl::FormatDuration(absl::Trunc(deadline - now, absl::Milliseconds(1))),
                       " for the chief to initialize the variables; uninitialized: ", missing));
      next_report = now + absl::Seconds(30);
    }
    waited = true;
    absl::SleepFor(std::min(options_.wait_for_chief_poll_interval, deadline - now));
  }
}

absl::Status MonitoredTrainingSession::Run(const ClientSession::FeedType& feeds,
                                           const std::vector<Output>& fetches,
                                           const std::vector<Operation>& targets,
                                           std::vector<Tensor>* outputs) {
  return Run(RunOptions(), feeds, fetches, targets, outputs, nullptr);
}

absl::Status MonitoredTrainingSession::Run(const RunOptions& run_options,
                                           const ClientSession::FeedType& feeds,
                                           const std::vector<Output>& fetches,
                                           const std::vector<Operation>& targets,
                                           std::vector<Tensor>* outputs,
                                           RunMetadata* run_metadata) {
  if (closed_) return errors::FailedPrecondition(kWho, ": Run after Close");
  const SessionRunArgs original{fetches, targets, feeds, run_options};
  int attempt = 0;
  while (true) {
    absl::Status status = RunWithHooks(original, outputs, run_metadata);
    if (status.ok() || !IsRecoverable(status)) return status;
    TG_RETURN_IF_ERROR(CreateSession(status, &attempt));
    Say("running the step again");
  }
}

absl::Status MonitoredTrainingSession::RunWithHooks(const SessionRunArgs& original,
                                                    std::vector<Tensor>* outputs,
                                                    RunMetadata* run_metadata) {
  SessionRunContext context(original, session_.get());
  MergedStep step;
  TG_ASSIGN_OR_RETURN(std::vector<size_t> caller_fetches, step.AddFetches(original.fetches));
  step.AddTargets(original.targets);
  TG_RETURN_IF_ERROR(step.AddFeeds(original.feeds, /*from_hook=*/false));
  RunOptions options = original.options;
  std::vector<std::vector<size_t>> hook_fetches;
  for (const auto& hook : hooks_) {
    SessionRunArgs args;
    TG_RETURN_IF_ERROR(hook->BeforeRun(context, &args));
    TG_ASSIGN_OR_RETURN(std::vector<size_t> indexes, step.AddFetches(args.fetches));
    hook_fetches.push_back(std::move(indexes));
    step.AddTargets(args.targets);
    TG_RETURN_IF_ERROR(step.AddFeeds(args.feeds, /*from_hook=*/true));
    MergeRunOptions(args.options, &options);
  }
  std::vector<Tensor> values;
  RunMetadata metadata;
  TG_RETURN_IF_ERROR(session_->Run(options, step.feeds(), step.fetches(), step.targets(), &values,
                                   &metadata));
  for (size_t i = 0; i < hooks_.size(); ++i) {
    TG_RETURN_IF_ERROR(hooks_[i]->AfterRun(
        context, SessionRunValues{Pick(values, hook_fetches[i]), options, &metadata}));
  }
  if (context.stop_requested()) stop_requested_ = true;
  if (outputs != nullptr) *outputs = Pick(values, caller_fetches);
  if (run_metadata != nullptr) *run_metadata = std::move(metadata);
  return absl::OkStatus();
}

absl::Status MonitoredTrainingSession::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  absl::Status status;
  if (session_ != nullptr) {
    for (const auto& hook : hooks_) status.Update(hook->End(*session_));
    session_.reset();
  }
  return status;
}

}  // namespace training
}  // namespace tensorgrid
