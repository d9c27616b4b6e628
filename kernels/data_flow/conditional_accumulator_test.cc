// ConditionalAccumulator, the resource and its ResourceAccumulator* kernels:
// stale gradients, mean and sum, waiting takes, the global step, errors; and
// ticketed gradients (SyncReplicasOptimizer's), taken by the tickets listed.
#include "kernels/data_flow/conditional_accumulator.h"

#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr absl::Duration kBound = absl::Seconds(20);
using Reduction = ConditionalAccumulator::Reduction;

Tensor Vec(float a, float b) { return Tensor::FromVector<float>({a, b}, TensorShape({2})); }

std::shared_ptr<ConditionalAccumulator> NewAccumulator(Reduction reduction = Reduction::kMean) {
  return std::make_shared<ConditionalAccumulator>("g", DT_FLOAT, PartialTensorShape({2}),
                                                  reduction);
}

struct Taken {
  absl::Notification done;
  absl::Status status;
  Tensor value;
  bool Wait() { return done.WaitForNotificationWithTimeout(kBound); }
};

void Take(ConditionalAccumulator& acc, int64_t n, CancellationManager* cm, Taken* t) {
  acc.TakeGradient(n, cm, [t](absl::Status s, Tensor v) {
    t->status = s;
    t->value = std::move(v);
    t->done.Notify();
  });
}

TEST(ConditionalAccumulatorTest, TakeAveragesAndStartsOver) {
  auto acc = NewAccumulator();
  ASSERT_OK(acc->ApplyGradient(0, Vec(1, 2)));
  ASSERT_OK(acc->ApplyGradient(0, Vec(3, 6)));
  EXPECT_EQ(acc->num_accumulated(), 2);
  Taken t;
  Take(*acc, 2, nullptr, &t);
  ASSERT_TRUE(t.done.HasBeenNotified());
  ASSERT_OK(t.status);
  ExpectTensorEqual<float>(t.value, {2, 4}, TensorShape({2}));
  EXPECT_EQ(acc->num_accumulated(), 0);
  EXPECT_EQ(acc->global_step(), 1);  // a take moves the global step on
}

TEST(ConditionalAccumulatorTest, SumReductionAndTakingMoreThanRequired) {
  auto acc = NewAccumulator(Reduction::kSum);
  for (int i = 0; i < 3; ++i) ASSERT_OK(acc->ApplyGradient(0, Vec(1, 10)));
  Taken t;
  Take(*acc, 2, nullptr, &t);  // at least 2: takes all 3
  ASSERT_OK(t.status);
  ExpectTensorEqual<float>(t.value, {3, 30}, TensorShape({2}));
}

TEST(ConditionalAccumulatorTest, StaleGradientsAreDropped) {
  auto acc = NewAccumulator();
  acc->SetGlobalStep(5);
  ASSERT_OK(acc->ApplyGradient(4, Vec(100, 100)));  // computed against step 4: dropped
  EXPECT_EQ(acc->num_accumulated(), 0);
  ASSERT_OK(acc->ApplyGradient(5, Vec(1, 1)));
  ASSERT_OK(acc->ApplyGradient(7, Vec(3, 3)));  // newer than the global step: counted
  Taken t;
  Take(*acc, 2, nullptr, &t);
  ASSERT_OK(t.status);
  ExpectTensorEqual<float>(t.value, {2, 2}, TensorShape({2}));
  EXPECT_EQ(acc->global_step(), 6);
  ASSERT_OK(acc->ApplyGradient(5, Vec(1, 1)));  // now stale
  EXPECT_EQ(acc->num_accumulated(), 0);
  acc->SetGlobalStep(0);  // may go back, as in TensorFlow
  ASSERT_OK(acc->ApplyGradient(5, Vec(1, 1)));
  EXPECT_EQ(acc->num_accumulated(), 1);
}

TEST(ConditionalAccumulatorTest, TakeWaitsForNumRequiredGradients) {
  auto acc = NewAccumulator();
  CancellationManager step;
  Taken t;
  Take(*acc, 3, &step, &t);
  ASSERT_OK(acc->ApplyGradient(0, Vec(1, 1)));
  ASSERT_OK(acc->ApplyGradient(0, Vec(2, 2)));
  EXPECT_FALSE(t.done.HasBeenNotified());
  EXPECT_EQ(acc->num_pending_takes(), 1);
  std::thread replica([&] { ASSERT_OK(acc->ApplyGradient(0, Vec(6, 6))); });
  ASSERT_TRUE(t.Wait());
  replica.join();
  ASSERT_OK(t.status);
  ExpectTensorEqual<float>(t.value, {3, 3}, TensorShape({2}));
}

