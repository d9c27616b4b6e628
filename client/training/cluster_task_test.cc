#include "client/training/cluster_task.h"

#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client_session.h"
#include "core/platform/free_port.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {
namespace {

// 1 ps and 2 workers on free loopback ports.
TfConfig Config(const std::vector<int>& ports, const std::string& job, int index) {
  TfConfig config;
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromFlag(absl::StrCat(
      "ps=127.0.0.1:", ports[0], ";worker=127.0.0.1:", ports[1], ",127.0.0.1:", ports[2]));
  EXPECT_OK(cluster.status());
  if (cluster.ok()) config.cluster = *cluster;
  config.task = {job, index};
  return config;
}

// Whether something accepts connections on 127.0.0.1:`port`, asked until
// `limit` passes.
bool Listening(int port, absl::Duration limit) {
  const absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (ok) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

ServeUntilDoneOptions Fast() {
  ServeUntilDoneOptions options;
  options.poll = absl::Milliseconds(100);
  return options;
}

TEST(ClusterTaskTest, APsStopsOnceEveryWorkerIsDone) {
  const std::vector<int> ports = FreePorts(3);
  absl::Status ps_status = absl::UnknownError("not run");
  testing::internal::CaptureStdout();
  std::thread ps([&] { ps_status = ServeUntilWorkersDone(Config(ports, "ps", 0), Fast()); });
  std::vector<std::unique_ptr<Server>> workers;
  for (int w = 0; w < 2; ++w) {
    absl::StatusOr<std::unique_ptr<Server>> server =
        StartTaskServer(Config(ports, "worker", w), ServerOptions());
    ASSERT_OK(server.status());
    workers.push_back(*std::move(server));
  }
  for (int w = 0; w < 2; ++w) {
    Scope root = Scope::NewRootScope();
    std::vector<Operation> done = WorkerDoneOps(root, Config(ports, "worker", w));
    ASSERT_OK(root.status());
    EXPECT_EQ(done.size(), 1u);  // one ps task
    ClientSession session(root, workers[w]->target());
    ASSERT_OK(session.Run({}, {}, done, nullptr));
  }
  for (auto& server : workers) server->Stop();
  ps.join();
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_OK(ps_status);
  EXPECT_NE(out.find("tg_server ready /job:ps/replica:0/task:0 127.0.0.1:"), std::string::npos)
      << out;
  EXPECT_NE(out.find("/job:ps/replica:0/task:0: all 2 workers are done, stopping"),
            std::string::npos)
      << out;
}

TEST(ClusterTaskTest, SigtermBeforeTheWorkersAreDoneIsAGracefulStop) {
  const std::vector<int> ports = FreePorts(3);
  absl::Status ps_status = absl::UnknownError("not run");
  testing::internal::CaptureStderr();
  std::thread ps([&] { ps_status = ServeUntilWorkersDone(Config(ports, "ps", 0), Fast()); });
  // The signals are blocked in the ps thread before its server listens.
  ASSERT_TRUE(Listening(ports[0], absl::Seconds(30)));
  pthread_kill(ps.native_handle(), SIGTERM);
  ps.join();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_OK(ps_status);
  EXPECT_NE(err.find("/job:ps/replica:0/task:0: Terminated before every worker was done, "
                     "stopping"),
            std::string::npos)
      << err;
}

TEST(ClusterTaskTest, WrongTasksAreInvalidArguments) {
  const std::vector<int> ports = {1, 2, 3};
  Scope root = Scope::NewRootScope();
  EXPECT_TRUE(WorkerDoneOps(root, Config(ports, "ps", 0)).empty());
  EXPECT_STATUS(root.status(), kInvalidArgument,
                "WorkerDoneOps: /job:ps/replica:0/task:0 is not a worker");
  EXPECT_STATUS(ServeUntilWorkersDone(Config(ports, "worker", 1), Fast()), kInvalidArgument,
                "/job:worker/replica:0/task:1 is not a ps task");
  ServeUntilDoneOptions never;
  never.poll = absl::ZeroDuration();
  EXPECT_STATUS(ServeUntilWorkersDone(Config(ports, "ps", 0), never), kInvalidArgument,
                "poll must be positive");
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
