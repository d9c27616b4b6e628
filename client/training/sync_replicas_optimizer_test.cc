// SyncReplicasOptimizer on real tasks: a ps and up to three worker Servers in
// this process on 127.0.0.1 free ports; each replica builds its own graph, as
// separate worker processes would, and runs it on its own task.
//
//   /job:ps/task:0                    /job:worker/task:i (replica i)
//   global_step, w, w/grad_accum, ◄──── loss_i = ½·|w − t_i|²
//   gate, token queue                    grad_i = w − t_i
//
// Plain gradient descent with learning rate ½ on these losses is hand
// computable: a step that averages the gradients of replicas S moves w to
// ½·w + ½·mean(t_i, i ∈ S). A worker killed after its admission at the gate
// is played by running the gate's Admit alone, one stalled after its commit
// by running the gate's ops up to the commit (GateProbe). Waits are bounded
// (step and aggregation timeouts); nothing asserts a duration.
#include "client/training/sync_replicas_optimizer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client_session.h"
#include "client/node_builder.h"
#include "client/ops/data_flow_ops.h"
#include "client/ops/standard_ops.h"
#include "client/training/device_setter.h"
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

constexpr int64_t kStepTimeoutMs = 60000;  // bounds every step of every session here

// One ps task and `workers` worker tasks.
class Cluster {
 public:
  explicit Cluster(int workers) {
    // Fresh addresses when a port was taken before its server bound it.
    EXPECT_OK(WithFreeLoopbackAddresses(1 + workers, [&](const std::vector<std::string>& a) {
      StopAll();
      std::string spec = absl::StrCat("ps=", a[0], ";worker=");
      for (int i = 0; i < workers; ++i) absl::StrAppend(&spec, i > 0 ? "," : "", a[1 + i]);
      TG_ASSIGN_OR_RETURN(spec_, ClusterSpec::FromFlag(spec));
      for (int task = 0; task <= workers; ++task) {
        TG_ASSIGN_OR_RETURN(
            std::unique_ptr<Server> server,
            task == 0 ? TryStartServer(spec_, "ps", 0) : TryStartServer(spec_, "worker", task - 1));
        servers_.push_back(std::move(server));
      }
      return absl::OkStatus();
    }));
  }
  ~Cluster() { StopAll(); }
  bool ok() const {
    for (const auto& s : servers_) {
      if (s == nullptr) return false;
    }
    return !servers_.empty();
  }
  std::string target(int worker) const { return servers_[1 + worker]->target(); }
  // A new ps on the same port: what the old one held is gone.
  bool RestartPs() {
    servers_[0]->Stop();
    servers_[0] = StartServer(spec_, "ps", 0);
    return servers_[0] != nullptr;
  }

 private:
  void StopAll() {
    for (auto& s : servers_) {
      if (s != nullptr) s->Stop();
    }
    servers_.clear();
  }

  ClusterSpec spec_;
  std::vector<std::unique_ptr<Server>> servers_;
};

ConfigProto Config() {
  ConfigProto config;
  config.set_operation_timeout_in_ms(kStepTimeoutMs);
  return config;
}

// Replica i's target: t_i = (1 + 2i, 2 + 4i).
std::vector<float> TargetOf(int i) { return {1.f + 2 * i, 2.f + 4 * i}; }

// One replica's graph: the variables on the ps, its loss on its own task.
struct Replica {
  Replica(int index, int replicas_to_aggregate, int total_num_replicas,
          const SyncReplicasOptimizer::Attrs& attrs = SyncReplicasOptimizer::Attrs()) {
    const Scope ps = root.WithDevice("/job:ps/task:0");
    step = GetOrCreateGlobalStep(ps);
    w = Variable(ps, "w", {2}, DT_FLOAT, Zeros());
    const Scope here = root.WithDevice(absl::StrCat("/job:worker/task:", index));
    const std::vector<float> t = TargetOf(index);
    auto diff = ops::Sub(here, w, ops::Const(here, {t[0], t[1]}, TensorShape({2})));
    loss = ops::Mul(here, 0.5f, ops::Sum(here, ops::Square(here, diff), {0}));
    sgd = std::make_unique<GradientDescentOptimizer>(0.5);
    sync = std::make_unique<SyncReplicasOptimizer>(sgd.get(), replicas_to_aggregate,
                                                   total_num_replicas, attrs);
    auto built = sync->Minimize(root, loss, {w}, step);
    EXPECT_OK(built.status());
    if (built.ok()) train = *built;
    // Shares the accumulator of w, to see gradients arrive.
    auto acc = ops::ConditionalAccumulator(
        root.WithDevice("/job:ps/task:0").ColocateWith(w.op()).WithOpName("probe/accumulator"),
        DT_FLOAT, PartialTensorShape({2}), ops::ConditionalAccumulator::SharedName("w/grad_accum"));
    accumulated = ops::AccumulatorNumAccumulated(root.WithOpName("probe/accumulated"), acc);
  }

  Scope root = Scope::NewRootScope();
  Variable step, w;
  Output loss, accumulated;
  std::unique_ptr<GradientDescentOptimizer> sgd;
  std::unique_ptr<SyncReplicasOptimizer> sync;
  Operation train;
};

