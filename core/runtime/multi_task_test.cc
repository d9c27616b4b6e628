// One master driving three in-process workers (a ps and two worker tasks):
// the seed example runs across tasks, with tensors crossing tasks through
// RecvTensor — the same path the gRPC transport takes, minus the wire.
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/framework/attr_value_util.h"
#include "core/framework/rendezvous.h"
#include "core/platform/blocking.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0";
constexpr char kWorker0[] = "/job:worker/replica:0/task:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1";

class MultiTaskTest : public ::testing::Test {
 protected:
  MultiTaskTest() {
    for (const char* task : {kPs, kWorker0, kWorker1}) {
      workers_[task] = std::make_unique<Worker>(task, ConfigProto());
      map_[task] = workers_[task].get();
    }
    for (auto& [task, worker] : workers_) {
      worker->SetWorkerLookup([this](const std::string& t) -> WorkerInterface* {
        auto it = map_.find(t);
        return it == map_.end() ? nullptr : it->second;
      });
    }
  }

  static GraphDef SeedGraph() {
    std::ifstream in("tests/testdata/seed_placement.pbtxt");
    std::stringstream text;
    text << in.rdbuf();
    GraphDef g;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &g));
    return g;
  }

  std::map<std::string, std::unique_ptr<Worker>> workers_;
  Master::WorkerMap map_;
};

