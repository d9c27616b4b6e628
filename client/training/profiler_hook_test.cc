#include "client/training/profiler_hook.h"

#include <memory>
#include <string>
#include <vector>

#include "client/training/monitored_session.h"
#include "client/training/monitored_session_testutil.h"
#include "core/platform/file.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {
namespace {

MonitoredTrainingSessionOptions WithHook(std::shared_ptr<SessionRunHook> hook) {
  MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  options.hooks = {std::move(hook)};
  return options;
}

bool Exists(const std::string& path) { return ReadFileToString(path).ok(); }

TEST(ProfilerHookTest, TracesTheFirstStepThenEveryNGlobalSteps) {
  CountingModel model;
  ProfilerHookOptions profiling;
  profiling.save_steps = 3;
  profiling.output_dir = TestDir() + "/traces";  // made by Begin
  auto hook = std::make_shared<ProfilerHook>(profiling);
  auto session = MonitoredTrainingSession::Create(model.root, WithHook(hook));
  ASSERT_OK(session.status());
  for (int i = 0; i < 10; ++i) ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  for (int step = 1; step <= 10; ++step) {
    const std::string path = profiling.output_dir + "/timeline-" + std::to_string(step) + ".json";
    EXPECT_EQ(Exists(path), step % 3 == 1) << path;
  }
  EXPECT_EQ(hook->last_trace(), profiling.output_dir + "/timeline-10.json");

  // A Chrome trace of the step (ToChromeTrace): its slices name the nodes.
  absl::StatusOr<std::string> trace = ReadFileToString(hook->last_trace());
  ASSERT_OK(trace.status());
  EXPECT_NE(trace->find("\"traceEvents\":["), std::string::npos) << trace->substr(0, 100);
  EXPECT_NE(trace->find("\"name\":\"train\""), std::string::npos);
  EXPECT_NE(trace->find("\"ph\":\"X\""), std::string::npos);
}

TEST(ProfilerHookTest, CountsFromTheGlobalStepTheSessionStartsAt) {
  CountingModel model;
  const std::string dir = TestDir();
  MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  options.checkpoint_dir = dir + "/ckpt";
  options.save_checkpoint_steps = 100;
  {
    auto first = MonitoredTrainingSession::Create(model.root, options);
    ASSERT_OK(first.status());
    for (int i = 0; i < 5; ++i) ASSERT_OK((*first)->Run({}, {}, {model.train}, nullptr));
    ASSERT_OK((*first)->Close());  // saves global step 5
  }
  ProfilerHookOptions profiling;
  profiling.save_steps = 2;
  profiling.output_dir = dir;
  auto hook = std::make_shared<ProfilerHook>(profiling);
  CountingModel again;
  options.hooks = {hook};
  auto session = MonitoredTrainingSession::Create(again.root, options);
  ASSERT_OK(session.status());
  for (int i = 0; i < 3; ++i) ASSERT_OK((*session)->Run({}, {}, {again.train}, nullptr));
  EXPECT_TRUE(Exists(dir + "/timeline-6.json"));
  EXPECT_FALSE(Exists(dir + "/timeline-7.json"));
  EXPECT_TRUE(Exists(dir + "/timeline-8.json"));
  EXPECT_FALSE(Exists(dir + "/timeline-1.json"));
}

TEST(ProfilerHookTest, BadOptionsAndAnUnwritableDirectoryFailCreate) {
  CountingModel model;
  ProfilerHookOptions both;
  both.save_steps = 1;
  both.save_secs = absl::Seconds(1);
  EXPECT_STATUS(
      MonitoredTrainingSession::Create(model.root, WithHook(std::make_shared<ProfilerHook>(both)))
          .status(),
      kInvalidArgument, "ProfilerHook: give exactly one of a step count and a time interval");
  ProfilerHookOptions zero;
  zero.save_steps = 0;
  EXPECT_STATUS(
      MonitoredTrainingSession::Create(model.root, WithHook(std::make_shared<ProfilerHook>(zero)))
          .status(),
      kInvalidArgument, "ProfilerHook: the step count must be positive, not 0");
  const std::string file = TestDir() + "/a_file";
  ASSERT_OK(WriteWholeFile(file, "x"));
  ProfilerHookOptions blocked;
  blocked.save_steps = 1;
  blocked.output_dir = file + "/traces";
  EXPECT_STATUS(MonitoredTrainingSession::Create(
                    model.root, WithHook(std::make_shared<ProfilerHook>(blocked)))
                    .status(),
                kFailedPrecondition, "ProfilerHook: output_dir '" + file + "/traces'");
}

TEST(ProfilerHookTest, NeedsAGlobalStep) {
  Scope root = Scope::NewRootScope();
  ProfilerHookOptions profiling;
  profiling.save_steps = 1;
  ProfilerHook hook(profiling);
  EXPECT_STATUS(hook.Begin(root), kNotFound, "ProfilerHook needs a global step");
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
