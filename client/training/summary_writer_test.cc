#include "client/training/summary_writer.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/platform/file.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {
namespace {

// A directory under TEST_TMPDIR named after the running test.
std::string TestDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/",
                   testing::UnitTest::GetInstance()->current_test_info()->name());
  mkdir(dir.c_str(), 0755);
  return dir;
}

std::vector<std::string> EventFiles(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  while (struct dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    if (std::string(e->d_name).find("tfevents") != std::string::npos) names.push_back(e->d_name);
  }
  if (d != nullptr) ::closedir(d);
  return names;
}

std::vector<Event> Read(const std::string& path) {
  absl::StatusOr<std::vector<Event>> events = ReadEventFile(path);
  EXPECT_OK(events.status());
  return events.ok() ? *events : std::vector<Event>();
}

TEST(SummaryWriterTest, FileNameAndVersionRecordAsTensorFlowWritesThem) {
  const std::string dir = TestDir() + "/logs/run";  // made by Create
  auto writer = SummaryWriter::Create(dir);
  ASSERT_OK(writer.status());
  char host[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string name = Basename((*writer)->path());
  ASSERT_EQ(name.size(), std::string("events.out.tfevents.").size() + 10 + 1 + strlen(host));
  EXPECT_EQ(name.substr(0, 20), "events.out.tfevents.");
  EXPECT_EQ(name.substr(20, 10).find_first_not_of("0123456789"), std::string::npos) << name;
  EXPECT_EQ(name.substr(31), host);
  EXPECT_EQ(EventFiles(dir), std::vector<std::string>{name});

  // The version record is on disk at once, before any other event.
  std::vector<Event> events = Read((*writer)->path());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GT(events[0].wall_time(), 1.5e9);
}

TEST(SummaryWriterTest, ScalarsAndGraphReadBack) {
  auto writer = SummaryWriter::Create(TestDir());
  ASSERT_OK(writer.status());
  GraphDef graph;
  graph.add_node()->set_name("x");
  graph.add_node()->set_name("y");
  ASSERT_OK((*writer)->AddGraph(graph));
  ASSERT_OK((*writer)->AddScalar("loss", 0.5, 10));
  ASSERT_OK((*writer)->AddScalars({{"loss", 0.25}, {"accuracy", 0.875}}, 20));
  ASSERT_OK((*writer)->Close());

  std::vector<Event> events = Read((*writer)->path());
  ASSERT_EQ(events.size(), 4u);
  GraphDef read_graph;
  ASSERT_TRUE(read_graph.ParseFromString(events[1].graph_def()));
  ASSERT_EQ(read_graph.node_size(), 2);
  EXPECT_EQ(read_graph.node(1).name(), "y");
  EXPECT_EQ(events[2].step(), 10);
  ASSERT_EQ(events[2].summary().value_size(), 1);
  EXPECT_EQ(events[2].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[2].summary().value(0).simple_value(), 0.5f);
  EXPECT_EQ(events[3].step(), 20);
  ASSERT_EQ(events[3].summary().value_size(), 2);
  EXPECT_EQ(events[3].summary().value(1).tag(), "accuracy");
  EXPECT_EQ(events[3].summary().value(1).simple_value(), 0.875f);
  for (const Event& e : events) EXPECT_GE(e.wall_time(), events[0].wall_time());
}

TEST(SummaryWriterTest, HoldsAtMostMaxQueueEvents) {
  SummaryWriterOptions options;
  options.max_queue = 3;
  options.flush_interval = absl::Hours(1);
  auto writer = SummaryWriter::Create(TestDir(), options);
  ASSERT_OK(writer.status());
  ASSERT_OK((*writer)->AddScalar("a", 1, 1));
  ASSERT_OK((*writer)->AddScalar("a", 2, 2));
  EXPECT_EQ(Read((*writer)->path()).size(), 1u);  // the version only
  ASSERT_OK((*writer)->AddScalar("a", 3, 3));
  EXPECT_EQ(Read((*writer)->path()).size(), 4u);  // the queue was full
  ASSERT_OK((*writer)->AddScalar("a", 4, 4));
  EXPECT_EQ(Read((*writer)->path()).size(), 4u);
  ASSERT_OK((*writer)->Flush());
  EXPECT_EQ(Read((*writer)->path()).size(), 5u);
}

TEST(SummaryWriterTest, ZeroFlushIntervalWritesEveryEvent) {
  SummaryWriterOptions options;
  options.flush_interval = absl::ZeroDuration();
  auto writer = SummaryWriter::Create(TestDir(), options);
  ASSERT_OK(writer.status());
  ASSERT_OK((*writer)->AddScalar("a", 1, 1));
  EXPECT_EQ(Read((*writer)->path()).size(), 2u);
}

TEST(SummaryWriterTest, WritersInOneDirectoryGetFilesOfTheirOwn) {
  const std::string dir = TestDir();
  auto first = SummaryWriter::Create(dir);
  auto second = SummaryWriter::Create(dir);
  ASSERT_OK(first.status());
  ASSERT_OK(second.status());
  EXPECT_NE((*first)->path(), (*second)->path());
  ASSERT_OK((*first)->AddScalar("a", 1, 1));
  ASSERT_OK((*second)->AddScalar("b", 2, 2));
  ASSERT_OK((*first)->Close());
  ASSERT_OK((*second)->Close());
  EXPECT_EQ(Read((*first)->path()).back().summary().value(0).tag(), "a");
  EXPECT_EQ(Read((*second)->path()).back().summary().value(0).tag(), "b");
  EXPECT_EQ(EventFiles(dir).size(), 2u);
}

TEST(SummaryWriterTest, UnwritableLogdirIsAClearError) {
  const std::string file = TestDir() + "/a_file";
  ASSERT_OK(WriteWholeFile(file, "not a directory"));
  EXPECT_STATUS(SummaryWriter::Create(file + "/logs").status(), kFailedPrecondition,
                "SummaryWriter: logdir '" + file + "/logs': '" + file +
                    "' exists and is not a directory");
  EXPECT_STATUS(SummaryWriter::Create(file).status(), kFailedPrecondition, "is not a directory");
  EXPECT_STATUS(SummaryWriter::Create("").status(), kInvalidArgument, "the logdir is empty");
  SummaryWriterOptions options;
  options.max_queue = 0;
  EXPECT_STATUS(SummaryWriter::Create(TestDir(), options).status(), kInvalidArgument,
                "max_queue must be >= 1, not 0");
}

TEST(SummaryWriterTest, AfterCloseAddFailsAndCloseAgainIsOk) {
  auto writer = SummaryWriter::Create(TestDir());
  ASSERT_OK(writer.status());
  ASSERT_OK((*writer)->Close());
  EXPECT_STATUS((*writer)->AddScalar("a", 1, 1), kFailedPrecondition, "is closed");
  EXPECT_STATUS((*writer)->Flush(), kFailedPrecondition, "is closed");
  EXPECT_OK((*writer)->Close());
  EXPECT_STATUS((*writer)->AddScalar("", 1, 1), kInvalidArgument, "empty tag");
}

TEST(SummaryWriterTest, AFailedWriteIsReturnedAndStays) {
  SummaryWriterOptions options;
  options.flush_interval = absl::ZeroDuration();
  auto writer = SummaryWriter::Create(TestDir(), options);
  ASSERT_OK(writer.status());
  // The file may not grow past its version record: writes fail with EFBIG
  // (a full disk, as far as the writer can tell).
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 64;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status first = (*writer)->AddScalar("loss", 1, 1);
  const absl::Status second = (*writer)->AddScalar("loss", 2, 2);
  const absl::Status flushed = (*writer)->Flush();
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_STATUS(first, kResourceExhausted, "SummaryWriter: writing '" + (*writer)->path() + "'");
  EXPECT_EQ(second, first);
  EXPECT_EQ(flushed, first);
  EXPECT_EQ((*writer)->Close(), first);
}

TEST(ReadEventFileTest, DamagedFileIsDataLoss) {
  auto writer = SummaryWriter::Create(TestDir());
  ASSERT_OK(writer.status());
  ASSERT_OK((*writer)->AddScalar("loss", 1, 1));
  ASSERT_OK((*writer)->Close());
  absl::StatusOr<std::string> contents = ReadFileToString((*writer)->path());
  ASSERT_OK(contents.status());
  std::string damaged = *contents;
  damaged[damaged.size() - 6] ^= 0x40;  // inside the last record's data
  const std::string path = TestDir() + "/damaged";
  ASSERT_OK(WriteWholeFile(path, damaged));
  EXPECT_STATUS(ReadEventFile(path).status(), kDataLoss, "record 1 at byte");
  EXPECT_STATUS(ReadEventFile(TestDir() + "/missing").status(), kNotFound, "missing");
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