TEST_F(MultiTaskTest, SeedExampleRunsAcrossThreeTasks) {
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  for (int step = 0; step < 3; ++step) {
    ASSERT_OK(master.Run(options, {}, {"z2b"}, {}, &out, &metadata));
    // x = y = ones: z1b = x·y + x = 3s; z2b = z1b·x + x = 7s.
    ExpectTensorEqual<float>(out[0], {7, 7, 7, 7}, TensorShape({2, 2}));
  }
  std::set<std::string> tasks;
  for (const GraphDef& p : metadata.partition_graphs()) {
    for (const NodeDef& n : p.node())
      tasks.insert(n.device().substr(0, n.device().find("/device:")));
  }
  // Unequal x and y, so that a tensor transposed or reordered between tasks
  // shows: x = [[1, 2], [3, 4]], y = [[5, 6], [7, 8]]; z1b = x·y + x =
  // [[20, 24], [46, 54]]; z2b = z1b·x + x = [[93, 138], [211, 312]].
  ASSERT_OK(master.Run(RunOptions(),
                       {{"x/initial_value", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})},
                        {"y/initial_value", Tensor::FromVector<float>({5, 6, 7, 8}, {2, 2})}},
                       {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  ASSERT_OK(master.Run(RunOptions(), {}, {"z2b"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {93, 138, 211, 312}, TensorShape({2, 2}));
  EXPECT_EQ(tasks, (std::set<std::string>{kPs, kWorker0, kWorker1}));
}

TEST_F(MultiTaskTest, VariablesLiveOnThePsAcrossMasters) {
  {
    Master first(ConfigProto(), map_, kWorker0);
    ASSERT_OK(first.Create(SeedGraph()));
    std::vector<Tensor> out;
    ASSERT_OK(first.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  }
  // A second client session finds x and y initialized on the ps.
  Master second(ConfigProto(), map_, kWorker0);
  ASSERT_OK(second.Create(SeedGraph()));
  std::vector<Tensor> out;
  ASSERT_OK(second.Run(RunOptions(), {}, {"z1b"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {3, 3, 3, 3}, TensorShape({2, 2}));
}

TEST_F(MultiTaskTest, FailureOnThePsIsTheRootCause) {
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  std::vector<Tensor> out;
  // Nothing initialized: reading x or y on the ps fails; the workers' receives echo it.
  EXPECT_STATUS(master.Run(RunOptions(), {}, {"z2b"}, {}, &out, nullptr), kFailedPrecondition,
                "attempting to use uninitialized variable");
}

TEST_F(MultiTaskTest, MissingRouteIsUnavailableNamingTheTask) {
  workers_[kWorker1]->SetWorkerLookup(
      [](const std::string&) -> WorkerInterface* { return nullptr; });
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, &out, nullptr));
  EXPECT_STATUS(master.Run(RunOptions(), {}, {"z2b"}, {}, &out, nullptr), kUnavailable,
                "no route to task /job:");
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

TEST(WorkerRecvTensorTest, LateRequestForACleanedStepIsAbortedAndLeavesNothing) {
  Worker worker(kPs, ConfigProto());
  ASSERT_OK(worker.CleanupGraph(77));
  Tensor t;
  absl::Status s = WaitForCallback(
      [&](StatusCallback done) { worker.RecvTensorAsync(77, "k", &t, std::move(done)); });
  EXPECT_STATUS(s, kAborted, "step 77 is already over");
  // An echo of the failure that ended the step, not a root cause.
  EXPECT_TRUE(IsDerivedError(s));
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

// A task that is "not up yet" for its first `down_for` GetStatus calls.
// Forwards every call to `real`; the test doubles below override what they
// change.
class ForwardingWorker : public WorkerInterface {
 public:
  explicit ForwardingWorker(WorkerInterface* real) : real_(real) {}
  void GetStatusAsync(absl::Time deadline, GetStatusResult* r, StatusCallback d) override {
    target()->GetStatusAsync(deadline, r, std::move(d));
  }
  void RegisterGraphAsync(const RegisterGraphArgs& a, RegisterGraphResult* r,
                          StatusCallback d) override {
    target()->RegisterGraphAsync(a, r, std::move(d));
  }
  void DeregisterGraphAsync(const std::string& h, absl::Time deadline, StatusCallback d) override {
    target()->DeregisterGraphAsync(h, deadline, std::move(d));
  }
  void RunGraphAsync(const RunGraphArgs& a, RunGraphResult* r, StatusCallback d) override {
    target()->RunGraphAsync(a, r, std::move(d));
  }
  void CleanupGraphAsync(int64_t step_id, StatusCallback d) override {
    target()->CleanupGraphAsync(step_id, std::move(d));
  }

 protected:
  // Where the calls go (a task that restarts changes it).
  virtual WorkerInterface* target() { return real_; }

 private:
  WorkerInterface* const real_;
};

class LateWorker final : public ForwardingWorker {
 public:
  LateWorker(Worker* real, int down_for) : ForwardingWorker(real), down_for_(down_for) {}
  void GetStatusAsync(absl::Time deadline, GetStatusResult* r, StatusCallback done) override {
    if (down_for_-- > 0) {
      done(errors::Unavailable("connection refused by 127.0.0.1:9"));
      return;
    }
    ForwardingWorker::GetStatusAsync(deadline, r, std::move(done));
  }

 private:
  int down_for_;
};

// Forwards to a Worker, except that RegisterGraph waits for `open` once
// `gate` is set: a build that is slow to register.
class GatedRegisterWorker final : public ForwardingWorker {
 public:
  explicit GatedRegisterWorker(Worker* real) : ForwardingWorker(real) {}
  void RegisterGraphAsync(const RegisterGraphArgs& a, RegisterGraphResult* r,
                          StatusCallback d) override {
    if (gate.load()) {
      waiting.Notify();
      open.WaitForNotification();
    }
    ForwardingWorker::RegisterGraphAsync(a, r, std::move(d));
  }

  std::atomic<bool> gate{false};
  absl::Notification waiting, open;
};

// A graph of float Consts of value 5: (name, requested device) each.
GraphDef Consts(const std::vector<std::pair<std::string, std::string>>& nodes) {
  GraphDef g;
  for (const auto& [name, device] : nodes) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op("Const");
    n->set_device(device);
    SetAttr(n, "dtype", DT_FLOAT);
    SetAttr(n, "value", Tensor::Scalar<float>(5));
  }
  return g;
}

// The gRPC master runs steps on gRPC's few callback threads, whose work
// includes delivering RegisterGraph answers: a step of a built signature
// must not wait for a build in progress, or those threads could all end up
// waiting for an answer only they can deliver.
TEST(MasterLockTest, StepsOfBuiltSignaturesDoNotWaitForABuild) {
  Worker real(kWorker0, ConfigProto());
  GatedRegisterWorker worker(&real);
  Master master(ConfigProto(), &worker, kWorker0);
  ASSERT_OK(master.Create(Consts({{"c", ""}, {"d", ""}})));
  CallableOptions options;
  options.add_fetch("c");
  absl::StatusOr<int64_t> handle = master.MakeCallable(options);
  ASSERT_OK(handle.status());

  worker.gate = true;
  std::vector<Tensor> built;
  std::thread build([&] { EXPECT_OK(master.Run(RunOptions(), {}, {"d"}, {}, &built, nullptr)); });
  worker.waiting.WaitForNotification();  // the build holds the graph now
  absl::Notification ran;
  std::vector<Tensor> out;
  absl::Status status;
  std::thread step([&] {
    EXPECT_FALSE(master.IsBuilt({}, {"d"}, {}));
    master.RunCallableAsync(*handle, {}, &out, nullptr, nullptr, [&](absl::Status s) {
      status = s;
      ran.Notify();
    });
  });
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "a step of a built callable waited for another signature's build";
  worker.open.Notify();
  step.join();
  build.join();
  ASSERT_OK(status);
  ExpectTensorEqual<float>(out[0], {5}, TensorShape({}));
  ExpectTensorEqual<float>(built[0], {5}, TensorShape({}));
}

TEST(MasterStartupTest, WaitsForATaskThatComesUpLate) {
  Worker ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  LateWorker late_ps(&ps, /*down_for=*/3);
  Master master(ConfigProto(), {{kPs, &late_ps}, {kWorker0, &w0}}, kWorker0);
  ASSERT_OK(master.Create(Consts({{"c", "/job:ps/task:0"}})));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {"c"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {5}, TensorShape({}));
}

TEST(MasterStartupTest, MissingTaskIsUnavailableNamingItAfterTheStartupTimeout) {
  Worker ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  LateWorker never(&ps, /*down_for=*/1 << 30);
  ConfigProto config;
  config.set_operation_timeout_in_ms(300);
  Master master(config, {{kPs, &never}, {kWorker0, &w0}}, kWorker0);
  EXPECT_STATUS(master.Create(GraphDef()), kUnavailable,
                "cannot reach 1 of 2 tasks after 300 ms: /job:ps/replica:0/task:0 (connection "
                "refused by 127.0.0.1:9)");
}

// A caller that goes away (the gRPC master's client cancelling its call)
// ends the wait for tasks at once, not at the startup timeout.
TEST(MasterStartupTest, ACallerGoingAwayEndsTheWaitForTasks) {
  Worker ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  LateWorker never(&ps, /*down_for=*/1 << 30);
  Master master(ConfigProto(), {{kPs, &never}, {kWorker0, &w0}}, kWorker0);  // waits 60 s
  CancellationManager cancellation;
  std::thread caller_leaves([&] {
    absl::SleepFor(absl::Milliseconds(300));
    cancellation.StartCancel();
  });
  EXPECT_STATUS(master.Create(GraphDef(), absl::InfiniteFuture(), &cancellation), kCancelled,
                "the caller went away while the master waited for 1 of 2 tasks: "
                "/job:ps/replica:0/task:0 (connection refused by 127.0.0.1:9)");
  caller_leaves.join();
}

TEST(MasterStartupTest, WaitingForTasksSaysWhichAndWhyAsItGoes) {
  Worker ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  LateWorker late_ps(&ps, /*down_for=*/8);  // at least 0.7 s: retries 100 ms apart
  Master master(ConfigProto(), {{kPs, &late_ps}, {kWorker0, &w0}}, kWorker0);
  std::vector<std::string> lines;
  absl::Mutex mu;
  master.SetWaitReport(absl::Milliseconds(200), [&](const std::string& line) {
    absl::MutexLock lock(&mu);
    lines.push_back(line);
  });
  ASSERT_OK(master.Create(GraphDef()));
  absl::MutexLock lock(&mu);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("master of /job:worker/replica:0/task:0: still waiting after ", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find(" s for 1 of 2 tasks (giving up after 60 s): /job:ps/replica:0/task:0 "
                          "(connection refused by 127.0.0.1:9)"),
            std::string::npos)
      << lines[0];
}

TEST(MasterStartupTest, ACallersDeadlineEndsTheWaitInTimeToAnswer) {
  Worker ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  LateWorker never(&ps, /*down_for=*/1 << 30);
  Master master(ConfigProto(), {{kPs, &never}, {kWorker0, &w0}}, kWorker0);  // waits 60 s
  master.SetWaitReport(absl::Hours(1), [](const std::string&) {});
  const absl::Time answer_by = absl::Now() + absl::Seconds(1);
  EXPECT_STATUS(master.Create(GraphDef(), answer_by), kUnavailable,
                "(the caller's deadline; the startup timeout is 60000 ms): "
                "/job:ps/replica:0/task:0 (connection refused by 127.0.0.1:9)");
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

// Stands in for a task's address: the worker behind it can be replaced, as
// when the task's process restarts.
class RestartableTask final : public ForwardingWorker {
 public:
  explicit RestartableTask(const std::string& task) : ForwardingWorker(nullptr), task_(task) {
    Restart();
  }
  void Restart() { worker_ = std::make_unique<Worker>(task_, ConfigProto()); }

 private:
  WorkerInterface* target() override { return worker_.get(); }

  const std::string task_;
  std::unique_ptr<Worker> worker_;
};

TEST(MasterRestartTest, RestartedTaskIsAbortedNamingIt) {
  RestartableTask ps(kPs);
  Master master(ConfigProto(), {{kPs, &ps}}, kPs);
  ASSERT_OK(master.Create(Consts({{"c", ""}})));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {"c"}, {}, &out, nullptr));
  ps.Restart();
  EXPECT_STATUS(master.Run(RunOptions(), {}, {"c"}, {}, &out, nullptr), kAborted,
                "task /job:ps/replica:0/task:0 restarted");
}

// A task that froze once `frozen` is set: its steps fail Unavailable, as
// the peer-silence detector fails them, and a GetStatus or DeregisterGraph
// fails at its deadline (which it writes down), as a remote call does.
class FrozenTask final : public ForwardingWorker {
 public:
  explicit FrozenTask(Worker* real) : ForwardingWorker(real) {}
  void RunGraphAsync(const RunGraphArgs& a, RunGraphResult* r, StatusCallback done) override {
    if (!frozen) return ForwardingWorker::RunGraphAsync(a, r, std::move(done));
    done(errors::Unavailable("RunGraph call: nothing heard for 40s (the task may be frozen)"));
  }
  void GetStatusAsync(absl::Time deadline, GetStatusResult* r, StatusCallback done) override {
    if (!frozen) return ForwardingWorker::GetStatusAsync(deadline, r, std::move(done));
    status_deadline = deadline;
    done(errors::DeadlineExceeded("GetStatus: no answer before the deadline"));
  }
  void DeregisterGraphAsync(const std::string& handle, absl::Time deadline,
                            StatusCallback done) override {
    if (!frozen) return ForwardingWorker::DeregisterGraphAsync(handle, deadline, std::move(done));
    deregister_deadline = deadline;
    done(errors::DeadlineExceeded("DeregisterGraph: no answer before the deadline"));
  }
  bool frozen = false;
  absl::Time deregister_deadline = absl::InfinitePast();
  absl::Time status_deadline = absl::InfinitePast();
};

// The restart check after a failure gives a task that does not answer a few
// seconds, not the RPC timeout: a frozen task has already held the step up
// for as long as the silence detector waits.
TEST(MasterRestartTest, AFrozenTaskIsAskedAboutARestartWithAShortDeadline) {
  Worker real_ps(kPs, ConfigProto());
  FrozenTask ps(&real_ps);
  Master master(ConfigProto(), {{kPs, &ps}}, kPs);
  ASSERT_OK(master.Create(Consts({{"c", ""}})));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {"c"}, {}, &out, nullptr));
  ps.frozen = true;
  // The step's own failure is reported, not the check's.
  EXPECT_STATUS(master.Run(RunOptions(), {}, {"c"}, {}, &out, nullptr), kUnavailable,
                "nothing heard for 40s");
  EXPECT_LT(ps.status_deadline, absl::Now() + absl::Seconds(5));
  EXPECT_GT(ps.status_deadline, absl::Now() - absl::Seconds(60));
  ps.frozen = false;  // for ~Master's Close
}

// Close gives a task a few seconds to answer, and says which one did not.
TEST(MasterCloseTest, AFrozenTaskDoesNotHoldUpClose) {
  Worker real_ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  FrozenTask ps(&real_ps);
  Master master(ConfigProto(), {{kPs, &ps}, {kWorker0, &w0}}, kWorker0);
  ASSERT_OK(
      master.Create(Consts({{"on_ps", "/job:ps/task:0"}, {"on_worker", "/job:worker/task:0"}})));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {"on_ps", "on_worker"}, {}, &out, nullptr));
  ps.frozen = true;
  EXPECT_STATUS(master.Close(), kDeadlineExceeded,
                "task /job:ps/replica:0/task:0: DeregisterGraph: no answer before the deadline");
  EXPECT_LT(ps.deregister_deadline, absl::Now() + absl::Seconds(5));
  EXPECT_GT(ps.deregister_deadline, absl::Now() - absl::Seconds(60));
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

TEST(MasterDeviceFiltersTest, FilteredOutTaskIsNeverContacted) {
  Worker ps(kPs, ConfigProto());
  Worker w0(kWorker0, ConfigProto());
  LateWorker never(&w0, /*down_for=*/1 << 30);
  ConfigProto config;
  config.add_device_filters("/job:ps");
  config.set_operation_timeout_in_ms(60000);  // a wait for worker 0 would show as a hang
  Master master(config, {{kPs, &ps}, {kWorker0, &never}}, kWorker0);
  EXPECT_EQ(master.default_task(), kPs);  // worker 0 is filtered out
  absl::StatusOr<std::vector<DeviceInfo>> devices = master.ListDevices();
  ASSERT_OK(devices.status());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "/job:ps/replica:0/task:0/device:CPU:0");
  ASSERT_OK(master.Create(Consts({{"c", ""}})));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {"c"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {5}, TensorShape({}));
}