TEST(ConditionalAccumulatorTest, CancelledTakeKeepsTheGradients) {
  auto acc = NewAccumulator();
  ASSERT_OK(acc->ApplyGradient(0, Vec(1, 1)));
  CancellationManager step;
  Taken t;
  Take(*acc, 2, &step, &t);
  step.StartCancel();
  ASSERT_TRUE(t.Wait());
  EXPECT_STATUS(t.status, kCancelled,
                "TakeGradient operation on ConditionalAccumulator 'g' was cancelled");
  EXPECT_EQ(acc->num_pending_takes(), 0);
  EXPECT_EQ(acc->num_accumulated(), 1);
  EXPECT_EQ(acc->global_step(), 0);
  ASSERT_OK(acc->ApplyGradient(0, Vec(3, 3)));
  Taken again;
  Take(*acc, 2, nullptr, &again);
  ASSERT_OK(again.status);
  ExpectTensorEqual<float>(again.value, {2, 2}, TensorShape({2}));
}

TEST(ConditionalAccumulatorTest, Errors) {
  auto acc = NewAccumulator();
  EXPECT_STATUS(acc->ApplyGradient(0, Tensor::FromVector<double>({1, 2}, TensorShape({2}))),
                kInvalidArgument,
                "ConditionalAccumulator 'g' accumulates float gradients, got a double gradient");
  EXPECT_STATUS(acc->ApplyGradient(0, Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))),
                kInvalidArgument,
                "shape mismatch in gradient for ConditionalAccumulator 'g': expected [2], got [3]");
  auto loose = std::make_shared<ConditionalAccumulator>("any", DT_FLOAT, PartialTensorShape({-1}),
                                                        Reduction::kMean);
  ASSERT_OK(loose->ApplyGradient(0, Vec(1, 2)));
  EXPECT_STATUS(loose->ApplyGradient(0, Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))),
                kInvalidArgument, "expected [2] like the gradients accumulated so far, got [3]");
  Taken t;
  Take(*acc, 0, nullptr, &t);
  EXPECT_STATUS(t.status, kInvalidArgument, "num_required must be positive, but was 0");
  EXPECT_STATUS(
      acc->MatchesRequest(DT_FLOAT, PartialTensorShape({2}), Reduction::kSum), kInvalidArgument,
      "shared ConditionalAccumulator 'g' is float [2] MEAN but a float [2] SUM one was requested");
  EXPECT_STATUS(ConditionalAccumulator::ParseReduction("MAX").status(), kInvalidArgument,
                "MEAN or SUM");
}

TEST(ConditionalAccumulatorTest, IntegerMeanDividesExactly) {
  auto acc = std::make_shared<ConditionalAccumulator>("i", DT_INT64, PartialTensorShape({}),
                                                      Reduction::kMean);
  ASSERT_OK(acc->ApplyGradient(0, Tensor::Scalar<int64_t>(4)));
  ASSERT_OK(acc->ApplyGradient(0, Tensor::Scalar<int64_t>(8)));
  Taken t;
  Take(*acc, 2, nullptr, &t);
  ASSERT_OK(t.status);
  EXPECT_EQ(t.value.scalar<int64_t>(), 6);
}

TEST(ConditionalAccumulatorTest, TicketedTakeAveragesExactlyTheListedTickets) {
  auto acc = NewAccumulator();
  acc->SetGlobalStep(2);
  ASSERT_OK(acc->ApplyTicketedGradient(2, /*ticket=*/10, Vec(1, 2)));
  ASSERT_OK(acc->ApplyTicketedGradient(2, 11, Vec(100, 100)));  // admitted, never counted
  ASSERT_OK(acc->ApplyTicketedGradient(2, 12, Vec(3, 6)));
  ASSERT_OK(acc->ApplyTicketedGradient(1, 13, Vec(50, 50)));   // stale: dropped
  ASSERT_OK(acc->ApplyTicketedGradient(-1, -1, Vec(50, 50)));  // not counted: dropped
  EXPECT_EQ(acc->num_accumulated(), 3);
  absl::StatusOr<Tensor> mean = acc->TakeTicketedGradients(2, {10, 12});
  ASSERT_OK(mean.status());
  ExpectTensorEqual<float>(*mean, {2, 4}, TensorShape({2}));
  EXPECT_EQ(acc->global_step(), 3);
  EXPECT_EQ(acc->num_accumulated(), 0);  // ticket 11 went with its step
  EXPECT_STATUS(acc->TakeTicketedGradients(2, {10}).status(), kFailedPrecondition,
                "ConditionalAccumulator 'g': global step 2 was taken already");
}

