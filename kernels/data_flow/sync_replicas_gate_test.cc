// SyncReplicasGate, the resource and its kernels: the first N commits of a
// step count, stale and surplus ones do not, one per replica on request, an
// admitted replica that never commits holds no place (the race of a worker
// killed between admission and delivery), admissions wait for Open, takes
// wait for a full step, awaits wait for the chief's release, cancellation,
// Close; and the SyncReplicasLocalStep kernels.
#include "kernels/data_flow/sync_replicas_gate.h"

#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr absl::Duration kBound = absl::Seconds(20);
constexpr int64_t kNo = SyncReplicasGate::kNotCounted;
using Admission = SyncReplicasGate::Admission;

template <typename T>
struct Answer {
  absl::Notification done;
  absl::Status status;
  T value{};
  bool Wait() { return done.WaitForNotificationWithTimeout(kBound); }
  std::function<void(absl::Status, T)> Callback() {
    return [this](absl::Status s, T v) {
      status = s;
      value = v;
      done.Notify();
    };
  }
};
using AdmitAnswer = Answer<Admission>;
using TakeAnswer = Answer<int64_t>;

// Admits at once (the gate is open). Tests hold the gate in a shared_ptr: a
// waiting call's cancellation keeps it alive.
Admission Admit(SyncReplicasGate& gate, int64_t replica, int64_t local_step) {
  AdmitAnswer a;
  gate.Admit(replica, local_step, nullptr, a.Callback());
  EXPECT_TRUE(a.done.HasBeenNotified());
  EXPECT_OK(a.status);
  return a.value;
}

// Commits; the step counted for, or kNo.
int64_t Commit(SyncReplicasGate& gate, const Admission& a) { return gate.Commit(a.ticket); }

// Admits and commits at once.
int64_t Send(SyncReplicasGate& gate, int64_t replica, int64_t local_step) {
  const Admission a = Admit(gate, replica, local_step);
  return a.step == kNo ? kNo : Commit(gate, a);
}

// Takes a full step at once; the step completed.
int64_t TakeNow(SyncReplicasGate& gate) {
  TakeAnswer take;
  gate.Take(nullptr, take.Callback());
  EXPECT_TRUE(take.done.HasBeenNotified());
  EXPECT_OK(take.status);
  return take.value;
}

TEST(SyncReplicasGateTest, TheFirstNCommitsOfAStepCountAndTakeCompletesIt) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/false);
  SyncReplicasGate& gate = *shared;
  gate.Open(0);
  const Admission a = Admit(gate, 0, 0), b = Admit(gate, 0, 0), c = Admit(gate, 1, 0);
  EXPECT_EQ(a.step, 0);
  EXPECT_NE(a.ticket, b.ticket);
  EXPECT_EQ(Commit(gate, c), 0);
  EXPECT_EQ(Commit(gate, a), 0);           // whoever sends it: the first two commits count
  EXPECT_EQ(Commit(gate, b), kNo);         // the step is full
  EXPECT_EQ(Admit(gate, 1, 0).step, kNo);  // so is its admission
  EXPECT_EQ(TakeNow(gate), 0);
  EXPECT_EQ(gate.taken().step, 0);
  EXPECT_EQ(gate.taken().tickets, (std::vector<int64_t>{c.ticket, a.ticket}));
  SyncReplicasGate::State state = gate.state();
  EXPECT_EQ(state.step, 1);
  EXPECT_EQ(state.committed, 0);
  EXPECT_EQ(Admit(gate, 1, 0).step, kNo);  // computed against step 0: stale
  EXPECT_EQ(Send(gate, 1, 1), 1);
  EXPECT_EQ(Send(gate, 2, 5), 1);  // newer than the gate: counts for its step
  state = gate.state();
  EXPECT_EQ(state.committed, 2);
  EXPECT_EQ(state.replicas, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(gate.Commit(SyncReplicasGate::kNoTicket), kNo);
}

TEST(SyncReplicasGateTest, OnePerReplicaCountsOneGradientPerReplicaPerStep) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  gate.Open(3);
  const Admission first = Admit(gate, 1, 3), second = Admit(gate, 1, 3);
  EXPECT_EQ(Commit(gate, first), 3);
  EXPECT_EQ(Commit(gate, second), kNo);    // replica 1 again
  EXPECT_EQ(Admit(gate, 1, 3).step, kNo);  // refused at once now
  EXPECT_EQ(gate.state().committed, 1);
  EXPECT_EQ(Send(gate, 0, 3), 3);
  EXPECT_EQ(TakeNow(gate), 3);
  EXPECT_EQ(Send(gate, 1, 4), 4);  // a new step: replica 1 counts again
}

