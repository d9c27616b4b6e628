// MonitoredTrainingSession on in-process sessions: the chief's
// initialize-or-restore, the non-chief's bounded wait, recovery from a
// (fake) Aborted step, the bounds on recovery, and its errors. The model: a
// global step and a float `w`, both incremented by `train`. Real task
// failures: monitored_session_recovery_test.cc.
#include "client/training/monitored_session.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/hooks.h"
#include "client/training/monitored_session_testutil.h"
#include "client/training/variables.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {
namespace {

MonitoredTrainingSessionOptions Quiet() {
  MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  options.recovery_backoff = absl::Milliseconds(1);
  return options;
}

// Fails the AfterRun of the steps listed (1-based, counting every AfterRun
// it sees) with `error`.
class FailingHook : public SessionRunHook {
 public:
  FailingHook(std::vector<int> failing_steps, absl::Status error)
      : failing_steps_(std::move(failing_steps)), error_(std::move(error)) {}
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override {
    ++calls_;
    for (int step : failing_steps_) {
      if (step == calls_ || step < 0) return error_;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int> failing_steps_;  // -1: every step
  absl::Status error_;
  int calls_ = 0;
};

TEST(MonitoredTrainingSessionTest, ChiefInitializesWithoutACheckpoint) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.checkpoint_dir = TestDir();
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ((*session)->restored_checkpoint(), "");
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{0}, 0.f));
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{1}, 1.f));
  EXPECT_FALSE((*session)->should_stop());
  EXPECT_EQ((*session)->recoveries(), 0);
}

TEST(MonitoredTrainingSessionTest, ChiefRestoresTheLatestCheckpointAndANewGraphSeesIt) {
  const std::string dir = TestDir();
  {
    CountingModel model;
    MonitoredTrainingSessionOptions options = Quiet();
    options.checkpoint_dir = dir;
    options.save_checkpoint_steps = 2;
    auto session = MonitoredTrainingSession::Create(model.root, options);
    ASSERT_OK(session.status());
    for (int i = 0; i < 5; ++i) ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
    // Destroyed without Close: the destructor closes, and End saves step 5.
  }
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.checkpoint_dir = dir;
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ((*session)->restored_checkpoint(), dir + "/model.ckpt-5");
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{5}, 5.f));
}

TEST(MonitoredTrainingSessionTest, NonChiefGivesUpNamingTheUninitializedVariables) {
  // In-process sessions share nothing, so no chief ever initializes these.
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.is_chief = false;
  options.wait_for_chief_timeout = absl::Milliseconds(50);
  options.wait_for_chief_poll_interval = absl::Milliseconds(10);
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kDeadlineExceeded,
                "MonitoredTrainingSession: waited 50ms (wait_for_chief_timeout) for the chief to "
                "initialize the variables; still uninitialized: global_step, w");
}

TEST(MonitoredTrainingSessionTest, AnAbortedStepRecreatesTheSessionRestoresAndRunsAgain) {
  const std::string dir = TestDir();
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.checkpoint_dir = dir;
  options.save_checkpoint_steps = 2;
  options.max_recoveries = 3;
  options.hooks = {std::make_shared<FailingHook>(
      std::vector<int>{5}, absl::AbortedError("task /job:ps/replica:0/task:0 restarted (fake)"))};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  for (int i = 0; i < 4; ++i) ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  // Step 5 runs, then fails; the new in-process session restores step 4 and runs it again.
  testing::internal::CaptureStderr();
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  const std::string log = testing::internal::GetCapturedStderr();
  std::fputs(log.c_str(), stderr);  // keep it in the test log
  EXPECT_NE(log.find("MonitoredTrainingSession: step failed (ABORTED: task "
                     "/job:ps/replica:0/task:0 restarted (fake)); recreating the session in 1ms, "
                     "attempt 1/3"),
            std::string::npos)
      << log;
  EXPECT_NE(
      log.find(absl::StrCat("restored the variables from ", dir, "/model.ckpt-4 (global step 4)")),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("running the step again"), std::string::npos) << log;
  EXPECT_EQ((*session)->recoveries(), 1);
  EXPECT_EQ((*session)->restored_checkpoint(), dir + "/model.ckpt-4");
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{5}, 5.f));
}

TEST(MonitoredTrainingSessionTest, RecoveryIsBoundedAndKeepsTheCode) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.max_recoveries = 2;
  options.hooks = {
      std::make_shared<FailingHook>(std::vector<int>{-1}, absl::UnavailableError("fake outage"))};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  testing::internal::CaptureStderr();
  EXPECT_STATUS((*session)->Run({}, {}, {model.train}, nullptr), kUnavailable,
                "MonitoredTrainingSession: gave up recreating the session after attempt 2/2: "
                "fake outage");
  const std::string log = testing::internal::GetCapturedStderr();
  std::fputs(log.c_str(), stderr);  // keep it in the test log
  EXPECT_NE(log.find("recreating the session in 2ms, attempt 2/2"), std::string::npos) << log;
  EXPECT_EQ((*session)->recoveries(), 2);
}

TEST(MonitoredTrainingSessionTest, OtherErrorsAreNotRetried) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {
      std::make_shared<FailingHook>(std::vector<int>{1}, absl::InvalidArgumentError("bad hook"))};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_STATUS((*session)->Run({}, {}, {model.train}, nullptr), kInvalidArgument, "bad hook");
  EXPECT_EQ((*session)->recoveries(), 0);
  // The step itself ran once.
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{1}, 1.f));
}

TEST(MonitoredTrainingSessionTest, CloseEndsTheSession) {
  CountingModel model;
  auto session = MonitoredTrainingSession::Create(model.root, Quiet());
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Close());
  EXPECT_TRUE((*session)->should_stop());
  EXPECT_OK((*session)->Close());
  EXPECT_STATUS((*session)->Run({}, {}, {model.train}, nullptr), kFailedPrecondition,
                "Run after Close");
}

