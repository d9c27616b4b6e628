// FIFOQueue, the resource: order, batches, capacity, close, cancellation and
// concurrent use. Waits are bounded; nothing here asserts a duration.
#include "kernels/data_flow/fifo_queue.h"

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr absl::Duration kBound = absl::Seconds(20);

Tensor F(float v) { return Tensor::Scalar<float>(v); }

// What one enqueue or dequeue reported, once it has.
struct Result {
  absl::Notification done;
  absl::Status status;
  std::vector<FIFOQueue::Tuple> elements;
  bool Wait() { return done.WaitForNotificationWithTimeout(kBound); }
};

std::shared_ptr<FIFOQueue> NewQueue(int64_t capacity, std::vector<PartialTensorShape> shapes = {}) {
  return std::make_shared<FIFOQueue>("q", std::vector<DataType>{DT_FLOAT}, std::move(shapes),
                                     capacity);
}

void Enqueue(FIFOQueue& q, float v, CancellationManager* cm, Result* r) {
  q.TryEnqueue({F(v)}, cm, [r](absl::Status s) {
    r->status = s;
    r->done.Notify();
  });
}

void Dequeue(FIFOQueue& q, int64_t n, CancellationManager* cm, Result* r) {
  q.TryDequeue(n, cm, [r](absl::Status s, std::vector<FIFOQueue::Tuple> got) {
    r->status = s;
    r->elements = std::move(got);
    r->done.Notify();
  });
}

// Enqueues v and expects it to finish at once.
void Put(FIFOQueue& q, float v) {
  Result r;
  Enqueue(q, v, nullptr, &r);
  ASSERT_TRUE(r.done.HasBeenNotified());
  ASSERT_OK(r.status);
}

// Dequeues n and expects them at once; returns the values.
std::vector<float> Take(FIFOQueue& q, int64_t n) {
  Result r;
  Dequeue(q, n, nullptr, &r);
  EXPECT_TRUE(r.done.HasBeenNotified());
  EXPECT_OK(r.status);
  std::vector<float> values;
  for (const auto& e : r.elements) values.push_back(e[0].scalar<float>());
  return values;
}

// Polls `condition` for up to kBound.
template <typename F>
bool Eventually(F condition) {
  const absl::Time deadline = absl::Now() + kBound;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(FIFOQueueTest, ElementsComeOutInOrder) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  for (float v : {1.f, 2.f, 3.f}) Put(*q, v);
  EXPECT_EQ(q->size(), 3);
  EXPECT_EQ(Take(*q, 1), std::vector<float>{1});
  EXPECT_EQ(Take(*q, 2), (std::vector<float>{2, 3}));
  EXPECT_EQ(q->size(), 0);
}

TEST(FIFOQueueTest, EnqueueManyAddsRowsThatShareTheBatch) {
  auto q = NewQueue(FIFOQueue::kUnbounded, {PartialTensorShape({2})});
  Tensor batch = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  ASSERT_OK(q->ValidateManyTuple({batch}));
  Result r;
  q->TryEnqueueMany({batch}, nullptr, [&](absl::Status s) {
    r.status = s;
    r.done.Notify();
  });
  ASSERT_OK(r.status);
  EXPECT_EQ(q->size(), 3);
  Result got;
  Dequeue(*q, 2, nullptr, &got);
  ASSERT_OK(got.status);
  ASSERT_EQ(got.elements.size(), 2u);
  ExpectTensorEqual<float>(got.elements[0][0], {1, 2}, TensorShape({2}));
  ExpectTensorEqual<float>(got.elements[1][0], {3, 4}, TensorShape({2}));
  EXPECT_TRUE(got.elements[1][0].SharesBufferWith(batch));
}

TEST(FIFOQueueTest, FullQueueBlocksEnqueueUntilADequeue) {
  auto q = NewQueue(2);
  Put(*q, 1);
  Put(*q, 2);
  CancellationManager cm;
  Result blocked;
  Enqueue(*q, 3, &cm, &blocked);
  EXPECT_FALSE(blocked.done.HasBeenNotified());
  EXPECT_EQ(q->num_pending_enqueues(), 1);
  EXPECT_EQ(Take(*q, 1), std::vector<float>{1});  // makes room
  ASSERT_TRUE(blocked.Wait());
  EXPECT_OK(blocked.status);
  EXPECT_EQ(Take(*q, 2), (std::vector<float>{2, 3}));
}

TEST(FIFOQueueTest, EmptyQueueBlocksDequeueUntilAnEnqueueFromAnotherThread) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  CancellationManager cm;
  Result got;
  Dequeue(*q, 1, &cm, &got);
  EXPECT_FALSE(got.done.HasBeenNotified());
  std::thread producer([&] { Put(*q, 7); });
  ASSERT_TRUE(got.Wait());
  producer.join();
  ASSERT_OK(got.status);
  EXPECT_EQ(got.elements[0][0].scalar<float>(), 7);
}

