// MonitoredTrainingSession against real tasks: a ps and a worker Server in
// this process on 127.0.0.1 free ports, the session's master on the worker.
//
//   /job:ps/task:0                      /job:worker/task:0
//   global_step, w (variables)  ◄────── master; train = {w += 1, global_step += 1}
//        ▲ stopped and re-created on the same port mid-training
//
// The ps restart loses the variables; the chief's session fails, is
// recreated, restores the last checkpoint and runs the step again.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/ops/standard_ops.h"
#include "client/training/global_step.h"
#include "client/training/hooks.h"
#include "client/training/monitored_session.h"
#include "client/training/monitored_session_testutil.h"
#include "client/training/variables.h"
#include "core/platform/free_port.h"
#include "core/platform/status_testutil.h"
#include "distributed/cluster_spec.h"
#include "distributed/server.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace training {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";

// A ps and a worker task.
class Cluster {
 public:
  Cluster() {
    // Fresh addresses when a port was taken before its server bound it.
    EXPECT_OK(WithFreeLoopbackAddresses(2, [&](const std::vector<std::string>& a) {
      StopAll();
      TG_ASSIGN_OR_RETURN(spec_,
                          ClusterSpec::FromFlag(absl::StrCat("ps=", a[0], ";worker=", a[1])));
      TG_ASSIGN_OR_RETURN(ps_, TryStartServer(spec_, "ps", 0));
      TG_ASSIGN_OR_RETURN(worker_, TryStartServer(spec_, "worker", 0));
      return absl::OkStatus();
    }));
  }
  ~Cluster() { StopAll(); }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  bool ok() const { return ps_ != nullptr && worker_ != nullptr; }

  // Stops the ps and starts a new one on the same port: its variables are gone.
  bool RestartPs() {
    StopPs();
    ps_ = StartServer(spec_, "ps", 0);
    return ps_ != nullptr;
  }
  void StopPs() {
    ps_->Stop();
    ps_.reset();
  }
  std::string master() const { return worker_->target(); }

 private:
  void StopAll() {
    if (worker_ != nullptr) worker_->Stop();
    if (ps_ != nullptr) ps_->Stop();
    worker_.reset();
    ps_.reset();
  }

  ClusterSpec spec_;
  std::unique_ptr<Server> ps_, worker_;
};

MonitoredTrainingSessionOptions Options(const Cluster& cluster) {
  MonitoredTrainingSessionOptions options;
  options.master = cluster.master();
  options.config.set_operation_timeout_in_ms(20000);
  options.log_step_count_steps = 0;
  options.recovery_backoff = absl::Milliseconds(50);
  options.max_recovery_backoff = absl::Seconds(1);
  options.max_recoveries = 5;
  return options;
}

// Remembers the global step each step saw.
class GlobalStepWatcher : public SessionRunHook {
 public:
  absl::Status Begin(const Scope& scope) override {
    TG_ASSIGN_OR_RETURN(step_, GetGlobalStep(scope));
    return absl::OkStatus();
  }
  absl::Status BeforeRun(SessionRunContext& context, SessionRunArgs* args) override {
    args->fetches.push_back(step_.value());
    return absl::OkStatus();
  }
  absl::Status AfterRun(SessionRunContext& context, const SessionRunValues& values) override {
    TG_ASSIGN_OR_RETURN(int64_t step, GlobalStepValue(values.results[0]));
    seen.push_back(step);
    return absl::OkStatus();
  }
  std::vector<int64_t> seen;

 private:
  Variable step_;
};

TEST(MonitoredSessionRecoveryTest, PsRestartIsRecoveredFromTheLastCheckpoint) {
  Cluster cluster;
  ASSERT_TRUE(cluster.ok());
  const std::string dir = TestDir();
  CountingModel model("/job:ps/task:0", "/job:worker/task:0");
  auto watcher = std::make_shared<GlobalStepWatcher>();
  MonitoredTrainingSessionOptions options = Options(cluster);
  options.checkpoint_dir = dir;
  options.save_checkpoint_steps = 5;
  options.hooks = {watcher};
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  for (int i = 0; i < 12; ++i) ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  ASSERT_EQ(Values(**session, model), std::make_pair(int64_t{12}, 12.f));
  // The last checkpoint is at step 10; steps 11 and 12 are lost with the ps.

  ASSERT_TRUE(cluster.RestartPs());
  watcher->seen.clear();
  testing::internal::CaptureStderr();
  const absl::Status status = (*session)->Run({}, {}, {model.train}, nullptr);
  const std::string log = testing::internal::GetCapturedStderr();
  std::fputs(log.c_str(), stderr);  // keep it in the test log
  ASSERT_OK(status);
  EXPECT_NE(log.find("MonitoredTrainingSession: step failed ("), std::string::npos) << log;
  EXPECT_NE(log.find(kPs), std::string::npos) << log;  // the failure names the ps
  EXPECT_NE(log.find("recreating the session in 50ms, attempt 1/5"), std::string::npos) << log;
  EXPECT_NE(log.find(absl::StrCat("restored the variables from ", dir,
                                  "/model.ckpt-10 (global step 10)")),
            std::string::npos)
      << log;
  EXPECT_GE((*session)->recoveries(), 1);
  EXPECT_EQ((*session)->restored_checkpoint(), dir + "/model.ckpt-10");

  for (int i = 0; i < 3; ++i) ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  EXPECT_EQ(Values(**session, model), std::make_pair(int64_t{14}, 14.f));
  ASSERT_FALSE(watcher->seen.empty());
  EXPECT_GE(*std::min_element(watcher->seen.begin(), watcher->seen.end()), 10);
  ASSERT_OK((*session)->Close());
  absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
  ASSERT_OK(latest.status());
  EXPECT_EQ(*latest, dir + "/model.ckpt-14");
}