// The race behind a worker killed after its admission, before its
// gradients reached the accumulators: it holds no place in the step.
TEST(SyncReplicasGateTest, AnAdmittedReplicaThatNeverCommitsHoldsNoPlace) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  gate.Open(0);
  const Admission dead = Admit(gate, 1, 0);  // and then killed
  ASSERT_EQ(dead.step, 0);
  EXPECT_EQ(Send(gate, 0, 0), 0);
  TakeAnswer take;
  CancellationManager step;
  gate.Take(&step, take.Callback());
  EXPECT_FALSE(take.done.HasBeenNotified());  // one committed: not full
  SyncReplicasGate::State state = gate.state();
  EXPECT_EQ(state.committed, 1);
  EXPECT_EQ(state.replicas, (std::vector<int64_t>{0}));
  EXPECT_EQ(state.uncommitted_replicas, (std::vector<int64_t>{1}));

  // A backup replica fills the step; the take completes with the delivered two.
  const Admission backup = Admit(gate, 2, 0);
  std::thread replica([&] { EXPECT_EQ(Commit(gate, backup), 0); });
  ASSERT_TRUE(take.Wait());
  replica.join();
  ASSERT_OK(take.status);
  EXPECT_EQ(take.value, 0);
  EXPECT_EQ(gate.taken().tickets.size(), 2u);
  EXPECT_EQ(gate.taken().tickets[1], backup.ticket);
  // The dead replica's ticket is void; its step is over.
  EXPECT_EQ(Commit(gate, dead), kNo);
  EXPECT_TRUE(gate.state().uncommitted_replicas.empty());
}

TEST(SyncReplicasGateTest, AdmissionsWaitForOpenWhichKeepsTheSameStep) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  AdmitAnswer waiting;
  CancellationManager step;
  gate.Admit(0, 7, &step, waiting.Callback());
  EXPECT_FALSE(waiting.done.HasBeenNotified());
  EXPECT_EQ(gate.state().pending_admits, 1);
  std::thread chief([&] { gate.Open(7); });
  ASSERT_TRUE(waiting.Wait());
  chief.join();
  ASSERT_OK(waiting.status);
  EXPECT_EQ(waiting.value.step, 7);
  EXPECT_EQ(Commit(gate, waiting.value), 7);
  const Admission open = Admit(gate, 1, 7);
  gate.Open(7);  // the same step (a chief restarted): what was admitted stays
  EXPECT_EQ(gate.state().committed, 1);
  EXPECT_EQ(Admit(gate, 0, 7).step, kNo);
  EXPECT_EQ(Commit(gate, open), 7);
  EXPECT_EQ(TakeNow(gate), 7);
  gate.Open(9);  // another step starts afresh
  EXPECT_EQ(gate.state().committed, 0);
  EXPECT_EQ(gate.taken().step, kNo);
  EXPECT_EQ(Send(gate, 0, 9), 9);
}

TEST(SyncReplicasGateTest, TakeWaitsForAFullStepAndACancelledTakeTakesNothing) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, false);
  SyncReplicasGate& gate = *shared;
  gate.Open(0);
  CancellationManager step;
  TakeAnswer cancelled;
  gate.Take(&step, cancelled.Callback());
  EXPECT_EQ(Send(gate, 0, 0), 0);
  EXPECT_FALSE(cancelled.done.HasBeenNotified());
  step.StartCancel();
  ASSERT_TRUE(cancelled.Wait());
  EXPECT_STATUS(cancelled.status, kCancelled,
                "Take operation on SyncReplicasGate 'g' was cancelled");
  EXPECT_EQ(gate.state().pending_takes, 0);
  EXPECT_EQ(gate.state().committed, 1);
  EXPECT_EQ(gate.state().step, 0);

  CancellationManager next;
  TakeAnswer take;
  gate.Take(&next, take.Callback());
  std::thread replica([&] { EXPECT_EQ(Send(gate, 1, 0), 0); });
  ASSERT_TRUE(take.Wait());
  replica.join();
  ASSERT_OK(take.status);
  EXPECT_EQ(take.value, 0);
}

