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

}  // namespace
}  // namespace training
}  // namespace tensorgrid