TEST(FIFOQueueTest, DequeueManyMayAskForMoreThanTheCapacity) {
  auto q = NewQueue(1);
  Result got;
  CancellationManager cm;
  Dequeue(*q, 3, &cm, &got);
  std::thread producer([&] {
    for (float v : {1.f, 2.f, 3.f}) {
      Result r;
      Enqueue(*q, v, &cm, &r);
      ASSERT_TRUE(r.Wait());
    }
  });
  ASSERT_TRUE(got.Wait());
  producer.join();
  ASSERT_OK(got.status);
  ASSERT_EQ(got.elements.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got.elements[i][0].scalar<float>(), i + 1);
}

TEST(FIFOQueueTest, ClosedQueueDrainsThenFailsOutOfRange) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  Put(*q, 1);
  q->Close(/*cancel_pending_enqueues=*/false);
  EXPECT_TRUE(q->is_closed());
  Result late;
  Enqueue(*q, 2, nullptr, &late);
  EXPECT_STATUS(late.status, kCancelled, "FIFOQueue 'q' is closed");

  Result too_many;
  Dequeue(*q, 2, nullptr, &too_many);
  EXPECT_STATUS(
      too_many.status, kOutOfRange,
      "FIFOQueue 'q' is closed and has insufficient elements (requested 2, current size 1)");
  EXPECT_EQ(Take(*q, 1), std::vector<float>{1});
  Result dry;
  Dequeue(*q, 1, nullptr, &dry);
  EXPECT_STATUS(
      dry.status, kOutOfRange,
      "FIFOQueue 'q' is closed and has insufficient elements (requested 1, current size 0)");
  q->Close(false);  // twice is fine
}

TEST(FIFOQueueTest, CloseWakesWaitingDequeuesAndGivesBackPartialOnes) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  CancellationManager cm;
  Result many, one;
  Dequeue(*q, 3, &cm, &many);
  Dequeue(*q, 1, &cm, &one);
  Put(*q, 1);  // collected by the dequeue of 3
  EXPECT_EQ(q->size(), 0);
  q->Close(false);
  ASSERT_TRUE(many.Wait());
  ASSERT_TRUE(one.Wait());
  EXPECT_STATUS(many.status, kOutOfRange, "requested 3, current size 1");
  ASSERT_OK(one.status);  // the element the failed dequeue gave back
  EXPECT_EQ(one.elements[0][0].scalar<float>(), 1);
}

TEST(FIFOQueueTest, CloseLetsPendingEnqueuesFinishUnlessCancelled) {
  auto q = NewQueue(1);
  Put(*q, 1);
  CancellationManager cm;
  Result pending;
  Enqueue(*q, 2, &cm, &pending);
  q->Close(/*cancel_pending_enqueues=*/false);
  EXPECT_FALSE(pending.done.HasBeenNotified());
  EXPECT_EQ(Take(*q, 1), std::vector<float>{1});
  ASSERT_TRUE(pending.Wait());
  EXPECT_OK(pending.status);
  EXPECT_EQ(Take(*q, 1), std::vector<float>{2});

  auto r = NewQueue(1);
  Put(*r, 1);
  Result cancelled;
  Enqueue(*r, 2, &cm, &cancelled);
  r->Close(/*cancel_pending_enqueues=*/true);
  ASSERT_TRUE(cancelled.Wait());
  EXPECT_STATUS(cancelled.status, kCancelled, "FIFOQueue 'q' is closed");
  EXPECT_EQ(r->size(), 1);
}

TEST(FIFOQueueTest, CancelledDequeueLeavesTheQueueUsable) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  CancellationManager step;
  Result got;
  Dequeue(*q, 1, &step, &got);
  step.StartCancel();
  ASSERT_TRUE(got.Wait());
  EXPECT_STATUS(got.status, kCancelled, "Dequeue operation on FIFOQueue 'q' was cancelled");
  EXPECT_EQ(q->num_pending_dequeues(), 0);
  Put(*q, 5);  // not swallowed by the cancelled attempt
  EXPECT_EQ(Take(*q, 1), std::vector<float>{5});
}

TEST(FIFOQueueTest, CancelledDequeueManyGivesItsElementsBackInOrder) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  CancellationManager step;
  Result got;
  Dequeue(*q, 4, &step, &got);
  Put(*q, 1);
  Put(*q, 2);
  EXPECT_EQ(q->size(), 0);  // collected
  step.StartCancel();
  ASSERT_TRUE(got.Wait());
  EXPECT_STATUS(got.status, kCancelled, "was cancelled");
  Put(*q, 3);
  EXPECT_EQ(Take(*q, 3), (std::vector<float>{1, 2, 3}));
}

TEST(FIFOQueueTest, CancelledEnqueueLetsTheNextOneIn) {
  auto q = NewQueue(1);
  Put(*q, 1);
  CancellationManager first_step, second_step;
  Result first, second;
  Enqueue(*q, 2, &first_step, &first);
  Enqueue(*q, 3, &second_step, &second);
  first_step.StartCancel();
  ASSERT_TRUE(first.Wait());
  EXPECT_STATUS(first.status, kCancelled, "Enqueue operation on FIFOQueue 'q' was cancelled");
  EXPECT_EQ(Take(*q, 1), std::vector<float>{1});
  ASSERT_TRUE(second.Wait());
  EXPECT_OK(second.status);
  EXPECT_EQ(Take(*q, 1), std::vector<float>{3});
}