TEST(SyncReplicasGateTest, CloseFailsWaitingAndLaterCallsUntilOpen) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, false);
  SyncReplicasGate& gate = *shared;
  AdmitAnswer admit;
  TakeAnswer take;
  gate.Admit(0, 0, nullptr, admit.Callback());
  gate.Take(nullptr, take.Callback());
  gate.Close(errors::DeadlineExceeded("2 of 3 arrived"));
  gate.Close(errors::OutOfRange("ignored: the first reason wins"));
  ASSERT_TRUE(admit.Wait());
  ASSERT_TRUE(take.Wait());
  EXPECT_STATUS(admit.status, kDeadlineExceeded, "2 of 3 arrived");
  EXPECT_STATUS(take.status, kDeadlineExceeded, "2 of 3 arrived");
  AdmitAnswer later;
  gate.Admit(0, 0, nullptr, later.Callback());
  EXPECT_STATUS(later.status, kDeadlineExceeded, "2 of 3 arrived");
  EXPECT_STATUS(gate.state().closed, kDeadlineExceeded, "2 of 3 arrived");
  gate.Open(0);
  EXPECT_EQ(Send(gate, 0, 0), 0);
  // A replica admitted before a close commits after it: not counted, no error.
  const Admission sending = Admit(gate, 1, 0);
  gate.Close(errors::OutOfRange("training is over"));
  EXPECT_EQ(Commit(gate, sending), kNo);
  EXPECT_EQ(gate.state().committed, 1);
}

// One per replica, a replica waits at the gate for the chief's update: each
// await ends once a step after its local step is released, whoever else
// waits, so a fast replica cannot take a slow one's turn (as it could take
// its token).
TEST(SyncReplicasGateTest, AwaitEndsOnceAStepAfterItsLocalStepIsReleased) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  TakeAnswer before_open;
  CancellationManager step;
  gate.Await(-1, &step, before_open.Callback());  // a local step never set
  EXPECT_FALSE(before_open.done.HasBeenNotified());
  gate.Open(5);  // releases 5
  ASSERT_TRUE(before_open.Wait());
  ASSERT_OK(before_open.status);
  EXPECT_EQ(before_open.value, 5);

  TakeAnswer fast, again, slow;
  gate.Await(5, &step, fast.Callback());
  gate.Await(5, &step, again.Callback());  // the same replica, or another
  EXPECT_EQ(gate.state().pending_awaits, 2);
  std::thread chief([&] { gate.Release(6); });
  ASSERT_TRUE(fast.Wait());
  ASSERT_TRUE(again.Wait());
  chief.join();
  EXPECT_EQ(fast.value, 6);
  EXPECT_EQ(again.value, 6);
  EXPECT_EQ(gate.state().released, 6);

  // A replica that reaches its wait after the release does not wait; one
  // computed against an older step learns the newest.
  gate.Release(8);
  gate.Release(7);  // the released step only grows
  gate.Await(5, &step, slow.Callback());
  ASSERT_TRUE(slow.done.HasBeenNotified());
  EXPECT_EQ(slow.value, 8);
  EXPECT_EQ(gate.state().pending_awaits, 0);
}

// The chief took step 4 and failed before applying it; its new session
// reopens the gate at 4 (the global step it reads). The replicas waiting for
// step 5 go on from 4 and send their gradients again: they would otherwise
// wait for a step that needs them.
TEST(SyncReplicasGateTest, OpenEndsEveryAwaitWithItsStep) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  gate.Open(4);
  EXPECT_EQ(Send(gate, 0, 4), 4);
  EXPECT_EQ(Send(gate, 1, 4), 4);
  TakeAnswer a, b;
  gate.Await(4, nullptr, a.Callback());
  gate.Await(4, nullptr, b.Callback());
  EXPECT_EQ(TakeNow(gate), 4);  // ... and the chief fails here, before Release(5)
  EXPECT_FALSE(a.done.HasBeenNotified());
  gate.Open(4);
  ASSERT_TRUE(a.done.HasBeenNotified());
  ASSERT_TRUE(b.done.HasBeenNotified());
  EXPECT_EQ(a.value, 4);
  EXPECT_EQ(b.value, 4);
  EXPECT_EQ(Send(gate, 0, 4), 4);  // step 4 again, from nothing
  EXPECT_EQ(gate.state().committed, 1);
}

// A chief's old aggregation loop closes the gate while its task is frozen;
// the close waits in the frozen task's socket and runs when it resumes,
// after a new chief has reopened the gate. It must not close the new opening.
TEST(SyncReplicasGateTest, ACloseForAnEarlierOpeningIsIgnored) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/false);
  SyncReplicasGate& gate = *shared;
  const int64_t first = gate.Open(400);
  const int64_t second = gate.Open(200);  // the chief restored an older checkpoint
  EXPECT_EQ(second, first + 1);
  EXPECT_FALSE(
      gate.Close(errors::DeadlineExceeded("not known of 2 gradients for step 400"), first));
  EXPECT_OK(gate.state().closed);
  EXPECT_EQ(Send(gate, 1, 200), 200);
  EXPECT_TRUE(gate.Close(errors::OutOfRange("training is over"), second));
  EXPECT_STATUS(gate.state().closed, kOutOfRange, "training is over");
  EXPECT_TRUE(gate.Close(errors::Aborted("any opening"), -1));  // already closed: stays
  EXPECT_STATUS(gate.state().closed, kOutOfRange, "training is over");
}