TEST(MasterDeviceFiltersTest, DeviceLevelFilterKeepsOnlyThatDevice) {
  ConfigProto two_cpus;
  (*two_cpus.mutable_device_count())["CPU"] = 2;
  Worker ps(kPs, two_cpus);
  ConfigProto config;
  config.add_device_filters("/job:ps/task:0/device:CPU:1");
  Master master(config, {{kPs, &ps}}, kPs);
  absl::StatusOr<std::vector<DeviceInfo>> devices = master.ListDevices();
  ASSERT_OK(devices.status());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "/job:ps/replica:0/task:0/device:CPU:1");
}

TEST(MasterDeviceFiltersTest, BadOrUnmatchedFiltersAreInvalidArgument) {
  Worker ps(kPs, ConfigProto());
  ConfigProto malformed;
  malformed.add_device_filters("/job:ps/task:x");
  EXPECT_STATUS(Master(malformed, {{kPs, &ps}}, kPs).Create(GraphDef()), kInvalidArgument,
                "device_filters: device name '/job:ps/task:x' is malformed");
  ConfigProto unmatched;
  unmatched.add_device_filters("/job:chief");
  EXPECT_STATUS(Master(unmatched, {{kPs, &ps}}, kPs).Create(GraphDef()), kInvalidArgument,
                "device_filters [/job:chief] match no task of the cluster "
                "(/job:ps/replica:0/task:0)");
}