// The global step and w, read through `session`.
std::pair<int64_t, std::vector<float>> Values(const ClientSession& session, const Replica& r) {
  std::vector<Tensor> out;
  EXPECT_OK(session.Run({r.step.value(), r.w.value()}, &out));
  if (out.size() != 2) return {-1, {}};
  return {out[0].scalar<int64_t>(), {out[1].data<float>()[0], out[1].data<float>()[1]}};
}

// Polls until `done` (bounded); false if it never became true.
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

// Gradients in w's accumulator now.
int32_t Accumulated(const ClientSession& session, const Replica& r) {
  std::vector<Tensor> out;
  absl::Status s = session.Run({r.accumulated}, &out);
  return s.ok() ? out[0].scalar<int32_t>() : -1;
}

SyncReplicasHookOptions HookOptions(const std::string& master, absl::Duration timeout) {
  SyncReplicasHookOptions options;
  options.master = master;
  options.config = Config();
  options.aggregation_timeout = timeout;
  return options;
}

MonitoredTrainingSessionOptions SessionOptionsFor(const std::string& master, bool is_chief) {
  MonitoredTrainingSessionOptions options;
  options.master = master;
  options.config = Config();
  options.is_chief = is_chief;
  options.log_step_count_steps = 0;
  options.wait_for_chief_timeout = absl::Seconds(60);
  options.wait_for_chief_poll_interval = absl::Milliseconds(20);
  options.max_recoveries = 0;
  return options;
}

// What one replica's training loop ended with.
struct Outcome {
  absl::Status status;  // the first failing call, else OK
  int runs = 0;
};

// Trains `r` under a MonitoredTrainingSession with the sync hook and
// StopAtStepHook::AtStep(last_step), for at most `max_runs` steps, then closes.
Outcome Train(Replica& r, const std::string& master, bool is_chief, int64_t last_step,
              int max_runs = 1000) {
  MonitoredTrainingSessionOptions options = SessionOptionsFor(master, is_chief);
  options.hooks = {r.sync->MakeSessionRunHook(is_chief, HookOptions(master, absl::Seconds(60))),
                   StopAtStepHook::AtStep(last_step)};
  Outcome outcome;
  auto session = MonitoredTrainingSession::Create(r.root, options);
  if (!session.ok()) {
    outcome.status = session.status();
    return outcome;
  }
  while (!(*session)->should_stop() && outcome.runs < max_runs) {
    outcome.status = (*session)->Run({}, {}, {r.train}, nullptr);
    if (!outcome.status.ok()) break;
    ++outcome.runs;
  }
  absl::Status closed = (*session)->Close();
  if (outcome.status.ok()) outcome.status = closed;
  return outcome;
}

// The chief's hook driven by hand, as a MonitoredTrainingSession drives it:
// Begin, the variables initialized, AfterCreateSession, a BeforeRun (which
// starts the loop); End from Finish.
class ManualChief {
 public:
  ManualChief(Replica& r, const std::string& target, const SyncReplicasHookOptions& options)
      : session_(r.root, target), hook_(r.sync->MakeSessionRunHook(true, options)) {
    EXPECT_OK(hook_->Begin(r.root));
    EXPECT_OK(session_.Run({}, {}, {GlobalVariablesInitializer(r.root)}, nullptr));
    Start();
  }
  // What a MonitoredTrainingSession does with a new session (after a
  // recoverable failure): the hook stops its loop, reopens the gate and
  // starts a new loop.
  void Start() {
    EXPECT_OK(hook_->AfterCreateSession(session_));
    SessionRunArgs original, args;
    SessionRunContext context(original, &session_);
    EXPECT_OK(hook_->BeforeRun(context, &args));
  }
  absl::Status Finish() { return hook_->End(session_); }
  ClientSession& session() { return session_; }

 private:
  ClientSession session_;
  std::shared_ptr<SessionRunHook> hook_;
};

// A worker's session with its local step set.
std::unique_ptr<ClientSession> WorkerSession(Replica& r, const std::string& target) {
  auto session = std::make_unique<ClientSession>(r.root, target);
  EXPECT_OK(session->Run({}, {}, {r.sync->local_step_init_op()}, nullptr));
  return session;
}

// The gate's own ops, run alone on a worker's task: what a worker killed or
// stalled in the middle of its step leaves, and what the gate sees.
class GateProbe {
 public:
  GateProbe(const std::string& target, int replicas_to_aggregate, bool one_per_replica)
      : session_(root_, target) {
    gate_ = Output(NodeBuilder(ps_.WithOpName("gate"), "SyncReplicasGate")
                       .Attr("replicas_to_aggregate", static_cast<int64_t>(replicas_to_aggregate))
                       .Attr("one_per_replica", one_per_replica)
                       .Attr("shared_name", std::string("sync_replicas/gate"))
                       .Finalize(),
                   0);
    awaiting_ = Output(
        NodeBuilder(ps_.WithOpName("state"), "SyncReplicasGateState").Input(gate_).Finalize(), 4);
    bounded_.set_timeout_in_ms(kStepTimeoutMs);
  }

  // Replica `replica` admitted for `local_step`, no gradient sent (a worker
  // killed right after its admission); the admitted step.
  int64_t AdmitAndDie(int replica, int64_t local_step) {
    const Operation admit = Admit(replica, local_step);
    return RunForStep(Output(admit, 0));
  }