TEST(SyncReplicasGateTest, AwaitFailsOnCloseAndOnCancellation) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 1, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  gate.Open(0);
  CancellationManager cancelled;
  TakeAnswer a, b;
  gate.Await(0, &cancelled, a.Callback());
  cancelled.StartCancel();
  ASSERT_TRUE(a.Wait());
  EXPECT_STATUS(a.status, kCancelled, "Await operation on SyncReplicasGate 'g' was cancelled");
  gate.Await(0, nullptr, b.Callback());
  gate.Close(errors::DeadlineExceeded("1 of 2 arrived"));
  ASSERT_TRUE(b.Wait());
  EXPECT_STATUS(b.status, kDeadlineExceeded, "1 of 2 arrived");
  EXPECT_EQ(gate.state().pending_awaits, 0);
  // Released or not, a closed gate answers with its reason.
  TakeAnswer later;
  gate.Await(-1, nullptr, later.Callback());
  EXPECT_STATUS(later.status, kDeadlineExceeded, "1 of 2 arrived");
}

TEST(SyncReplicasGateTest, CancelledAdmissionLeavesNothing) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 1, false);
  SyncReplicasGate& gate = *shared;
  CancellationManager step;
  AdmitAnswer admit;
  gate.Admit(0, 0, &step, admit.Callback());
  step.StartCancel();
  ASSERT_TRUE(admit.Wait());
  EXPECT_STATUS(admit.status, kCancelled, "Admit operation on SyncReplicasGate 'g' was cancelled");
  gate.Open(0);
  EXPECT_EQ(gate.state().committed, 0);
  EXPECT_TRUE(gate.state().uncommitted_replicas.empty());
  // Registering with a step already cancelled fails at once.
  TakeAnswer late;
  gate.Take(&step, late.Callback());
  ASSERT_TRUE(late.done.HasBeenNotified());
  EXPECT_STATUS(late.status, kCancelled, "Take operation");
}

// The kernels, one at a time on a device.
class SyncReplicasGateOpsTest : public OpsTestBase {
 protected:
  absl::StatusOr<Tensor> MakeGate(int64_t n, bool one_per_replica) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("gate", "SyncReplicasGate")
                                  .Attr("replicas_to_aggregate", n)
                                  .Attr("one_per_replica", one_per_replica)
                                  .Attr("shared_name", std::string("sync/gate"))));
    inputs_.clear();
    TG_RETURN_IF_ERROR(RunOp());
    return GetOutput(0);
  }
  absl::Status Run(const std::string& op, std::vector<Tensor> inputs) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder(op, op)));
    inputs_.clear();
    for (Tensor& t : inputs) AddInput(std::move(t));
    return RunOp();
  }
};

