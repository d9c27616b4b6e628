#include "client/training/summary_saver_hook.h"

#include <dirent.h>

#include <memory>
#include <string>
#include <vector>

#include "client/ops/standard_ops.h"
#include "client/training/monitored_session.h"
#include "client/training/monitored_session_testutil.h"
#include "client/training/summary_writer.h"
#include "core/platform/file.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {
namespace {

// The counting model plus a fed float `x` and `twice` = 2x, race-free
// values to write.
struct FedModel : CountingModel {
  FedModel() {
    x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    twice = ops::Mul(root.WithOpName("twice"), x, 2.f);
  }
  Output x, twice;
};

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> paths;
  DIR* d = ::opendir(dir.c_str());
  while (struct dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    if (std::string(e->d_name).find("tfevents") != std::string::npos) {
      paths.push_back(dir + "/" + e->d_name);
    }
  }
  if (d != nullptr) ::closedir(d);
  return paths;
}

MonitoredTrainingSessionOptions WithHook(std::shared_ptr<SessionRunHook> hook) {
  MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  options.chief_only_hooks = {std::move(hook)};
  return options;
}

TEST(SummarySaverHookTest, WritesTheGraphThenScalarsEveryNGlobalSteps) {
  FedModel model;
  const std::string dir = TestDir() + "/logs";
  SummarySaverHookOptions summaries;
  summaries.save_steps = 3;
  summaries.output_dir = dir;
  summaries.scalars = {{"twice", model.twice}, {"global_step", model.step.value()}};
  auto session = MonitoredTrainingSession::Create(
      model.root, WithHook(std::make_shared<SummarySaverHook>(summaries)));
  ASSERT_OK(session.status());
  for (int i = 1; i <= 10; ++i) {
    ASSERT_OK((*session)->Run({{model.x, static_cast<float>(i)}}, {}, {model.train}, nullptr));
  }
  ASSERT_OK((*session)->Close());

  const std::vector<std::string> files = EventFiles(dir);
  ASSERT_EQ(files.size(), 1u);
  absl::StatusOr<std::vector<Event>> events = ReadEventFile(files[0]);
  ASSERT_OK(events.status());
  ASSERT_EQ(events->size(), 6u);  // version, graph, steps 1, 4, 7, 10
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
  GraphDef graph;
  ASSERT_TRUE(graph.ParseFromString((*events)[1].graph_def()));
  bool has_twice = false;
  for (const NodeDef& node : graph.node()) has_twice |= node.name() == "twice";
  EXPECT_TRUE(has_twice);
  const int64_t steps[] = {1, 4, 7, 10};
  for (int i = 0; i < 4; ++i) {
    const Event& e = (*events)[i + 2];
    EXPECT_EQ(e.step(), steps[i]);
    const auto& values = e.summary().value();
    ASSERT_EQ(values.size(), i == 0 ? 2 : 3) << e.DebugString();
    EXPECT_EQ(values[0].tag(), "twice");
    EXPECT_EQ(values[0].simple_value(), 2.f * steps[i]);  // x was fed the step number
    EXPECT_EQ(values[1].tag(), "global_step");
    EXPECT_GE(values[1].simple_value(), steps[i] - 1);  // read with the step: before or after
    EXPECT_LE(values[1].simple_value(), steps[i]);
    if (i > 0) {
      EXPECT_EQ(values[2].tag(), "global_step/sec");
      EXPECT_GT(values[2].simple_value(), 0);
    }
  }
}

TEST(SummarySaverHookTest, SharesAWriterAndFlushesItAtEnd) {
  FedModel model;
  const std::string dir = TestDir();
  auto writer = SummaryWriter::Create(dir);
  ASSERT_OK(writer.status());
  std::shared_ptr<SummaryWriter> shared = std::move(*writer);
  SummarySaverHookOptions summaries;
  summaries.save_steps = 100;
  summaries.writer = shared;
  summaries.scalars = {{"twice", model.twice}};
  summaries.write_graph = false;
  summaries.steps_per_sec = false;
  auto session = MonitoredTrainingSession::Create(
      model.root, WithHook(std::make_shared<SummarySaverHook>(summaries)));
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Run({{model.x, 3.f}}, {}, {model.train}, nullptr));
  ASSERT_OK((*session)->Close());
  absl::StatusOr<std::vector<Event>> events = ReadEventFile(shared->path());
  ASSERT_OK(events.status());
  ASSERT_EQ(events->size(), 2u);  // flushed by End, not closed
  EXPECT_EQ((*events)[1].summary().value(0).simple_value(), 6.f);
  EXPECT_OK(shared->AddScalar("after", 1, 2));
}