TEST(FIFOQueueTest, AlreadyCancelledStepFailsAWaitButNotAnImmediateOperation) {
  auto q = NewQueue(FIFOQueue::kUnbounded);
  CancellationManager step;
  step.StartCancel();
  Result got;
  Dequeue(*q, 1, &step, &got);
  ASSERT_TRUE(got.done.HasBeenNotified());
  EXPECT_STATUS(got.status, kCancelled, "was cancelled");
  Result put;
  Enqueue(*q, 1, &step, &put);
  EXPECT_OK(put.status);
  EXPECT_EQ(q->size(), 1);
}

TEST(FIFOQueueTest, ValidationNamesTheQueueAndTheComponent) {
  FIFOQueue q("pairs", {DT_FLOAT, DT_INT32}, {PartialTensorShape({2}), PartialTensorShape({})}, 5);
  EXPECT_STATUS(q.ValidateTuple({F(1)}), kInvalidArgument,
                "FIFOQueue 'pairs' has 2 components, got 1");
  EXPECT_STATUS(
      q.ValidateTuple({Tensor::FromVector<float>({1, 2}, TensorShape({2})), F(1)}),
      kInvalidArgument,
      "type mismatch in tuple component 1 of FIFOQueue 'pairs': expected int32, got float");
  EXPECT_STATUS(q.ValidateTuple({Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})),
                                 Tensor::Scalar<int32_t>(1)}),
                kInvalidArgument,
                "shape mismatch in tuple component 0 of FIFOQueue 'pairs': expected [2], got [3]");
  EXPECT_STATUS(q.ValidateManyTuple({Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2})),
                                     Tensor::FromVector<int32_t>({1, 2, 3}, TensorShape({3}))}),
                kInvalidArgument, "component 0 has 2 rows, component 1 has 3");
  EXPECT_STATUS(q.ValidateManyTuple({Tensor::FromVector<float>({1, 2, 3}, TensorShape({1, 3})),
                                     Tensor::FromVector<int32_t>({1}, TensorShape({1}))}),
                kInvalidArgument,
                "component 0 of FIFOQueue 'pairs': expected elements of shape [2]");
  EXPECT_STATUS(q.ValidateManyTuple({F(1), Tensor::Scalar<int32_t>(1)}), kInvalidArgument,
                "is a scalar; it needs a batch dimension 0");

  EXPECT_STATUS(FIFOQueue::Validate("q", {}, {}, 1), kInvalidArgument,
                "at least one component type");
  EXPECT_STATUS(FIFOQueue::Validate("q", {DT_FLOAT}, {PartialTensorShape({-1})}, 1),
                kInvalidArgument, "component 0 has shape [?]; shapes must be fully defined");
  EXPECT_STATUS(FIFOQueue::Validate("q", {DT_FLOAT}, {}, 0), kInvalidArgument, "capacity 0");
  EXPECT_STATUS(
      q.MatchesRequest({DT_FLOAT}, {}, 5), kInvalidArgument,
      "shared FIFOQueue 'pairs' has component types (float, int32) but requested component "
      "types (float)");
  EXPECT_STATUS(
      q.MatchesRequest({DT_FLOAT, DT_INT32}, {PartialTensorShape({2}), PartialTensorShape({})}, 6),
      kInvalidArgument, "has capacity 5 but requested capacity 6");
}

// Producers and consumers on several threads, the consumers' steps cancelled
// at the end: every element comes out exactly once, and the queue ends empty
// with nobody waiting.
TEST(FIFOQueueTest, ManyProducersAndConsumers) {
  auto q = NewQueue(3);
  constexpr int kProducers = 4, kPerProducer = 200;
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        Result r;
        Enqueue(*q, static_cast<float>(p * kPerProducer + i), nullptr, &r);
        ASSERT_TRUE(r.Wait());
        ASSERT_OK(r.status);
      }
    });
  }
  CancellationManager step;
  absl::Mutex mu;
  std::vector<int> seen(kProducers * kPerProducer, 0);
  for (int c = 0; c < 3; ++c) {
    threads.emplace_back([&] {
      while (true) {
        Result r;
        Dequeue(*q, 1, &step, &r);
        ASSERT_TRUE(r.Wait());
        if (!r.status.ok()) {
          EXPECT_STATUS(r.status, kCancelled, "was cancelled");
          return;
        }
        absl::MutexLock lock(&mu);
        ++seen[static_cast<int>(r.elements[0][0].scalar<float>())];
      }
    });
  }
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    int total = 0;
    for (int s : seen) total += s;
    return total == kProducers * kPerProducer;
  }));
  step.StartCancel();
  for (auto& t : threads) t.join();
  for (int s : seen) EXPECT_EQ(s, 1);
  EXPECT_EQ(q->size(), 0);
  EXPECT_EQ(q->num_pending_dequeues(), 0);
  EXPECT_EQ(q->num_pending_enqueues(), 0);
}

}  // namespace
}  // namespace tensorgrid