TEST(MonitoredSessionRecoveryTest, APsThatStaysDownEndsInUnavailableNamingIt) {
  Cluster cluster;
  ASSERT_TRUE(cluster.ok());
  CountingModel model("/job:ps/task:0", "/job:worker/task:0");
  MonitoredTrainingSessionOptions options = Options(cluster);
  options.config.set_operation_timeout_in_ms(1000);  // how long a new session waits for the ps
  options.max_recoveries = 1;
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  cluster.StopPs();
  const absl::Status status = (*session)->Run({}, {}, {model.train}, nullptr);
  EXPECT_STATUS(status, kUnavailable,
                "MonitoredTrainingSession: gave up recreating the session after attempt 1/1");
  EXPECT_NE(status.message().find(kPs), absl::string_view::npos) << status;
}

// With no ps at all, five attempts must not cost five startup timeouts:
// recovery stops once recovery_timeout (by default the startup timeout) has
// passed, both in Create and in Run.
TEST(MonitoredSessionRecoveryTest, RecoveryEndsAtTheRecoveryTimeoutNotAfterEveryAttempt) {
  Cluster cluster;
  ASSERT_TRUE(cluster.ok());
  CountingModel model("/job:ps/task:0", "/job:worker/task:0");
  MonitoredTrainingSessionOptions options = Options(cluster);
  options.config.set_operation_timeout_in_ms(1000);  // each session's wait for the ps
  auto session = MonitoredTrainingSession::Create(model.root, options);
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Run({}, {}, {model.train}, nullptr));
  cluster.StopPs();
  // Run: the first new session waits 1 s for the ps; the next would start
  // past the 1 s recovery timeout.
  absl::Status status = (*session)->Run({}, {}, {model.train}, nullptr);
  EXPECT_STATUS(status, kUnavailable,
                "at attempt 1/5: the next would start past recovery_timeout 1s");
  EXPECT_NE(status.message().find(kPs), absl::string_view::npos) << status;
  // Create: the first session alone spends the whole timeout.
  CountingModel again("/job:ps/task:0", "/job:worker/task:0");
  auto fresh = MonitoredTrainingSession::Create(again.root, options);
  EXPECT_STATUS(fresh.status(), kUnavailable,
                "at attempt 0/5: the next would start past recovery_timeout 1s");
  // More patience when asked for: attempts until max_recoveries.
  options.recovery_timeout = absl::Seconds(60);
  options.max_recoveries = 1;
  CountingModel patient("/job:ps/task:0", "/job:worker/task:0");
  fresh = MonitoredTrainingSession::Create(patient.root, options);
  EXPECT_STATUS(fresh.status(), kUnavailable, "gave up recreating the session after attempt 1/1");
}

// Records the hook calls it gets (for the non-chief's chief-only hooks).
class CallCounter : public SessionRunHook {
 public:
  absl::Status Begin(const Scope& scope) override {
    absl::MutexLock lock(&mu);
    ++calls;
    return absl::OkStatus();
  }
  absl::Mutex mu;
  int calls = 0;
};

TEST(MonitoredSessionRecoveryTest, NonChiefWaitsForTheChiefToInitialize) {
  Cluster cluster;
  ASSERT_TRUE(cluster.ok());
  CountingModel worker_model("/job:ps/task:0",
                             "/job:worker/task:0");  // the non-chief's own graph, same variables
  auto chief_only = std::make_shared<CallCounter>();
  MonitoredTrainingSessionOptions worker_options = Options(cluster);
  worker_options.is_chief = false;
  worker_options.wait_for_chief_timeout = absl::Seconds(30);
  worker_options.wait_for_chief_poll_interval = absl::Milliseconds(20);
  worker_options.chief_only_hooks = {chief_only};
  absl::StatusOr<std::unique_ptr<MonitoredTrainingSession>> worker = absl::UnknownError("not run");
  std::thread waiting(
      [&] { worker = MonitoredTrainingSession::Create(worker_model.root, worker_options); });
  // Not a timing condition: the test holds whichever starts first.
  absl::SleepFor(absl::Milliseconds(200));

  CountingModel chief_model("/job:ps/task:0", "/job:worker/task:0");
  auto chief = MonitoredTrainingSession::Create(chief_model.root, Options(cluster));
  waiting.join();
  ASSERT_OK(chief.status());
  ASSERT_OK(worker.status());
  ASSERT_OK((*chief)->Run({}, {}, {chief_model.train}, nullptr));
  ASSERT_OK((*worker)->Run({}, {}, {worker_model.train}, nullptr));
  EXPECT_EQ(Values(**chief, chief_model), std::make_pair(int64_t{2}, 2.f));
  EXPECT_EQ(chief_only->calls, 0);
  EXPECT_OK((*worker)->Close());
  EXPECT_OK((*chief)->Close());
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
