#include "core/runtime/collective_buf_table.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "core/platform/status.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

const absl::Time kLater = absl::InfiniteFuture();

Tensor Scalar(float v) {
  Tensor t(DT_FLOAT, TensorShape({1}));
  t.data<float>()[0] = v;
  return t;
}

TEST(CollectiveBufTableTest, KeysNameTheExecution) {
  EXPECT_EQ(CollectiveBufKey(7, 3, 2, 1, 5, 0, 1), "7:3:2:1:5:0->1");
  EXPECT_EQ(CollectiveExecPrefix(7, 3, 2), "7:3:2:");
}

TEST(CollectiveBufTableTest, PutThenGetSharesTheBufferAndLeavesNothing) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  Tensor value = Scalar(4);
  table.Put("1:1:0:0:0:0->1", value, kLater);
  EXPECT_EQ(table.Size(), 1u);
  Tensor got;
  table.Get("1:1:0:0:0:0->1", kLater, [&](absl::Status s, Tensor t) {
    EXPECT_OK(s);
    got = t;
  });
  EXPECT_TRUE(got.SharesBufferWith(value));
  EXPECT_EQ(table.Size(), 0u);
}

TEST(CollectiveBufTableTest, GetWaitsForThePut) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  bool called = false;
  table.Get("k:1:0:0:0:0->1", kLater, [&](absl::Status s, Tensor t) {
    EXPECT_OK(s);
    EXPECT_EQ(t.data<float>()[0], 5);
    called = true;
  });
  EXPECT_FALSE(called);
  table.Put("k:1:0:0:0:0->1", Scalar(5), kLater);
  EXPECT_TRUE(called);
  EXPECT_EQ(table.Size(), 0u);
}

TEST(CollectiveBufTableTest, WaiterFailsAtItsDeadline) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  absl::Notification done;
  absl::Status status;
  table.Get("1:1:0:0:0:1->0", absl::Now() + absl::Milliseconds(50), [&](absl::Status s, Tensor) {
    status = s;
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_STATUS(status, kDeadlineExceeded, "1:1:0:0:0:1->0");
  EXPECT_EQ(table.Size(), 0u);
}

TEST(CollectiveBufTableTest, AbortFailsWaitersDropsEntriesAndLaterPuts) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  absl::Status waiter;
  table.Get("1:1:0:0:0:0->1", kLater, [&](absl::Status s, Tensor) { waiter = s; });
  table.Put("1:1:0:1:0:1->2", Scalar(1), kLater);
  table.Put("1:1:1:0:0:1->2", Scalar(1), kLater);  // another execution: kept
  table.Abort(CollectiveExecPrefix(1, 1, 0), errors::Cancelled("step was cancelled"));
  EXPECT_STATUS(waiter, kCancelled, "step was cancelled");
  EXPECT_EQ(table.Size(), 1u);
  table.Put("1:1:0:0:1:0->1", Scalar(1), kLater);  // late: dropped
  EXPECT_EQ(table.Size(), 1u);
  absl::Status late;
  table.Get("1:1:0:0:2:0->1", kLater, [&](absl::Status s, Tensor) { late = s; });
  EXPECT_STATUS(late, kCancelled, "step was cancelled");
}

TEST(CollectiveBufTableTest, ExpiredEntriesAreDropped) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  table.Put("1:1:0:0:0:0->1", Scalar(1), absl::Now() - absl::Seconds(1));
  table.Put("1:1:0:0:1:0->1", Scalar(1), kLater);  // sweeps the expired one
  EXPECT_EQ(table.Size(), 1u);
}

TEST(CollectiveBufTableTest, WaitUntilTakenWaitsForThePeersToTakeTheirChunks) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  EXPECT_TRUE(table.WaitUntilTaken(absl::Now()));  // nothing put
  // Our own waiters are not the peers' chunks.
  table.Get("1:1:0:0:0:1->0", kLater, [](absl::Status, Tensor) {});
  table.Put("1:1:0:0:0:0->1", Scalar(1), kLater);
  EXPECT_FALSE(table.WaitUntilTaken(absl::Now() + absl::Milliseconds(50)));
  std::thread peer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    table.Get("1:1:0:0:0:0->1", kLater, [](absl::Status, Tensor) {});
  });
  EXPECT_TRUE(table.WaitUntilTaken(absl::Now() + absl::Seconds(30)));
  peer.join();
  // An entry that expires is not waited for past its expiry.
  table.Put("1:2:0:0:0:0->1", Scalar(2), absl::Now() + absl::Milliseconds(50));
  EXPECT_TRUE(table.WaitUntilTaken(absl::Now() + absl::Seconds(30)));
  table.Shutdown(errors::Cancelled("test over"));
}

TEST(CollectiveBufTableTest, ShutdownFailsWaitersAndLaterCalls) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  absl::Status waiter, later;
  table.Get("1:1:0:0:0:0->1", kLater, [&](absl::Status s, Tensor) { waiter = s; });
  table.Shutdown(errors::Aborted("task is shutting down"));
  table.Get("1:1:0:0:1:0->1", kLater, [&](absl::Status s, Tensor) { later = s; });
  EXPECT_STATUS(waiter, kAborted, "shutting down");
  EXPECT_STATUS(later, kAborted, "shutting down");
}

TEST(CollectiveBufTableTest, RunLaterRunsOnThePoolUntilShutdown) {
  ThreadPool pool(1);
  CollectiveBufTable table(&pool);
  const absl::Time start = absl::Now();
  absl::Notification ran;
  absl::Time ran_at;
  std::thread::id ran_on;
  ASSERT_OK(table.RunLater(start + absl::Milliseconds(20), [&] {
    ran_at = absl::Now();
    ran_on = std::this_thread::get_id();
    ran.Notify();
  }));
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_GE(ran_at, start + absl::Milliseconds(20));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  // Not yet due at Shutdown: dropped. After it: refused with its status.
  bool late_ran = false;
  ASSERT_OK(table.RunLater(absl::InfiniteFuture(), [&] { late_ran = true; }));
  table.Shutdown(errors::Aborted("task is shutting down"));
  EXPECT_STATUS(table.RunLater(start, [&] { late_ran = true; }), kAborted, "shutting down");
  EXPECT_FALSE(late_ran);
}

TEST(CollectiveBufTableTest, ACancelledGetIsWithdrawnAndTheKeyCanBeWantedAgain) {
  ThreadPool pool(2);
  CollectiveBufTable table(&pool);
  CancellationManager cancellation;
  absl::Notification first_done;
  absl::Status first;
  table.Get(
      "k", absl::Now() + absl::Hours(1),
      [&](absl::Status s, Tensor) {
        first = s;
        first_done.Notify();
      },
      &cancellation);
  EXPECT_EQ(table.Size(), 1u);
  cancellation.StartCancel();
  ASSERT_TRUE(first_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(first.code(), absl::StatusCode::kCancelled) << first;
  EXPECT_EQ(table.Size(), 0u);
  // Not "wanted twice": a second getter gets the chunk.
  absl::Notification second_done;
  absl::Status second;
  table.Get("k", absl::Now() + absl::Seconds(30), [&](absl::Status s, Tensor) {
    second = s;
    second_done.Notify();
  });
  table.Put("k", Tensor::Scalar<float>(1), absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(second_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_OK(second);
}

}  // namespace
}  // namespace tensorgrid