TEST(SummarySaverHookTest, ANonScalarIsAnErrorNamingItsTag) {
  FedModel model;
  auto vector = ops::Const(model.root.WithOpName("v"), {1.f, 2.f});
  SummarySaverHookOptions summaries;
  summaries.save_steps = 1;
  summaries.output_dir = TestDir();
  summaries.scalars = {{"v", vector}};
  auto session = MonitoredTrainingSession::Create(
      model.root, WithHook(std::make_shared<SummarySaverHook>(summaries)));
  ASSERT_OK(session.status());
  EXPECT_STATUS((*session)->Run({{model.x, 1.f}}, {}, {model.train}, nullptr), kInvalidArgument,
                "SummarySaverHook: 'v' is a float tensor of shape [2], not a float, double, int32 "
                "or int64 scalar");
}

TEST(SummarySaverHookTest, BadOptionsFailCreate) {
  FedModel model;
  SummarySaverHookOptions none;
  none.save_steps = 1;
  EXPECT_STATUS(MonitoredTrainingSession::Create(
                    model.root, WithHook(std::make_shared<SummarySaverHook>(none)))
                    .status(),
                kInvalidArgument, "give a writer or an output_dir");
  SummarySaverHookOptions both;
  both.save_steps = 1;
  both.save_secs = absl::Seconds(1);
  both.output_dir = TestDir();
  EXPECT_STATUS(MonitoredTrainingSession::Create(
                    model.root, WithHook(std::make_shared<SummarySaverHook>(both)))
                    .status(),
                kInvalidArgument,
                "SummarySaverHook: give exactly one of a step count and a time interval");
  const std::string file = TestDir() + "/a_file";
  ASSERT_OK(WriteWholeFile(file, "x"));
  SummarySaverHookOptions blocked;
  blocked.save_steps = 1;
  blocked.output_dir = file;
  EXPECT_STATUS(MonitoredTrainingSession::Create(
                    model.root, WithHook(std::make_shared<SummarySaverHook>(blocked)))
                    .status(),
                kFailedPrecondition, "SummaryWriter: logdir '" + file + "'");
}

TEST(SummarySaverHookTest, MonitoredTrainingSessionWritesSummariesOnTheChiefOnly) {
  FedModel model;
  const std::string dir = TestDir();
  MonitoredTrainingSessionOptions options;
  options.log_step_count_steps = 0;
  options.summary_dir = dir + "/chief";
  options.save_summaries_steps = 2;
  options.summary_scalars = {{"twice", model.twice}};
  {
    auto session = MonitoredTrainingSession::Create(model.root, options);
    ASSERT_OK(session.status());
    for (int i = 1; i <= 3; ++i) {
      ASSERT_OK((*session)->Run({{model.x, static_cast<float>(i)}}, {}, {model.train}, nullptr));
    }
  }  // the destructor closes: End closes the hook's writer
  const std::vector<std::string> files = EventFiles(dir + "/chief");
  ASSERT_EQ(files.size(), 1u);
  absl::StatusOr<std::vector<Event>> events = ReadEventFile(files[0]);
  ASSERT_OK(events.status());
  ASSERT_EQ(events->size(), 4u);  // version, graph, steps 1 and 3
  EXPECT_EQ((*events)[3].step(), 3);
  EXPECT_EQ((*events)[3].summary().value(0).simple_value(), 6.f);
  EXPECT_EQ((*events)[3].summary().value(1).tag(), "global_step/sec");

  // A non-chief writes none (it waits for the chief's variables, which the
  // chief above initialized in its own session only: give it none to wait for).
  Scope root = Scope::NewRootScope();
  GetOrCreateGlobalStep(root);
  options.is_chief = false;
  options.summary_dir = dir + "/worker";
  options.summary_scalars.clear();
  options.wait_for_chief_timeout = absl::ZeroDuration();
  auto worker = MonitoredTrainingSession::Create(root, options);
  EXPECT_STATUS(worker.status(), kDeadlineExceeded, "global_step");
  EXPECT_TRUE(EventFiles(dir + "/worker").empty());
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
