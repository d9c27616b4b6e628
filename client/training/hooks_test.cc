// The stock hooks and user hooks, driven by a MonitoredTrainingSession on
// in-process sessions. The model: a global step and a float `w`, both
// incremented by `train`, so w == global step between steps.
#include "client/training/hooks.h"

#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/monitored_session.h"
#include "client/training/monitored_session_testutil.h"
#include "client/training/saver.h"
#include "client/training/variables.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace training {
namespace {

MonitoredTrainingSessionOptions Quiet() {
  MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  return options;
}

// Runs `train` until the session says stop (at most `limit` times); returns the count.
int TrainUntilStop(MonitoredTrainingSession& session, const CountingModel& model, int limit = 100) {
  int runs = 0;
  while (!session.should_stop() && runs < limit) {
    EXPECT_OK(session.Run({}, {}, {model.train}, nullptr));
    ++runs;
  }
  return runs;
}

TEST(StopAtStepHookTest, StopsAtTheLastStep) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {StopAtStepHook::AtStep(5)};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ(TrainUntilStop(**session, model), 5);
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{5}, 5.f));
  EXPECT_OK((*session)->Close());
}

TEST(StopAtStepHookTest, ForStepsCountsFromTheRestoredStep) {
  const std::string dir = TestDir();
  {
    CountingModel model;
    MonitoredTrainingSessionOptions options = Quiet();
    options.checkpoint_dir = dir;
    options.save_checkpoint_steps = 100;
    options.hooks = {StopAtStepHook::AtStep(3)};
    auto session = MonitoredTrainingSession::Create(model.root, options);
    ASSERT_OK(session.status());
    EXPECT_EQ(TrainUntilStop(**session, model), 3);
    ASSERT_OK((*session)->Close());  // saves model.ckpt-3
  }
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.checkpoint_dir = dir;
  options.save_checkpoint_steps = 100;
  auto stop = StopAtStepHook::ForSteps(4);
  options.hooks = {stop};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ((*session)->restored_checkpoint(), dir + "/model.ckpt-3");
  EXPECT_EQ(stop->last_step(), 7);
  EXPECT_EQ(TrainUntilStop(**session, model), 4);
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{7}, 7.f));
}

TEST(CheckpointSaverHookTest, SavesAtStartEveryNStepsAndAtTheEndAndTheLatestRestores) {
  const std::string dir = TestDir();
  {
    CountingModel model;
    MonitoredTrainingSessionOptions options = Quiet();
    options.checkpoint_dir = dir;
    options.save_checkpoint_steps = 3;
    options.saver_options.max_to_keep = 0;  // keep all, to see every save
    options.hooks = {StopAtStepHook::AtStep(10)};
    auto session = MonitoredTrainingSession::Create(model.root, options);
    ASSERT_OK(session.status());
    EXPECT_EQ((*session)->restored_checkpoint(), "");
    EXPECT_EQ(TrainUntilStop(**session, model), 10);
    ASSERT_OK((*session)->Close());
  }
  absl::StatusOr<CheckpointState> state = GetCheckpointState(dir);
  ASSERT_OK(state.status());
  EXPECT_EQ(state->model_checkpoint_path, dir + "/model.ckpt-10");
  std::vector<std::string> expected;
  for (int step : {0, 3, 6, 9, 10}) expected.push_back(absl::StrCat(dir, "/model.ckpt-", step));
  EXPECT_EQ(state->all_model_checkpoint_paths, expected);

  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.checkpoint_dir = dir;
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ((*session)->restored_checkpoint(), dir + "/model.ckpt-10");
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{10}, 10.f));
}

TEST(CheckpointSaverHookTest, DoesNotSaveTwiceAtTheLastStep) {
  const std::string dir = TestDir();
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.checkpoint_dir = dir;
  options.save_checkpoint_steps = 2;
  options.saver_options.max_to_keep = 0;
  options.hooks = {StopAtStepHook::AtStep(4)};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ(TrainUntilStop(**session, model), 4);
  ASSERT_OK((*session)->Close());
  absl::StatusOr<CheckpointState> state = GetCheckpointState(dir);
  ASSERT_OK(state.status());
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{dir + "/model.ckpt-0", dir + "/model.ckpt-2",
                                      dir + "/model.ckpt-4"}));
}

TEST(CheckpointSaverHookTest, NeedsExactlyOneInterval) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  CheckpointSaverHookOptions saving;
  saving.checkpoint_dir = TestDir();
  saving.save_steps = 1;
  saving.save_secs = absl::Seconds(1);
  options.hooks = {std::make_shared<CheckpointSaverHook>(saving)};
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kInvalidArgument,
                "CheckpointSaverHook: give exactly one of a step count and a time interval");
}

TEST(StepCounterHookTest, ReportsStepsPerSecondEveryNSteps) {
  CountingModel model;
  std::vector<std::pair<int64_t, double>> reports;
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {
      StopAtStepHook::AtStep(6),
      std::make_shared<StepCounterHook>(2, std::nullopt, [&reports](int64_t step, double rate) {
        reports.emplace_back(step, rate);
      })};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ(TrainUntilStop(**session, model), 6);
  // The clock starts at step 1; reports follow every 2 global steps.
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].first, 3);
  EXPECT_EQ(reports[1].first, 5);
  for (const auto& report : reports) EXPECT_GT(report.second, 0);
}