TEST_F(SyncReplicasGateOpsTest, OpenAdmitCommitTakeTakenReleaseAwaitStateClose) {
  absl::StatusOr<Tensor> h = MakeGate(2, true);
  ASSERT_OK(h.status());
  EXPECT_EQ(h->scalar<ResourceHandle>().name, "sync/gate");
  EXPECT_EQ(h->scalar<ResourceHandle>().type_name, "SyncReplicasGate");
  ASSERT_OK(Run("SyncReplicasGateOpen", {*h, Tensor::Scalar<int64_t>(4)}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 1);  // the first opening
  auto admit = [&](int32_t replica) {
    EXPECT_OK(Run("SyncReplicasGateAdmit",
                  {*h, Tensor::Scalar<int32_t>(replica), Tensor::Scalar<int64_t>(4)}));
    return std::pair<int64_t, int64_t>(GetOutput(0).scalar<int64_t>(),
                                       GetOutput(1).scalar<int64_t>());
  };
  auto commit = [&](int64_t ticket) {
    EXPECT_OK(Run("SyncReplicasGateCommit", {*h, Tensor::Scalar<int64_t>(ticket)}));
    return GetOutput(0).scalar<int64_t>();
  };
  const auto [step1, ticket1] = admit(1);
  EXPECT_EQ(step1, 4);
  const auto [step0, ticket0] = admit(0);
  ASSERT_OK(Run("SyncReplicasGateState", {*h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 4);
  EXPECT_EQ(GetOutput(1).scalar<int32_t>(), 0);
  ExpectTensorEqual<int32_t>(GetOutput(3), {0, 1}, TensorShape({2}));
  EXPECT_EQ(commit(ticket1), 4);
  EXPECT_EQ(admit(1).first, -1);  // one per replica
  ASSERT_OK(Run("SyncReplicasGateState", {*h}));
  EXPECT_EQ(GetOutput(1).scalar<int32_t>(), 1);
  ExpectTensorEqual<int32_t>(GetOutput(2), {1}, TensorShape({1}));
  ExpectTensorEqual<int32_t>(GetOutput(3), {0}, TensorShape({1}));
  EXPECT_EQ(commit(ticket0), 4);
  ASSERT_OK(Run("SyncReplicasGateTake", {*h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 4);
  ASSERT_OK(Run("SyncReplicasGateTaken", {*h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 4);
  ExpectTensorEqual<int64_t>(GetOutput(1), {ticket1, ticket0}, TensorShape({2}));
  ASSERT_OK(Run("SyncReplicasGateRelease", {*h, Tensor::Scalar<int64_t>(5)}));
  ASSERT_OK(Run("SyncReplicasGateAwait", {*h, Tensor::Scalar<int64_t>(4)}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 5);
  ASSERT_OK(Run("SyncReplicasGateState", {*h}));
  EXPECT_EQ(GetOutput(4).scalar<int32_t>(), 0);  // nothing awaits

  // A close for another opening changes nothing; one for this opening closes.
  ASSERT_OK(Run("SyncReplicasGateClose",
                {*h, Tensor::Scalar<int32_t>(4), Tensor::Scalar<std::string>("stale"),
                 Tensor::Scalar<int64_t>(7)}));
  EXPECT_FALSE(GetOutput(0).scalar<bool>());
  ASSERT_OK(Run("SyncReplicasGateClose",
                {*h, Tensor::Scalar<int32_t>(11), Tensor::Scalar<std::string>("training is over"),
                 Tensor::Scalar<int64_t>(1)}));
  EXPECT_TRUE(GetOutput(0).scalar<bool>());
  EXPECT_STATUS(Run("SyncReplicasGateTake", {*h}), kOutOfRange, "training is over");
  EXPECT_STATUS(Run("SyncReplicasGateAwait", {*h, Tensor::Scalar<int64_t>(4)}), kOutOfRange,
                "training is over");
  EXPECT_EQ(commit(ticket0), -1);  // a closed gate counts nothing
  EXPECT_STATUS(Run("SyncReplicasGateClose",
                    {*h, Tensor::Scalar<int32_t>(0), Tensor::Scalar<std::string>("ok?"),
                     Tensor::Scalar<int64_t>(-1)}),
                kInvalidArgument, "needs an error code from 1 to 16, got 0");
}

TEST_F(SyncReplicasGateOpsTest, LocalStepReadsMinusOneUntilSet) {
  ASSERT_OK(MakeOp(NodeDefBuilder("local_step", "SyncReplicasLocalStep")));
  ASSERT_OK(RunOp());
  const Tensor h = GetOutput(0);
  EXPECT_EQ(h.scalar<ResourceHandle>().name, "local_step");
  ASSERT_OK(Run("SyncReplicasLocalStepRead", {h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), -1);
  ASSERT_OK(Run("SyncReplicasLocalStepAssign", {h, Tensor::Scalar<int64_t>(12)}));
  ASSERT_OK(Run("SyncReplicasLocalStepRead", {h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 12);
  EXPECT_STATUS(Run("SyncReplicasLocalStepAssign", {h, Tensor::Scalar<int32_t>(1)}),
                kInvalidArgument, "step must be a int64 scalar");
}

TEST_F(SyncReplicasGateOpsTest, Errors) {
  ASSERT_OK(MakeGate(2, false).status());
  EXPECT_STATUS(MakeGate(3, false).status(), kInvalidArgument,
                "shared SyncReplicasGate 'sync/gate' aggregates 2 but one aggregating 3 was "
                "requested");
  EXPECT_STATUS(MakeGate(0, false).status(), kInvalidArgument, "replicas_to_aggregate");
  ResourceHandle missing;
  missing.name = "nope";
  EXPECT_STATUS(Run("SyncReplicasGateState", {Tensor::Scalar<ResourceHandle>(missing)}), kNotFound,
                "SyncReplicasGate 'nope' (container '') does not exist");
}

}  // namespace
}  // namespace tensorgrid