TEST_F(MultiTaskTest, ResetClearsVariablesOnEveryTask) {
  {
    Master master(ConfigProto(), map_, kWorker0);
    ASSERT_OK(master.Create(SeedGraph()));
    ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, nullptr, nullptr));
    ASSERT_OK(master.Reset({}));
  }
  Master after(ConfigProto(), map_, kWorker0);
  ASSERT_OK(after.Create(SeedGraph()));
  std::vector<Tensor> out;
  EXPECT_STATUS(after.Run(RunOptions(), {}, {"z1b"}, {}, &out, nullptr), kFailedPrecondition,
                "uninitialized variable");
}

TEST_F(MultiTaskTest, ResetOfAnotherContainerKeepsTheVariables) {
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, nullptr, nullptr));
  ASSERT_OK(master.Reset({"some_other_container"}));
  std::vector<Tensor> out;
  ASSERT_OK(master.Run(RunOptions(), {}, {"z1b"}, {}, &out, nullptr));
  ExpectTensorEqual<float>(out[0], {3, 3, 3, 3}, TensorShape({2, 2}));
}

// One node on worker 0: "never", a _Recv whose _Send never comes, so a
// step fetching it blocks until cancelled, timed out or shut down.
GraphDef NeverRecvGraph() {
  GraphDef g;
  NodeDef* recv = g.add_node();
  recv->set_name("never");
  recv->set_op("_Recv");
  recv->set_device("/job:worker/replica:0/task:0/device:CPU:0");
  SetAttr(recv, "tensor_type", DT_FLOAT);
  SetAttr(recv, "tensor_name", "never_sent");
  SetAttr(recv, "send_device", "/job:worker/replica:0/task:0/device:CPU:0");
  SetAttr(recv, "send_device_incarnation", int64_t{1});
  SetAttr(recv, "recv_device", "/job:worker/replica:0/task:0/device:CPU:0");
  return g;
}

