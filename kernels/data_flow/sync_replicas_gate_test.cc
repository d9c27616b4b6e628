// SyncReplicasGate, the resource and its kernels: the first N admissions of a
// step count, stale and surplus ones do not, one per replica on request,
// admissions wait for Open, takes wait for a full step, cancellation, Close;
// and the SyncReplicasLocalStep kernels.
#include "kernels/data_flow/sync_replicas_gate.h"

#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr absl::Duration kBound = absl::Seconds(20);
constexpr int64_t kNo = SyncReplicasGate::kNotCounted;

struct Answer {
  absl::Notification done;
  absl::Status status;
  int64_t step = -100;
  bool Wait() { return done.WaitForNotificationWithTimeout(kBound); }
  SyncReplicasGate::StepCallback Callback() {
    return [this](absl::Status s, int64_t step) {
      status = s;
      this->step = step;
      done.Notify();
    };
  }
};

// Admits at once (the gate is open); the answer's step. Tests hold the gate
// in a shared_ptr: a waiting call's cancellation keeps it alive.
int64_t Admit(SyncReplicasGate& gate, int64_t replica, int64_t local_step) {
  Answer a;
  gate.Admit(replica, local_step, nullptr, a.Callback());
  EXPECT_TRUE(a.done.HasBeenNotified());
  EXPECT_OK(a.status);
  return a.step;
}

TEST(SyncReplicasGateTest, TheFirstNOfAStepCountAndTakeCompletesIt) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/false);
  SyncReplicasGate& gate = *shared;
  gate.Open(0);
  EXPECT_EQ(Admit(gate, 0, 0), 0);
  EXPECT_EQ(Admit(gate, 0, 0), 0);    // whoever sends it: replica 0 twice
  EXPECT_EQ(Admit(gate, 1, 0), kNo);  // the step is full
  Answer take;
  gate.Take(nullptr, take.Callback());
  ASSERT_TRUE(take.done.HasBeenNotified());
  ASSERT_OK(take.status);
  EXPECT_EQ(take.step, 0);
  SyncReplicasGate::State state = gate.state();
  EXPECT_EQ(state.step, 1);
  EXPECT_EQ(state.admitted, 0);
  EXPECT_EQ(Admit(gate, 1, 0), kNo);  // computed against step 0: stale
  EXPECT_EQ(Admit(gate, 1, 1), 1);
  EXPECT_EQ(Admit(gate, 2, 5), 1);  // newer than the gate: counts for its step
  state = gate.state();
  EXPECT_EQ(state.admitted, 2);
  EXPECT_EQ(state.replicas, (std::vector<int64_t>{1, 2}));
}

TEST(SyncReplicasGateTest, OnePerReplicaCountsOneGradientPerReplicaPerStep) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  gate.Open(3);
  EXPECT_EQ(Admit(gate, 1, 3), 3);
  EXPECT_EQ(Admit(gate, 1, 3), kNo);  // replica 1 again
  EXPECT_EQ(gate.state().admitted, 1);
  EXPECT_EQ(Admit(gate, 0, 3), 3);
  Answer take;
  gate.Take(nullptr, take.Callback());
  ASSERT_OK(take.status);
  EXPECT_EQ(take.step, 3);
  EXPECT_EQ(Admit(gate, 1, 4), 4);  // a new step: replica 1 counts again
}

TEST(SyncReplicasGateTest, AdmissionsWaitForOpenWhichKeepsTheSameStep) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, /*one_per_replica=*/true);
  SyncReplicasGate& gate = *shared;
  Answer waiting;
  CancellationManager step;
  gate.Admit(0, 7, &step, waiting.Callback());
  EXPECT_FALSE(waiting.done.HasBeenNotified());
  EXPECT_EQ(gate.state().pending_admits, 1);
  std::thread chief([&] { gate.Open(7); });
  ASSERT_TRUE(waiting.Wait());
  chief.join();
  ASSERT_OK(waiting.status);
  EXPECT_EQ(waiting.step, 7);
  gate.Open(7);  // the same step (a chief restarted): the admission stays
  EXPECT_EQ(gate.state().admitted, 1);
  EXPECT_EQ(Admit(gate, 0, 7), kNo);
  gate.Open(9);  // another step starts afresh
  EXPECT_EQ(gate.state().admitted, 0);
  EXPECT_EQ(Admit(gate, 0, 9), 9);
}