TEST(MonitoredTrainingSessionTest, NeedsAGlobalStep) {
  Scope root = Scope::NewRootScope();
  Variable w(root, "w", {}, DT_FLOAT, Zeros());
  EXPECT_STATUS(MonitoredTrainingSession::Create(root, Quiet()).status(), kNotFound,
                "MonitoredTrainingSession needs a global step (GetOrCreateGlobalStep)");
}

TEST(MonitoredTrainingSessionTest, RejectsBadOptions) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.save_checkpoint_steps = 10;
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kInvalidArgument,
                "save_checkpoint_steps/secs need a checkpoint_dir");
  options = Quiet();
  options.max_recoveries = -1;
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kInvalidArgument,
                "max_recoveries must be >= 0, not -1");
  options = Quiet();
  options.save_summaries_steps = 10;
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kInvalidArgument,
                "save_summaries_steps/secs and summary_scalars need a summary_dir");
  options = Quiet();
  options.hooks = {nullptr};
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kInvalidArgument,
                "a hook is null");
}

TEST(MonitoredTrainingSessionTest, ChiefOnlyHooksRunOnTheChief) {
  CountingModel model;
  auto stop = StopAtStepHook::AtStep(2);
  MonitoredTrainingSessionOptions options = Quiet();
  options.chief_only_hooks = {stop};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  EXPECT_TRUE((*session)->should_stop());
}

// Whether the step's stats name `node`.
bool Traced(const RunMetadata& metadata, const std::string& node) {
  for (const auto& dev : metadata.step_stats().dev_stats()) {
    for (const auto& stats : dev.node_stats()) {
      if (stats.node_name() == node) return true;
    }
  }
  return false;
}

// Asks for `options` in every step and records what each step ran with.
class OptionsHook : public SessionRunHook {
 public:
  explicit OptionsHook(RunOptions options) : options_(std::move(options)) {}
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override {
    args->options = options_;
    return absl::OkStatus();
  }
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override {
    seen_options.push_back(values.options);
    seen_traced.push_back(Traced(*values.run_metadata, "train"));
    return absl::OkStatus();
  }
  std::vector<RunOptions> seen_options;
  std::vector<bool> seen_traced;

 private:
  RunOptions options_;
};

TEST(MonitoredTrainingSessionTest, RunOptionsTraceTheStepIntoRunMetadata) {
  CountingModel model;
  auto watcher = std::make_shared<OptionsHook>(RunOptions());
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {watcher};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  RunOptions trace;
  trace.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  ASSERT_OK((*session)->Run(trace, {}, {}, {model.train}, nullptr, &metadata));
  EXPECT_TRUE(Traced(metadata, "train")) << metadata.DebugString();
  metadata.Clear();
  ASSERT_OK((*session)->Run(RunOptions(), {}, {}, {model.train}, nullptr, &metadata));
  EXPECT_EQ(metadata.step_stats().dev_stats_size(), 0);
  EXPECT_EQ(watcher->seen_traced, (std::vector<bool>{true, false}));
  EXPECT_EQ(watcher->seen_options[0].trace_level(), RunOptions::FULL_TRACE);
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{2}, 2.f));
}

TEST(MonitoredTrainingSessionTest, HooksRunOptionsAreMergedWithTheCallers) {
  CountingModel model;
  RunOptions asked;
  asked.set_trace_level(RunOptions::SOFTWARE_TRACE);
  asked.set_timeout_in_ms(60000);
  auto tracer = std::make_shared<OptionsHook>(asked);
  auto watcher = std::make_shared<OptionsHook>(RunOptions());
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {tracer, watcher};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  RunOptions caller;
  caller.set_timeout_in_ms(1000);
  caller.set_output_partition_graphs(true);
  RunMetadata metadata;
  ASSERT_OK((*session)->Run(caller, {}, {}, {model.train}, nullptr, &metadata));
  ASSERT_EQ(watcher->seen_options.size(), 1u);
  const RunOptions& merged = watcher->seen_options[0];
  EXPECT_EQ(merged.trace_level(), RunOptions::SOFTWARE_TRACE);
  EXPECT_EQ(merged.timeout_in_ms(), 60000);
  EXPECT_TRUE(merged.output_partition_graphs());
  EXPECT_TRUE(watcher->seen_traced[0]);
  // The caller gets the step's metadata, traced at a hook's request.
  EXPECT_TRUE(Traced(metadata, "train"));
  EXPECT_GT(metadata.partition_graphs_size(), 0);
  // The plain Run merges with no options of the caller's.
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  EXPECT_EQ(watcher->seen_options[1].timeout_in_ms(), 60000);
  EXPECT_FALSE(watcher->seen_options[1].output_partition_graphs());
}

TEST(MergeRunOptionsTest, HighestTraceLongestTimeoutAnyPartitionGraphs) {
  RunOptions into;
  into.set_trace_level(RunOptions::FULL_TRACE);
  into.set_timeout_in_ms(10);
  RunOptions from;
  from.set_trace_level(RunOptions::SOFTWARE_TRACE);
  from.set_timeout_in_ms(20);
  from.set_output_partition_graphs(true);
  MergeRunOptions(from, &into);
  EXPECT_EQ(into.trace_level(), RunOptions::FULL_TRACE);
  EXPECT_EQ(into.timeout_in_ms(), 20);
  EXPECT_TRUE(into.output_partition_graphs());
  MergeRunOptions(RunOptions(), &into);
  EXPECT_EQ(into.timeout_in_ms(), 20);
  EXPECT_TRUE(into.output_partition_graphs());
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
