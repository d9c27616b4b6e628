#include "core/platform/timer.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

// Each test declares its timer after what the callbacks touch: the timer
// (its thread) goes first.
TEST(TimerTest, RunsInTimeOrderWhateverTheScheduleOrder) {
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification done;
  Timer timer;
  const absl::Time now = absl::Now();
  for (int i : {3, 1, 2}) {
    timer.Schedule(now + absl::Milliseconds(20 * i), [&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
      if (order.size() == 3) done.Notify();
    });
  }
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(TimerTest, AnEarlierEntryScheduledWhileWaitingRunsFirst) {
  absl::Notification late_ran, early_ran;
  Timer timer;
  timer.Schedule(absl::Now() + absl::Hours(1), [&] { late_ran.Notify(); });
  timer.Schedule(absl::Now(), [&] { early_ran.Notify(); });
  EXPECT_TRUE(early_ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(late_ran.HasBeenNotified());
}

TEST(TimerTest, AnEntryDueAfterACancelledFirstOneRunsOnTime) {
  // The loop sleeps until the cancelled entry's time, wakes for nothing,
  // and then waits for the later one (which did not wake it when scheduled).
  absl::Notification later_ran;
  Timer timer;
  const Timer::Id first = timer.Schedule(absl::Now() + absl::Milliseconds(30), [] {});
  absl::SleepFor(absl::Milliseconds(5));  // the loop now sleeps until `first`
  ASSERT_TRUE(timer.Cancel(first));
  const absl::Time later = absl::Now() + absl::Milliseconds(80);
  timer.Schedule(later, [&] { later_ran.Notify(); });
  ASSERT_TRUE(later_ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_GE(absl::Now(), later);
}

TEST(TimerTest, CancelledCallbacksNeverRun) {
  std::atomic<int> ran{0};
  {
    absl::Notification marker;
    Timer timer;
    const Timer::Id id = timer.Schedule(absl::Now() + absl::Milliseconds(50), [&] { ++ran; });
    EXPECT_TRUE(timer.Cancel(id));
    EXPECT_FALSE(timer.Cancel(id));
    timer.Schedule(absl::Now() + absl::Milliseconds(100), [&] { marker.Notify(); });
    ASSERT_TRUE(marker.WaitForNotificationWithTimeout(absl::Seconds(30)));
    // Destroying the timer drops what has not run.
    timer.Schedule(absl::Now() + absl::Hours(1), [&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 0);
}

TEST(TimerTest, CancelAfterRunningIsFalse) {
  absl::Notification ran;
  Timer timer;
  const Timer::Id id = timer.Schedule(absl::Now(), [&] { ran.Notify(); });
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(timer.Cancel(id));
}

}  // namespace
}  // namespace tensorgrid