TEST(WorkerShutdownTest, RunningStepFailsAtOnceAndLaterStepsAreRefused) {
  Worker worker(kWorker0, ConfigProto());
  const GraphDef g = NeverRecvGraph();
  RegisterGraphArgs reg;
  reg.graph = g;
  RegisterGraphResult registered;
  ASSERT_OK(worker.RegisterGraph(reg, &registered));
  RunGraphArgs run;
  run.graph_handle = registered.graph_handle;
  run.step_id = 1;
  RunGraphResult result;
  absl::Notification done;
  absl::Status status;
  worker.RunGraphAsync(run, &result, [&](absl::Status s) {
    status = s;
    done.Notify();
  });
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  worker.Shutdown(errors::Aborted("task /job:worker/replica:0/task:0 is shutting down"));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_STATUS(status, kAborted, "is shutting down; its running step was cancelled");
  run.step_id = 2;
  EXPECT_STATUS(worker.RunGraph(run, &result), kAborted,
                "task /job:worker/replica:0/task:0 is "
                "shutting down");
  Tensor t;
  EXPECT_STATUS(
      WaitForCallback([&](StatusCallback d) { worker.RecvTensorAsync(3, "k", &t, std::move(d)); }),
      kAborted, "is shutting down");
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

// A step blocked for good (a _Recv whose _Send never comes, no timeout) ends
// Cancelled once its caller cancels it, and the worker forgets it.
TEST(MasterCancellationTest, StepIsCancelledWhenTheClientGoes) {
  Worker worker(kWorker0, ConfigProto());
  Master master(ConfigProto(), &worker, kWorker0);
  const GraphDef g = NeverRecvGraph();
  ASSERT_OK(master.Create(g));
  CancellationManager cancellation;
  std::thread client_gone([&] {
    absl::SleepFor(absl::Milliseconds(200));
    cancellation.StartCancel();
  });
  std::vector<Tensor> out;
  absl::Status s = master.Run(RunOptions(), {}, {"never"}, {}, &out, nullptr, &cancellation);
  client_gone.join();
  EXPECT_STATUS(s, kCancelled, "its client cancelled the call or went away");
}

TEST(MasterCancellationTest, AStepCancelledBeforeItStartsDoesNotRun) {
  Worker worker(kWorker0, ConfigProto());
  Master master(ConfigProto(), &worker, kWorker0);
  ASSERT_OK(master.Create(NeverRecvGraph()));
  CancellationManager cancellation;
  cancellation.StartCancel();
  std::vector<Tensor> out;
  EXPECT_STATUS(master.Run(RunOptions(), {}, {"never"}, {}, &out, nullptr, &cancellation),
                kCancelled, "cancelled before it started");
}

// The asynchronous forms answer once, from the thread that finishes the
// step, with the same results and errors as the blocking ones.
TEST_F(MultiTaskTest, AsyncStepsAnswerOnceWithTheFetches) {
  Master master(ConfigProto(), map_, kWorker0);
  ASSERT_OK(master.Create(SeedGraph()));
  ASSERT_OK(master.Run(RunOptions(), {}, {}, {"x/Assign", "y/Assign"}, nullptr, nullptr));
  EXPECT_FALSE(master.IsBuilt({}, {"z2b"}, {}));
  std::vector<Tensor> out;
  EXPECT_OK(WaitForCallback([&](StatusCallback done) {
    master.RunAsync(RunOptions(), {}, {"z2b"}, {}, &out, nullptr, nullptr, std::move(done));
  }));
  ExpectTensorEqual<float>(out[0], {7, 7, 7, 7}, TensorShape({2, 2}));
  EXPECT_TRUE(master.IsBuilt({}, {"z2b"}, {}));

  CallableOptions options;
  options.add_fetch("z1b");
  absl::StatusOr<int64_t> handle = master.MakeCallable(options);
  ASSERT_OK(handle.status());
  std::atomic<int> answers{0};
  absl::Notification answered;
  absl::Status status;
  master.RunCallableAsync(*handle, {}, &out, nullptr, nullptr, [&](absl::Status s) {
    status = s;
    if (answers.fetch_add(1) == 0) answered.Notify();
  });
  answered.WaitForNotification();
  ASSERT_OK(status);
  ExpectTensorEqual<float>(out[0], {3, 3, 3, 3}, TensorShape({2, 2}));
  EXPECT_EQ(answers.load(), 1);

  EXPECT_STATUS(WaitForCallback([&](StatusCallback done) {
                  master.RunCallableAsync(*handle + 1, {}, &out, nullptr, nullptr, std::move(done));
                }),
                kInvalidArgument, "no callable with handle");
  EXPECT_STATUS(WaitForCallback([&](StatusCallback done) {
                  master.RunAsync(RunOptions(), {}, {"no_such_node"}, {}, &out, nullptr, nullptr,
                                  std::move(done));
                }),
                kNotFound, "no_such_node");
}

// Forwards to a Worker, but the caller cancels the step just as its
// partition is being launched, before the worker has it.
class CancelOnLaunchWorker final : public ForwardingWorker {
 public:
  CancelOnLaunchWorker(Worker* real, CancellationManager* cancellation)
      : ForwardingWorker(real), cancellation_(cancellation) {}
  void RunGraphAsync(const RunGraphArgs& a, RunGraphResult* r, StatusCallback d) override {
    cancellation_->StartCancel();
    ForwardingWorker::RunGraphAsync(a, r, std::move(d));
  }

 private:
  CancellationManager* cancellation_;
};

TEST(MasterCancellationTest, ACancelWhileThePartitionsLaunchIsNotLost) {
  Worker real(kWorker0, ConfigProto());
  CancellationManager cancellation;
  CancelOnLaunchWorker worker(&real, &cancellation);
  Master master(ConfigProto(), &worker, kWorker0);
  ASSERT_OK(master.Create(NeverRecvGraph()));
  absl::Notification ended;
  absl::Status status;
  std::vector<Tensor> out;
  master.RunAsync(RunOptions(), {}, {"never"}, {}, &out, nullptr, &cancellation,
                  [&](absl::Status s) {
                    status = s;
                    ended.Notify();
                  });
  const bool in_time = ended.WaitForNotificationWithTimeout(absl::Seconds(30));
  EXPECT_TRUE(in_time) << "the cancel was lost: the step still runs";
  if (!in_time) {
    real.Shutdown(errors::Aborted("test"));  // ends the step before `ended` goes
    ended.WaitForNotification();
  }
  EXPECT_STATUS(status, kCancelled, "its client cancelled the call or went away");
}

TEST(MasterCancellationTest, StepPastItsTimeoutIsDeadlineExceeded) {
  Worker worker(kWorker0, ConfigProto());
  Master master(ConfigProto(), &worker, kWorker0);
  const GraphDef g = NeverRecvGraph();
  ASSERT_OK(master.Create(g));
  RunOptions options;
  options.set_timeout_in_ms(100);
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {  // the timer serves one step after another
    EXPECT_STATUS(master.Run(options, {}, {"never"}, {}, &out, nullptr), kDeadlineExceeded,
                  "step did not finish within 100 ms");
  }
}

}  // namespace
}  // namespace tensorgrid