// A replica killed between its admission and its last apply: its gradient
// reached some accumulators, not all, and its ticket was never committed.
// The take averages the committed tickets and drops the partial one.
TEST(ConditionalAccumulatorTest, TicketedTakeDropsAPartlyDeliveredGradient) {
  auto w = NewAccumulator(), b = NewAccumulator(Reduction::kSum);
  ASSERT_OK(w->ApplyTicketedGradient(0, 1, Vec(1, 1)));
  ASSERT_OK(b->ApplyTicketedGradient(0, 1, Vec(1, 1)));
  ASSERT_OK(w->ApplyTicketedGradient(0, 2, Vec(7, 7)));  // then killed, before b
  ASSERT_OK(w->ApplyTicketedGradient(0, 3, Vec(3, 3)));
  ASSERT_OK(b->ApplyTicketedGradient(0, 3, Vec(3, 3)));
  absl::StatusOr<Tensor> mean = w->TakeTicketedGradients(0, {1, 3});
  absl::StatusOr<Tensor> sum = b->TakeTicketedGradients(0, {1, 3});
  ASSERT_OK(mean.status());
  ASSERT_OK(sum.status());
  ExpectTensorEqual<float>(*mean, {2, 2}, TensorShape({2}));
  ExpectTensorEqual<float>(*sum, {4, 4}, TensorShape({2}));
  EXPECT_EQ(w->num_accumulated(), 0);
}

TEST(ConditionalAccumulatorTest, TicketedErrors) {
  auto acc = NewAccumulator();
  ASSERT_OK(acc->ApplyTicketedGradient(0, 1, Vec(1, 1)));
  EXPECT_STATUS(acc->ApplyTicketedGradient(0, 2, Tensor::FromVector<float>({1}, TensorShape({1}))),
                kInvalidArgument, "expected [2], got [1]");
  EXPECT_STATUS(acc->TakeTicketedGradients(0, {}).status(), kInvalidArgument,
                "a ticketed take needs at least one ticket");
  EXPECT_STATUS(acc->TakeTicketedGradients(0, {1, 1}).status(), kInvalidArgument,
                "ticket 1 is listed twice");
  EXPECT_STATUS(acc->TakeTicketedGradients(0, {1, 5}).status(), kFailedPrecondition,
                "ConditionalAccumulator 'g' holds no gradient of ticket 5 for global step 0");
  EXPECT_STATUS(acc->TakeTicketedGradients(1, {1}).status(), kFailedPrecondition,
                "holds no gradient of ticket 1 for global step 1");
  EXPECT_EQ(acc->global_step(), 0);  // a failed take takes nothing
  EXPECT_EQ(acc->num_accumulated(), 1);
  acc->SetGlobalStep(1);  // drops what is older
  EXPECT_EQ(acc->num_accumulated(), 0);
}

// The kernels, one at a time on a device.
class AccumulatorOpsTest : public OpsTestBase {
 protected:
  Tensor MakeAccumulator(const std::string& shared_name, DataType dtype = DT_FLOAT,
                         const std::string& reduction = "MEAN") {
    EXPECT_OK(MakeOp(NodeDefBuilder("acc", "ResourceConditionalAccumulator")
                         .Attr("dtype", dtype)
                         .Attr("shape", PartialTensorShape({2}))
                         .Attr("shared_name", shared_name)
                         .Attr("reduction_type", reduction)));
    inputs_.clear();
    EXPECT_OK(RunOp());
    return GetOutput(0);
  }
  absl::Status Apply(const Tensor& h, int64_t local_step, Tensor gradient) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("apply", "ResourceAccumulatorApplyGradient")
                                  .Attr("dtype", gradient.dtype())));
    inputs_.clear();
    AddInput(h);
    AddInput(Tensor::Scalar<int64_t>(local_step));
    AddInput(std::move(gradient));
    return RunOp();
  }
  int32_t NumAccumulated(const Tensor& h) {
    EXPECT_OK(MakeOp(NodeDefBuilder("num", "ResourceAccumulatorNumAccumulated")));
    inputs_.clear();
    AddInput(h);
    EXPECT_OK(RunOp());
    return GetOutput(0).scalar<int32_t>();
  }
  absl::Status SetGlobalStep(const Tensor& h, int64_t step) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("set", "ResourceAccumulatorSetGlobalStep")));
    inputs_.clear();
    AddInput(h);
    AddInput(Tensor::Scalar<int64_t>(step));
    return RunOp();
  }
  absl::Status TakeOp(const Tensor& h, int32_t n, DataType dtype = DT_FLOAT) {
    TG_RETURN_IF_ERROR(
        MakeOp(NodeDefBuilder("take", "ResourceAccumulatorTakeGradient").Attr("dtype", dtype)));
    inputs_.clear();
    AddInput(h);
    AddInput(Tensor::Scalar<int32_t>(n));
    return RunOp();
  }
};