TEST(StepCounterHookTest, RejectsANonPositiveStepCount) {
  CountingModel model;
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {std::make_shared<StepCounterHook>(0, std::nullopt)};
  EXPECT_STATUS(MonitoredTrainingSession::Create(model.root, options).status(), kInvalidArgument,
                "StepCounterHook: the step count must be positive, not 0");
}

TEST(LoggingTensorHookTest, LogsEveryNIterationsAndAtTheEnd) {
  CountingModel model;
  std::vector<std::string> lines;
  LoggingTensorHook::Options logging;
  logging.every_n_iter = 2;
  logging.at_end = true;
  logging.output = [&lines](const std::string& line) { lines.push_back(line); };
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {StopAtStepHook::AtStep(5),
                   std::make_shared<LoggingTensorHook>(
                       std::vector<std::pair<std::string, Output>>{{"w", model.w.value()},
                                                                   {"step", model.step.value()}},
                       logging)};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_EQ(TrainUntilStop(**session, model), 5);
  ASSERT_OK((*session)->Close());
  // Iterations 0, 2 and 4, then the end.
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("w = ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(", step = "), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find(" sec)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" sec)"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[3].rfind("w = 5, step = 5 (", 0), 0u) << lines[3];
}

// Records every call; fetches w, feeds `scale`, runs `extra` in steps that
// run a target; stops after `stop_after` steps.
class RecordingHook : public SessionRunHook {
 public:
  RecordingHook(Output w, Output scale, Operation extra, int stop_after)
      : w_(w), scale_(scale), extra_(extra), stop_after_(stop_after) {}
  absl::Status Begin(const Scope& scope) override {
    calls.push_back("Begin");
    return absl::OkStatus();
  }
  absl::Status AfterCreateSession(ClientSession& session) override {
    calls.push_back("AfterCreateSession");
    return absl::OkStatus();
  }
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override {
    calls.push_back(absl::StrCat("BeforeRun fetches=", context.original_args().fetches.size()));
    args->fetches.push_back(w_);
    args->feeds.emplace(scale_, 10.f);
    if (!context.original_args().targets.empty()) args->targets.push_back(extra_);
    return absl::OkStatus();
  }
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override {
    calls.push_back(absl::StrCat("AfterRun results=", values.results.size()));
    if (++steps_ == stop_after_) context.RequestStop();
    return absl::OkStatus();
  }
  absl::Status End(ClientSession& session) override {
    calls.push_back("End");
    return absl::OkStatus();
  }
  std::vector<std::string> calls;

 private:
  Output w_, scale_;
  Operation extra_;
  int stop_after_;
  int steps_ = 0;
};

TEST(SessionRunHookTest, UserHookAddsToTheStepAndRequestsAStop) {
  CountingModel model;
  auto scale = ops::Placeholder(model.root.WithOpName("scale"), DT_FLOAT);
  auto scaled = ops::Mul(model.root, model.w.value(), scale);
  Variable extra_runs(model.root, "extra_runs", {}, DT_FLOAT, Zeros());
  auto extra = ops::AssignAdd(model.root, extra_runs.handle(), 1.f);
  auto hook = std::make_shared<RecordingHook>(model.w.value(), scale, extra.operation, 2);
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {hook};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  std::vector<Tensor> out;
  // The caller fetches `scaled`, which needs the hook's feed; it gets only its own fetch.
  ASSERT_OK((*session)->Run({}, {scaled}, {model.train}, &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE((*session)->should_stop());
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  EXPECT_TRUE((*session)->should_stop());
  ASSERT_OK((*session)->Run({}, {extra_runs.value()}, {}, &out));
  ExpectTensorEqual<float>(out[0], {2}, TensorShape({}));  // the hook's target ran in both steps
  ASSERT_OK((*session)->Close());
  EXPECT_EQ(hook->calls, (std::vector<std::string>{
                             "Begin", "AfterCreateSession", "BeforeRun fetches=1",
                             "AfterRun results=1", "BeforeRun fetches=0", "AfterRun results=1",
                             "BeforeRun fetches=1", "AfterRun results=1", "End"}));
}

TEST(SessionRunHookTest, AFeedGivenByTheCallerAndAHookIsAnError) {
  CountingModel model;
  auto scale = ops::Placeholder(model.root.WithOpName("scale"), DT_FLOAT);
  auto extra = ops::NoOp(model.root.WithOpName("extra"));
  MonitoredTrainingSessionOptions options = Quiet();
  options.hooks = {std::make_shared<RecordingHook>(model.w.value(), scale, extra.operation, 100)};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  EXPECT_STATUS((*session)->Run({{scale, 2.f}}, {}, {model.train}, nullptr), kInvalidArgument,
                "tensor 'scale:0' is fed by a hook and by the caller or another hook");
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