TEST(SyncReplicasGateTest, TakeWaitsForAFullStepAndACancelledTakeTakesNothing) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, false);
  SyncReplicasGate& gate = *shared;
  gate.Open(0);
  CancellationManager step;
  Answer cancelled;
  gate.Take(&step, cancelled.Callback());
  EXPECT_EQ(Admit(gate, 0, 0), 0);
  EXPECT_FALSE(cancelled.done.HasBeenNotified());
  step.StartCancel();
  ASSERT_TRUE(cancelled.Wait());
  EXPECT_STATUS(cancelled.status, kCancelled,
                "Take operation on SyncReplicasGate 'g' was cancelled");
  EXPECT_EQ(gate.state().pending_takes, 0);
  EXPECT_EQ(gate.state().admitted, 1);
  EXPECT_EQ(gate.state().step, 0);

  CancellationManager next;
  Answer take;
  gate.Take(&next, take.Callback());
  std::thread replica([&] { EXPECT_EQ(Admit(gate, 1, 0), 0); });
  ASSERT_TRUE(take.Wait());
  replica.join();
  ASSERT_OK(take.status);
  EXPECT_EQ(take.step, 0);
}

TEST(SyncReplicasGateTest, CloseFailsWaitingAndLaterCallsUntilOpen) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 2, false);
  SyncReplicasGate& gate = *shared;
  Answer admit, take;
  gate.Admit(0, 0, nullptr, admit.Callback());
  gate.Take(nullptr, take.Callback());
  gate.Close(errors::DeadlineExceeded("2 of 3 arrived"));
  gate.Close(errors::OutOfRange("ignored: the first reason wins"));
  ASSERT_TRUE(admit.Wait());
  ASSERT_TRUE(take.Wait());
  EXPECT_STATUS(admit.status, kDeadlineExceeded, "2 of 3 arrived");
  EXPECT_STATUS(take.status, kDeadlineExceeded, "2 of 3 arrived");
  Answer later;
  gate.Admit(0, 0, nullptr, later.Callback());
  EXPECT_STATUS(later.status, kDeadlineExceeded, "2 of 3 arrived");
  EXPECT_STATUS(gate.state().closed, kDeadlineExceeded, "2 of 3 arrived");
  gate.Open(0);
  EXPECT_EQ(Admit(gate, 0, 0), 0);
}

TEST(SyncReplicasGateTest, CancelledAdmissionLeavesNothing) {
  auto shared = std::make_shared<SyncReplicasGate>("g", 1, false);
  SyncReplicasGate& gate = *shared;
  CancellationManager step;
  Answer admit;
  gate.Admit(0, 0, &step, admit.Callback());
  step.StartCancel();
  ASSERT_TRUE(admit.Wait());
  EXPECT_STATUS(admit.status, kCancelled, "Admit operation on SyncReplicasGate 'g' was cancelled");
  gate.Open(0);
  EXPECT_EQ(gate.state().admitted, 0);
  // Registering with a step already cancelled fails at once.
  Answer late;
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

TEST_F(SyncReplicasGateOpsTest, OpenAdmitTakeStateClose) {
  absl::StatusOr<Tensor> h = MakeGate(2, true);
  ASSERT_OK(h.status());
  EXPECT_EQ(h->scalar<ResourceHandle>().name, "sync/gate");
  EXPECT_EQ(h->scalar<ResourceHandle>().type_name, "SyncReplicasGate");
  ASSERT_OK(Run("SyncReplicasGateOpen", {*h, Tensor::Scalar<int64_t>(4)}));
  ASSERT_OK(
      Run("SyncReplicasGateAdmit", {*h, Tensor::Scalar<int32_t>(1), Tensor::Scalar<int64_t>(4)}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 4);
  ASSERT_OK(
      Run("SyncReplicasGateAdmit", {*h, Tensor::Scalar<int32_t>(1), Tensor::Scalar<int64_t>(4)}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), -1);
  ASSERT_OK(Run("SyncReplicasGateState", {*h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 4);
  EXPECT_EQ(GetOutput(1).scalar<int32_t>(), 1);
  ExpectTensorEqual<int32_t>(GetOutput(2), {1}, TensorShape({1}));
  ASSERT_OK(
      Run("SyncReplicasGateAdmit", {*h, Tensor::Scalar<int32_t>(0), Tensor::Scalar<int64_t>(4)}));
  ASSERT_OK(Run("SyncReplicasGateTake", {*h}));
  EXPECT_EQ(GetOutput(0).scalar<int64_t>(), 4);

  ASSERT_OK(Run("SyncReplicasGateClose", {*h, Tensor::Scalar<int32_t>(11),
                                          Tensor::Scalar<std::string>("training is over")}));
  EXPECT_STATUS(Run("SyncReplicasGateTake", {*h}), kOutOfRange, "training is over");
  EXPECT_STATUS(Run("SyncReplicasGateClose",
                    {*h, Tensor::Scalar<int32_t>(0), Tensor::Scalar<std::string>("ok?")}),
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