  // Replica `replica`'s gradient of w against `local_step` delivered and
  // committed, and no wait for the chief's update yet (a worker stalled
  // between its commit and its wait); the step it counted for, or -1.
  int64_t CommitAndStall(int replica, int64_t local_step, const std::vector<float>& gradient) {
    const Operation admit = Admit(replica, local_step);
    const Output acc = ops::ConditionalAccumulator(
        ps_.WithOpName("accumulator"), DT_FLOAT, PartialTensorShape({2}),
        ops::ConditionalAccumulator::SharedName("w/grad_accum"));
    const Operation apply =
        NodeBuilder(ps_.WithOpName("apply"), "ResourceAccumulatorApplyTicketedGradient")
            .Input(acc)
            .Input(Output(admit, 0))
            .Input(Output(admit, 1))
            .Input(ops::Const(ps_, {gradient[0], gradient[1]}, TensorShape({2})))
            .Finalize();
    const Operation commit = NodeBuilder(ps_.WithControlDependencies({apply}).WithOpName("commit"),
                                         "SyncReplicasGateCommit")
                                 .Input(gate_)
                                 .Input(Output(admit, 1))
                                 .Finalize();
    return RunForStep(Output(commit, 0));
  }

  // Closes the gate with Aborted("stale") if it is still at opening
  // `epoch`, as the chief's hook does; whether it closed it.
  bool Close(int64_t epoch) {
    const Operation close = NodeBuilder(ps_.WithOpName("close"), "SyncReplicasGateClose")
                                .Input(gate_)
                                .Input(static_cast<int32_t>(absl::StatusCode::kAborted))
                                .Input(std::string("stale"))
                                .Input(epoch)
                                .Finalize();
    std::vector<Tensor> out;
    EXPECT_OK(root_.status());
    EXPECT_OK(session_.Run(bounded_, {}, {Output(close, 0)}, {}, &out, nullptr));
    return out.size() == 1 && out[0].scalar<bool>();
  }

  // Workers waiting at the gate for the chief's update.
  int32_t Awaiting() {
    std::vector<Tensor> out;
    EXPECT_OK(session_.Run(bounded_, {}, {awaiting_}, {}, &out, nullptr));
    return out.size() == 1 ? out[0].scalar<int32_t>() : -1;
  }

 private:
  Operation Admit(int replica, int64_t local_step) {
    return NodeBuilder(ps_.WithOpName("admit"), "SyncReplicasGateAdmit")
        .Input(gate_)
        .Input(static_cast<int32_t>(replica))
        .Input(local_step)
        .Finalize();
  }
  int64_t RunForStep(const Output& step) {
    std::vector<Tensor> out;
    EXPECT_OK(root_.status());
    EXPECT_OK(session_.Run(bounded_, {}, {step}, {}, &out, nullptr));
    return out.size() == 1 ? out[0].scalar<int64_t>() : -100;
  }

  Scope root_ = Scope::NewRootScope();
  Scope ps_ = root_.WithDevice("/job:ps/task:0");
  ClientSession session_;
  Output gate_, awaiting_;
  RunOptions bounded_;
};

// A thread joined when it goes out of scope, also after a failed ASSERT
// (its step then ends with the chief's Finish or the step timeout).
struct Joined {
  explicit Joined(std::function<void()> f) : thread(std::move(f)) {}
  ~Joined() { thread.join(); }
  std::thread thread;
};

void ExpectW(const std::vector<float>& w, float w0, float w1) {
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0], w0, 1e-5);
  EXPECT_NEAR(w[1], w1, 1e-5);
}

TEST(SyncReplicasOptimizerTest, TwoWorkersAverageTheirGradientsEveryStep) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  Replica chief(0, 2, 2), worker(1, 2, 2);
  constexpr int kSteps = 5;
  Outcome worker_outcome;
  std::thread worker_thread(
      [&] { worker_outcome = Train(worker, cluster.target(1), false, kSteps); });
  const Outcome chief_outcome = Train(chief, cluster.target(0), true, kSteps);
  worker_thread.join();
  ASSERT_OK(chief_outcome.status);
  ASSERT_OK(worker_outcome.status);
  // Every step took two gradients, each from a run of its own. Which
  // replicas sent them is a race, as in TensorFlow: the chief may send both
  // of a step while the worker still waits for the chief's initialization
  // (two tokens let it; the worker's late gradient is then stale and
  // dropped). TheFirstGradientsOfAStepCountWhoeverSentThem and
  // OneGradientPerWorkerCountsEachWorkerOnce pin the counting down.
  EXPECT_GE(chief_outcome.runs + worker_outcome.runs, 2 * kSteps);
  EXPECT_GE(chief_outcome.runs, 1);
  EXPECT_GE(worker_outcome.runs, 1);

  ClientSession check(chief.root, cluster.target(0));
  const auto [step, w] = Values(check, chief);
  EXPECT_EQ(step, kSteps);
  // w_k = ½·w_{k-1} + ½·m_k from 0, where m_k, the mean of the step's two
  // targets, is t0 = (1, 2), (t0 + t1)/2 = (2, 4) or t1 = (3, 6): between
  // t0·(1 − 2^-5) and t1·(1 − 2^-5), and (2, 4)·(1 − 2^-5) when every step
  // had one of each.
  ASSERT_EQ(w.size(), 2u);
  EXPECT_GE(w[0], 1.f * 31 / 32 - 1e-5);
  EXPECT_LE(w[0], 3.f * 31 / 32 + 1e-5);
  EXPECT_NEAR(w[1], 2 * w[0], 1e-5);  // every target has t[1] = 2·t[0]
}