TEST_F(AccumulatorOpsTest, ApplySetGlobalStepTake) {
  Tensor h = MakeAccumulator("grad_w");
  EXPECT_EQ(h.scalar<ResourceHandle>().name, "grad_w");
  EXPECT_EQ(h.scalar<ResourceHandle>().type_name, "ConditionalAccumulator");
  ASSERT_OK(SetGlobalStep(h, 3));
  ASSERT_OK(Apply(h, 2, Vec(50, 50)));  // stale
  ASSERT_OK(Apply(h, 3, Vec(1, 2)));
  ASSERT_OK(Apply(h, 3, Vec(3, 4)));
  EXPECT_EQ(NumAccumulated(h), 2);
  ASSERT_OK(TakeOp(h, 2));
  ExpectTensorEqual<float>(GetOutput(0), {2, 3}, TensorShape({2}));
  EXPECT_EQ(NumAccumulated(h), 0);
}

TEST_F(AccumulatorOpsTest, ApplyAndTakeTicketed) {
  Tensor h = MakeAccumulator("grad_t");
  auto apply = [&](int64_t ticket, Tensor gradient) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("apply", "ResourceAccumulatorApplyTicketedGradient")
                                  .Attr("dtype", gradient.dtype())));
    inputs_.clear();
    AddInput(h);
    AddInput(Tensor::Scalar<int64_t>(0));
    AddInput(Tensor::Scalar<int64_t>(ticket));
    AddInput(std::move(gradient));
    return RunOp();
  };
  ASSERT_OK(apply(4, Vec(1, 2)));
  ASSERT_OK(apply(5, Vec(9, 9)));
  ASSERT_OK(apply(6, Vec(3, 4)));
  EXPECT_EQ(NumAccumulated(h), 3);
  ASSERT_OK(MakeOp(
      NodeDefBuilder("take", "ResourceAccumulatorTakeTicketedGradients").Attr("dtype", DT_FLOAT)));
  inputs_.clear();
  AddInput(h);
  AddInput(Tensor::Scalar<int64_t>(0));
  AddInput(Tensor::FromVector<int64_t>({4, 6}, TensorShape({2})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {2, 3}, TensorShape({2}));
  EXPECT_EQ(NumAccumulated(h), 0);
}

TEST_F(AccumulatorOpsTest, KernelErrors) {
  Tensor h = MakeAccumulator("g");
  EXPECT_STATUS(Apply(h, 0, Tensor::FromVector<double>({1, 2}, TensorShape({2}))), kInvalidArgument,
                "accumulates float gradients, got a double gradient");
  EXPECT_STATUS(Apply(h, 0, Tensor::FromVector<float>({1}, TensorShape({1}))), kInvalidArgument,
                "expected [2], got [1]");
  EXPECT_STATUS(TakeOp(h, 1, DT_DOUBLE), kInvalidArgument,
                "ConditionalAccumulator 'g' accumulates float gradients, not double");
  EXPECT_STATUS(TakeOp(h, -1), kInvalidArgument, "num_required must be positive, but was -1");

  EXPECT_OK(MakeOp(NodeDefBuilder("acc2", "ResourceConditionalAccumulator")
                       .Attr("dtype", DT_DOUBLE)
                       .Attr("shape", PartialTensorShape({2}))
                       .Attr("shared_name", "g")));
  inputs_.clear();
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "shared ConditionalAccumulator 'g' is float [2] MEAN but a double [2] MEAN one was "
                "requested");
  EXPECT_STATUS(MakeOp(NodeDefBuilder("acc3", "ResourceConditionalAccumulator")
                           .Attr("dtype", DT_FLOAT)
                           .Attr("shape", PartialTensorShape({2}))
                           .Attr("reduction_type", "MAX")),
                kInvalidArgument, "reduction_type");

  ResourceHandle missing;
  missing.name = "none";
  EXPECT_STATUS(TakeOp(Tensor::Scalar<ResourceHandle>(missing), 1), kNotFound,
                "ConditionalAccumulator 'none' (container '') does not exist");
}

}  // namespace
}  // namespace tensorgrid