TEST(SyncReplicasOptimizerTest, StaleGradientsAreDropped) {
  Cluster cluster(3);
  ASSERT_TRUE(cluster.ok());
  Replica r0(0, 2, 3), r1(1, 2, 3), r2(2, 2, 3);
  // The loop shares the chief's session here (master "").
  ManualChief chief(r0, cluster.target(0), HookOptions("", absl::Seconds(60)));
  auto s1 = WorkerSession(r1, cluster.target(1));
  auto s2 = WorkerSession(r2, cluster.target(2));  // its local step: 0

  // Step 0 from replicas 0 and 1.
  absl::Status st0, st1;
  std::thread a([&] { st0 = chief.session().Run({}, {}, {r0.train}, nullptr); });
  std::thread b([&] { st1 = s1->Run({}, {}, {r1.train}, nullptr); });
  a.join();
  b.join();
  ASSERT_OK(st0);
  ASSERT_OK(st1);
  auto [step, w] = Values(chief.session(), r0);
  EXPECT_EQ(step, 1);
  ExpectW(w, 1, 2);  // ½·mean(t0, t1)

  // Replica 2 computes against step 0, now stale: dropped. It takes the
  // third token of step 0 and moves its local step on.
  ASSERT_OK(s2->Run({}, {}, {r2.train}, nullptr));
  EXPECT_EQ(Accumulated(chief.session(), r0), 0);
  std::tie(step, w) = Values(chief.session(), r0);
  EXPECT_EQ(step, 1);
  ExpectW(w, 1, 2);

  // Step 1 from replicas 2 and 0: w = ½·(1, 2) + ½·mean(t0, t2) = (2, 4).
  std::thread c([&] { st0 = chief.session().Run({}, {}, {r0.train}, nullptr); });
  ASSERT_OK(s2->Run({}, {}, {r2.train}, nullptr));
  c.join();
  ASSERT_OK(st0);
  std::tie(step, w) = Values(chief.session(), r0);
  EXPECT_EQ(step, 2);
  ExpectW(w, 2, 4);
  EXPECT_OK(chief.Finish());
}

TEST(SyncReplicasOptimizerTest, BackupWorkerLetsTrainingGoOnWhenOneStops) {
  Cluster cluster(3);
  ASSERT_TRUE(cluster.ok());
  Replica r0(0, 2, 3), r1(1, 2, 3), r2(2, 2, 3);
  constexpr int kSteps = 6;
  Outcome o1, o2;
  std::thread t1([&] { o1 = Train(r1, cluster.target(1), false, kSteps); });
  // Replica 2 takes two steps and leaves.
  std::thread t2([&] { o2 = Train(r2, cluster.target(2), false, kSteps, /*max_runs=*/2); });
  const Outcome o0 = Train(r0, cluster.target(0), true, kSteps);
  t1.join();
  t2.join();
  ASSERT_OK(o0.status);
  // A replica still in a step when the chief had made its last one ends
  // with the chief's "no more steps" (as TensorFlow's closed token queue
  // ends it, with OutOfRange): replica 2 when it was so slow that the others
  // finished first, replica 1 when it lagged a step behind.
  for (const Outcome* o : {&o1, &o2}) {
    if (!o->status.ok()) EXPECT_STATUS(o->status, kOutOfRange, "stopped aggregating gradients");
  }
  EXPECT_GE(o1.runs, 1);
  ClientSession check(r0.root, cluster.target(0));
  EXPECT_EQ(Values(check, r0).first, kSteps);
}

// The race of a worker killed (kill -9) after its admission at the gate,
// before its gradients reached the accumulators: it holds no place in the
// step, so a backup worker fills it and the chief does not wait.
TEST(SyncReplicasOptimizerTest, AWorkerKilledAfterItsAdmissionLeavesItsPlaceToABackup) {
  Cluster cluster(3);
  ASSERT_TRUE(cluster.ok());
  auto attrs = [](int i) { return SyncReplicasOptimizer::WorkerIndex(i); };
  Replica r0(0, 2, 3, attrs(0)), r2(2, 2, 3, attrs(2));
  ManualChief chief(r0, cluster.target(0), HookOptions(cluster.target(0), absl::Seconds(60)));
  ASSERT_EQ(GateProbe(cluster.target(1), 2, false).AdmitAndDie(/*replica=*/1, /*local_step=*/0), 0);
  auto s2 = WorkerSession(r2, cluster.target(2));

  // Replicas 0 and 2 make step 0: w = ½·mean(t0, t2) = (1.5, 3).
  absl::Status st0, st2;
  std::thread a([&] { st0 = chief.session().Run({}, {}, {r0.train}, nullptr); });
  std::thread b([&] { st2 = s2->Run({}, {}, {r2.train}, nullptr); });
  a.join();
  b.join();
  ASSERT_OK(st0);
  ASSERT_OK(st2);
  const auto [step, w] = Values(chief.session(), r0);
  EXPECT_EQ(step, 1);
  ExpectW(w, 1.5, 3);
  EXPECT_OK(chief.Finish());
}

// The same race without a backup: the chief fails within its timeout,
// naming the worker that was admitted but delivered nothing.
TEST(SyncReplicasOptimizerTest, AWorkerKilledAfterItsAdmissionIsNamedWithoutABackup) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  Replica r0(0, 2, 2, SyncReplicasOptimizer::WorkerIndex(0));
  ManualChief chief(r0, cluster.target(0), HookOptions(cluster.target(0), absl::Seconds(1)));
  ASSERT_EQ(GateProbe(cluster.target(1), 2, false).AdmitAndDie(/*replica=*/1, /*local_step=*/0), 0);

  // The chief's own gradient counts; the loop then fails and wakes it.
  RunOptions bounded;
  bounded.set_timeout_in_ms(kStepTimeoutMs);
  EXPECT_OK(chief.session().Run(bounded, {}, {}, {r0.train}, nullptr, nullptr));
  EXPECT_STATUS(chief.Finish(), kDeadlineExceeded,
                "gradients from some workers are missing: 1 of 2 gradients for global step 0 "
                "arrived within 1s (aggregation_timeout); from workers [0], none from [1]; "
                "total_num_replicas 2. Worker 1 sent no gradient for global step 0 within 1s "
                "(aggregation_timeout): it was admitted at the gate, but its gradient never "
                "reached every accumulator. A worker may have died or stalled");
  EXPECT_EQ(Values(chief.session(), r0).first, 0);
}

// Replica 1 sends two gradients against step 0 (two initial tokens let it)
// before replica 0 sends one: the first two count.
TEST(SyncReplicasOptimizerTest, TheFirstGradientsOfAStepCountWhoeverSentThem) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  Replica r0(0, 2, 2), r1(1, 2, 2);
  SyncReplicasHookOptions options = HookOptions(cluster.target(0), absl::Seconds(60));
  options.num_tokens = 2;
  ManualChief chief(r0, cluster.target(0), options);
  auto s1 = WorkerSession(r1, cluster.target(1));
  ASSERT_OK(s1->Run({}, {}, {r1.train}, nullptr));
  ASSERT_OK(s1->Run({}, {}, {r1.train}, nullptr));
  // Not counted, replica 0's step ends with a token of step 0's aggregation.
  ASSERT_OK(chief.session().Run({}, {}, {r0.train}, nullptr));
  const auto [step, w] = Values(chief.session(), r0);
  EXPECT_EQ(step, 1);
  ExpectW(w, 1.5, 3);  // ½·t1: replica 1's two gradients; replica 0's came too late
  EXPECT_OK(chief.Finish());
}

// Strict mode: worker 1 sends a gradient against step 0, then again (as it
// would after a restart, with the same index) before worker 0 sends one.
// Each waits at the gate, not for a token.
TEST(SyncReplicasOptimizerTest, OneGradientPerWorkerCountsEachWorkerOnce) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  auto strict = [](int i) {
    return SyncReplicasOptimizer::OneGradientPerWorker(true).WorkerIndex(i);
  };
  Replica r0(0, 2, 2, strict(0)), r1(1, 2, 2, strict(1)), restarted(1, 2, 2, strict(1));
  ManualChief chief(r0, cluster.target(0), HookOptions(cluster.target(0), absl::Seconds(60)));
  GateProbe probe(cluster.target(0), 2, true);
  auto s1 = WorkerSession(r1, cluster.target(1));
  absl::Status first, second, counted;
  auto s1_again = WorkerSession(restarted, cluster.target(1));
  {
    Joined a([&] { first = s1->Run({}, {}, {r1.train}, nullptr); });
    EXPECT_TRUE(Eventually([&] { return probe.Awaiting() == 1; }));
    Joined b([&] { second = s1_again->Run({}, {}, {restarted.train}, nullptr); });
    EXPECT_TRUE(Eventually([&] { return probe.Awaiting() == 2; }));
    EXPECT_EQ(Accumulated(chief.session(), r0), 1);  // the second was not counted
    // Worker 0's gradient completes the step; the chief's update releases all three.
    counted = chief.session().Run({}, {}, {r0.train}, nullptr);
  }
  ASSERT_OK(first);
  ASSERT_OK(second);
  ASSERT_OK(counted);
  const auto [step, w] = Values(chief.session(), r0);
  EXPECT_EQ(step, 1);
  ExpectW(w, 1, 2);  // ½·mean(t0, t1)
  EXPECT_OK(chief.Finish());
}

// Strict mode, the race that starved a worker when it waited for a token:
// worker 1 committed its gradient of step 0 and was slow to start its wait;
// meanwhile the chief's update came, and the chief, fast, sent its gradient
// of step 1. With tokens, the chief took worker 1's token and ended its step
// at once; worker 1 then waited for a token no one would put in. At the gate
// each waits for a step after its own: the chief's step ends only once step
// 1 is applied, and worker 1 carries on from step 1.
TEST(SyncReplicasOptimizerTest, OneGradientPerWorkerNeverLetsAFastWorkerTakeASlowOnesTurn) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  auto strict = [](int i) {
    return SyncReplicasOptimizer::OneGradientPerWorker(true).WorkerIndex(i);
  };
  Replica r0(0, 2, 2, strict(0)), r1(1, 2, 2, strict(1));
  ManualChief chief(r0, cluster.target(0), HookOptions(cluster.target(0), absl::Seconds(60)));
  auto s1 = WorkerSession(r1, cluster.target(1));
  GateProbe stalled(cluster.target(1), 2, true);
  const std::vector<float> t1 = TargetOf(1);
  ASSERT_EQ(stalled.CommitAndStall(/*replica=*/1, /*local_step=*/0, {-t1[0], -t1[1]}), 0);

  ASSERT_OK(chief.session().Run({}, {}, {r0.train}, nullptr));  // step 0 is full and applied
  ExpectW(Values(chief.session(), r0).second, 1, 2);            // ½·mean(t0, t1)
  absl::Status fast, slow_wait, slow_step;
  int64_t step_when_fast_ended = -1;
  {
    Joined chief_step([&] {
      fast = chief.session().Run({}, {}, {r0.train}, nullptr);  // its gradient of step 1
      step_when_fast_ended = Values(chief.session(), r0).first;
    });
    // Worker 1 reaches its wait late: its step 0 is applied, so it goes on
    // from step 1 (its stale gradient dropped), and sends step 1's second
    // gradient. (Waiting for a token it would wait out the step timeout.)
    RunOptions bounded;
    bounded.set_timeout_in_ms(kStepTimeoutMs);
    slow_wait = s1->Run(bounded, {}, {}, {r1.train}, nullptr, nullptr);
    if (slow_wait.ok()) slow_step = s1->Run(bounded, {}, {}, {r1.train}, nullptr, nullptr);
    if (!slow_wait.ok() || !slow_step.ok()) EXPECT_OK(chief.Finish());  // ends the chief's wait
  }
  ASSERT_OK(slow_wait);
  ASSERT_OK(slow_step);
  ASSERT_OK(fast);
  EXPECT_EQ(step_when_fast_ended, 2);  // not before step 1 was applied
  const auto [step, w] = Values(chief.session(), r0);
  EXPECT_EQ(step, 2);
  ExpectW(w, 1.5, 3);  // ½·(1, 2) + ½·mean(t0, t1)
  EXPECT_OK(chief.Finish());
}

// The ps froze while the chief's loop was closing the gate; the chief
// recreated its session meanwhile and reopened the gate. The old close,
// which waited in the ps's socket, runs when the ps resumes: it must not
// close the new opening (a tester saw workers fail with the old loop's
// reason, and the chief then blame a live worker).
TEST(SyncReplicasOptimizerTest, ALateCloseFromTheChiefsOldLoopLeavesTheGateOpen) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  Replica r0(0, 2, 2), r1(1, 2, 2);
  ManualChief chief(r0, cluster.target(0), HookOptions(cluster.target(0), absl::Seconds(60)));
  chief.Start();  // the new session: epoch 2
  GateProbe ps(cluster.target(0), 2, false);
  EXPECT_FALSE(ps.Close(/*epoch=*/1));
  auto s1 = WorkerSession(r1, cluster.target(1));
  absl::Status st0, st1;
  {
    Joined a([&] { st0 = chief.session().Run({}, {}, {r0.train}, nullptr); });
    st1 = s1->Run({}, {}, {r1.train}, nullptr);
  }
  ASSERT_OK(st0);
  ASSERT_OK(st1);
  // (Reopening a gate puts a token in for each worker that may wait from
  // before, so a step may end before its update: wait for the update.)
  ASSERT_TRUE(Eventually([&] { return Values(chief.session(), r0).first == 1; }));
  ExpectW(Values(chief.session(), r0).second, 1, 2);  // ½·mean(t0, t1)
  EXPECT_OK(chief.Finish());  // its own close, at epoch 2, closes the gate
  EXPECT_STATUS(s1->Run({}, {}, {r1.train}, nullptr), kOutOfRange,
                "the chief has stopped aggregating gradients");
}

TEST(SyncReplicasOptimizerTest, AMissingWorkerFailsTheChiefWithinTheTimeout) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  // Three replicas, all needed; replica 2 never comes.
  auto attrs = [](int i) { return SyncReplicasOptimizer::WorkerIndex(i); };
  Replica r0(0, 3, 3, attrs(0)), r1(1, 3, 3, attrs(1));
  MonitoredTrainingSessionOptions chief_options = SessionOptionsFor(cluster.target(0), true);
  chief_options.hooks = {
      r0.sync->MakeSessionRunHook(true, HookOptions(cluster.target(0), absl::Seconds(1)))};
  auto chief = MonitoredTrainingSession::Create(r0.root, chief_options);
  ASSERT_OK(chief.status());
  MonitoredTrainingSessionOptions worker_options = SessionOptionsFor(cluster.target(1), false);
  worker_options.hooks = {
      r1.sync->MakeSessionRunHook(false, HookOptions(cluster.target(1), absl::Seconds(1)))};
  auto worker = MonitoredTrainingSession::Create(r1.root, worker_options);
  ASSERT_OK(worker.status());

  // Replica 1's gradient is in; it waits for a token.
  absl::Status first;
  std::thread waiting([&] { first = (*worker)->Run({}, {}, {r1.train}, nullptr); });
  ClientSession probe(r0.root, cluster.target(0));
  ASSERT_TRUE(Eventually([&] { return Accumulated(probe, r0) == 1; }));

  // The chief's first step starts its aggregation loop (the chief sends no
  // gradient here); within the timeout the chief fails, naming what is missing.
  const char* kMissing =
      "gradients from some workers are missing: 1 of 3 gradients for global step 0 arrived "
      "within 1s (aggregation_timeout); from workers [1], none from [0, 2]; total_num_replicas 3. "
      "Worker 0 sent no gradient for global step 0 within 1s (aggregation_timeout). Worker 2 "
      "sent no gradient for global step 0 within 1s (aggregation_timeout). A worker may have "
      "died or stalled";
  absl::Status failed;
  ASSERT_TRUE(Eventually([&] {
    failed = (*chief)->Run({}, {r0.step.value()}, {}, nullptr);
    return !failed.ok();
  }));
  EXPECT_STATUS(failed, kDeadlineExceeded, kMissing);
  EXPECT_STATUS((*chief)->Close(), kDeadlineExceeded, kMissing);

  // The waiting worker got a token; its next step fails with the same reason.
  waiting.join();
  EXPECT_OK(first);
  EXPECT_STATUS((*worker)->Run({}, {}, {r1.train}, nullptr), kDeadlineExceeded, kMissing);
  EXPECT_OK((*worker)->Close());
}

TEST(SyncReplicasOptimizerTest, EndStopsTheLoopAndReleasesWaitingWorkers) {
  Cluster cluster(2);
  ASSERT_TRUE(cluster.ok());
  Replica r0(0, 2, 2), r1(1, 2, 2);
  ManualChief chief(r0, cluster.target(0), HookOptions(cluster.target(0), absl::Seconds(60)));
  auto s1 = WorkerSession(r1, cluster.target(1));
  absl::Status first;
  std::thread waiting([&] { first = s1->Run({}, {}, {r1.train}, nullptr); });
  ASSERT_TRUE(Eventually([&] { return Accumulated(chief.session(), r0) == 1; }));
  // The loop waits for a second gradient that never comes; End ends it.
  ASSERT_OK(chief.Finish());
  waiting.join();
  EXPECT_OK(first);  // released by a last token
  EXPECT_STATUS(s1->Run({}, {}, {r1.train}, nullptr), kOutOfRange,
                "the chief has stopped aggregating gradients");
  EXPECT_EQ(Values(chief.session(), r0).first, 0);
}

TEST(SyncReplicasOptimizerTest, TheChiefRecoversFromAPsRestart) {
  Cluster cluster(1);
  ASSERT_TRUE(cluster.ok());
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/sync_replicas_recovery");
  Replica r0(0, 1, 1);
  MonitoredTrainingSessionOptions options = SessionOptionsFor(cluster.target(0), true);
  options.checkpoint_dir = dir;
  options.save_checkpoint_steps = 1;
  options.max_recoveries = 3;
  options.recovery_backoff = absl::Milliseconds(50);
  options.hooks = {
      r0.sync->MakeSessionRunHook(true, HookOptions(cluster.target(0), absl::Seconds(60)))};
  auto session = MonitoredTrainingSession::Create(r0.root, options);
  ASSERT_OK(session.status());
  for (int i = 0; i < 3; ++i) ASSERT_OK((*session)->Run({}, {}, {r0.train}, nullptr));

  // The gate, the queue and the accumulators go with the ps. The step fails,
  // the session is recreated from model.ckpt-3, the hook starts over, and
  // the step runs again.
  ASSERT_TRUE(cluster.RestartPs());
  ASSERT_OK((*session)->Run({}, {}, {r0.train}, nullptr));
  EXPECT_GE((*session)->recoveries(), 1);
  EXPECT_EQ((*session)->restored_checkpoint(), dir + "/model.ckpt-3");
  for (int i = 0; i < 2; ++i) ASSERT_OK((*session)->Run({}, {}, {r0.train}, nullptr));
  ASSERT_OK((*session)->Close());
  ClientSession check(r0.root, cluster.target(0));
  const auto [step, w] = Values(check, r0);
  EXPECT_EQ(step, 6);
  ExpectW(w, 1.f * 63 / 64, 2.f * 63 / 64);  // t0·(1 − 2^-6): nothing lost, nothing twice
}

TEST(SyncReplicasOptimizerTest, PlacesAccumulatorsWithVariablesAndTheLocalStepOnTheWorker) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = 2;
  setter.worker_device = "/job:worker/task:1";
  const Scope scope = root.WithDeviceFunction(ReplicaDeviceSetter(setter));
  Variable step = GetOrCreateGlobalStep(scope);    // ps task 0
  Variable w(scope, "w", {2}, DT_FLOAT, Zeros());  // ps task 1
  auto loss = ops::Sum(scope, ops::Square(scope, w), {0});
  GradientDescentOptimizer sgd(0.1);
  SyncReplicasOptimizer sync(&sgd, 2);
  ASSERT_OK(sync.Minimize(scope, loss, {w}, step).status());
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  std::map<std::string, NodeDef> nodes;
  for (const NodeDef& n : graph.node()) nodes[n.name()] = n;
  auto attr = [&](const std::string& node, const std::string& name) {
    const auto& attrs = nodes[node].attr();
    auto it = attrs.find(name);
    return it == attrs.end() ? std::string() : it->second.DebugString();
  };
  ASSERT_TRUE(nodes.count("sync_replicas/w/grad_accum"));
  EXPECT_NE(attr("sync_replicas/w/grad_accum", "_class").find("loc:@w"), std::string::npos);
  EXPECT_NE(attr("sync_replicas/w/grad_accum", "shared_name").find("w/grad_accum"),
            std::string::npos);
  EXPECT_NE(attr("sync_replicas/token_queue", "_class").find("loc:@global_step"),
            std::string::npos);
  EXPECT_NE(attr("sync_replicas/gate", "_class").find("loc:@global_step"), std::string::npos);
  EXPECT_NE(attr("sync_replicas/local_step", "_class").find("loc:@sync_replicas/local_step_anchor"),
            std::string::npos);
  EXPECT_EQ(nodes["sync_replicas/local_step_anchor"].device(), "/job:worker/task:1");
  EXPECT_EQ(nodes["sync_replicas/local_step"].device(), "/job:worker/task:1");
  // Steps without the variables still find the accumulators on the ps.
  EXPECT_EQ(nodes["sync_replicas/w/grad_accum"].device(), nodes["w"].device());
  EXPECT_EQ(nodes["sync_replicas/gate"].device(), nodes["global_step"].device());
  EXPECT_NE(nodes["w"].device(), nodes["global_step"].device());
  // The local step is not a variable: neither `init` nor a Saver sees it.
  EXPECT_EQ(nodes["sync_replicas/local_step"].op(), "SyncReplicasLocalStep");
  for (const Variable& v : GlobalVariables(root)) EXPECT_NE(v.name(), "sync_replicas/local_step");
}

TEST(SyncReplicasOptimizerTest, Errors) {
  auto build = [](int n, int total, const SyncReplicasOptimizer::Attrs& attrs) {
    Scope root = Scope::NewRootScope();
    Variable step = GetOrCreateGlobalStep(root);
    Variable w(root, "w", {2}, DT_FLOAT, Zeros());
    GradientDescentOptimizer sgd(0.1);
    SyncReplicasOptimizer sync(&sgd, n, total, attrs);
    return sync.Minimize(root, ops::Sum(root, ops::Square(root, w), {0}), {w}, step).status();
  };
  using S = SyncReplicasOptimizer;
  EXPECT_STATUS(build(0, 2, S::Attrs()), kInvalidArgument, "must be at least 1");
  EXPECT_STATUS(build(2, 2, S::WorkerIndex(2)), kInvalidArgument, "WorkerIndex 2 is not in [0, 2)");
  EXPECT_STATUS(build(2, 2, S::OneGradientPerWorker(true)), kInvalidArgument,
                "OneGradientPerWorker needs this worker's WorkerIndex");
  EXPECT_STATUS(build(3, 2, S::OneGradientPerWorker(true).WorkerIndex(0)), kInvalidArgument,
                "replicas_to_aggregate (3) cannot exceed total_num_replicas (2)");

  Scope root = Scope::NewRootScope();
  Variable step = GetOrCreateGlobalStep(root);
  Variable w(root, "w", {2}, DT_FLOAT, Zeros());
  GradientDescentOptimizer sgd(0.1);
  SyncReplicasOptimizer sync(&sgd, 3, 2);
  auto hook = sync.MakeSessionRunHook(true);
  EXPECT_STATUS(hook->Begin(root), kFailedPrecondition, "ApplyGradients (or Minimize) must build");
  EXPECT_STATUS(sync.GetInitTokensOp().status(), kFailedPrecondition, "needs ApplyGradients first");
  auto loss = ops::Sum(root, ops::Square(root, w), {0});
  EXPECT_STATUS(sync.Minimize(root, loss, {w}, Variable()).status(), kInvalidArgument,
                "needs the global step");
  ASSERT_OK(sync.Minimize(root, loss, {w}, step).status());
  EXPECT_STATUS(sync.Minimize(root, loss, {w}, step).status(), kFailedPrecondition,
                "ApplyGradients may be called only once");
  // 3 to aggregate from 2 replicas: one worker sends two per step, which
  // needs a token to start with.
  EXPECT_STATUS(sync.GetInitTokensOp(0).status(), kInvalidArgument,
                "num_tokens 0 is too few: 3 replicas_to_aggregate from 2 total_num_replicas "
                "need at least 1");
  EXPECT_OK(sync.GetInitTokensOp().status());
  EXPECT_OK(hook->Begin(root));

  // Strict mode has no tokens.
  Scope strict_root = Scope::NewRootScope();
  Variable strict_step = GetOrCreateGlobalStep(strict_root);
  Variable v(strict_root, "v", {2}, DT_FLOAT, Zeros());
  SyncReplicasOptimizer strict(&sgd, 2, 2, S::OneGradientPerWorker(true).WorkerIndex(0));
  ASSERT_OK(strict
                .Minimize(strict_root, ops::Sum(strict_root, ops::Square(strict_root, v), {0}), {v},
                          strict_step)
                .status());
  EXPECT_STATUS(strict.GetInitTokensOp(2).status(), kInvalidArgument,
                "num_tokens 2 with OneGradientPerWorker: a worker waits at the gate");
  EXPECT_OK(strict.GetInitTokensOp(0).status());
  EXPECT_OK(strict.GetInitTokensOp().status());
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
