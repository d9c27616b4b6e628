// Hand-offs through every Abseil primitive the code uses. Each one orders a
// plain write before a plain read on another thread; under --config=tsan,
// ThreadSanitizer sees that order only through tsan_abseil_sync.cc (Debian's
// Abseil is not instrumented), and a hand-off it misses is reported as a data
// race, which fails the test (TSan's exit code 66). The last test checks that
// a race that is real is reported. In the default build these are plain
// threading tests.
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/base/config.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(TsanAbseilSyncTest, MutexLockOrdersWrites) {
  absl::Mutex mu;
  int value = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        absl::MutexLock lock(&mu);
        ++value;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(value, 4000);
}

TEST(TsanAbseilSyncTest, ReaderLockSeesWhatTheWriterWrote) {
  absl::Mutex mu;
  int value = 0;
  bool written = false;
  std::thread writer([&] {
    absl::MutexLock lock(&mu);
    value = 7;
    written = true;
  });
  int seen = 0;
  while (seen == 0) {
    absl::ReaderMutexLock lock(&mu);
    if (written) seen = value;
  }
  writer.join();
  EXPECT_EQ(seen, 7);
}

TEST(TsanAbseilSyncTest, TryLockOrdersWrites) {
  absl::Mutex mu;
  int value = 0;
  std::thread other([&] {
    for (int i = 0; i < 1000;) {
      if (mu.TryLock()) {
        ++value;
        ++i;
        mu.Unlock();
      }
    }
  });
  for (int i = 0; i < 1000; ++i) {
    absl::MutexLock lock(&mu);
    ++value;
  }
  other.join();
  EXPECT_EQ(value, 2000);
}

TEST(TsanAbseilSyncTest, NotificationPublishes) {
  int payload = 0;
  absl::Notification ready;
  std::thread producer([&] {
    payload = 42;
    ready.Notify();
  });
  ready.WaitForNotification();
  EXPECT_EQ(payload, 42);
  producer.join();
}

TEST(TsanAbseilSyncTest, NotificationWithTimeoutPublishes) {
  int payload = 0;
  absl::Notification ready;
  std::thread producer([&] {
    payload = 43;
    ready.Notify();
  });
  while (!ready.WaitForNotificationWithTimeout(absl::Milliseconds(1))) {
  }
  EXPECT_EQ(payload, 43);
  producer.join();
  absl::Notification never;
  EXPECT_FALSE(never.WaitForNotificationWithDeadline(absl::Now()));
}

TEST(TsanAbseilSyncTest, AwaitAndLockWhenSeeTheWrite) {
  absl::Mutex mu;
  int payload = 0;
  bool ready = false;
  std::thread producer([&] {
    absl::MutexLock lock(&mu);
    payload = 5;
    ready = true;
  });
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&ready));
    EXPECT_EQ(payload, 5);
    payload = 6;
    ready = false;
  }
  producer.join();
  std::thread second([&] {
    absl::MutexLock lock(&mu);
    payload = 8;
    ready = true;
  });
  mu.LockWhen(absl::Condition(&ready));
  EXPECT_EQ(payload, 8);
  mu.Unlock();
  second.join();
  bool never = false;
  EXPECT_FALSE(mu.LockWhenWithTimeout(absl::Condition(&never), absl::Milliseconds(1)));
  mu.Unlock();
  {
    absl::MutexLock lock(&mu);
    EXPECT_FALSE(mu.AwaitWithTimeout(absl::Condition(&never), absl::Milliseconds(1)));
  }
}

TEST(TsanAbseilSyncTest, CondVarWaitSeesTheWrite) {
  absl::Mutex mu;
  absl::CondVar cv;
  int payload = 0;
  bool ready = false;
  std::thread producer([&] {
    absl::MutexLock lock(&mu);
    payload = 9;
    ready = true;
    cv.Signal();
  });
  {
    absl::MutexLock lock(&mu);
    while (!ready) cv.WaitWithTimeout(&mu, absl::Milliseconds(10));
    EXPECT_EQ(payload, 9);
  }
  producer.join();
}

TEST(TsanAbseilSyncTest, ReleasableMutexLockReleases) {
  absl::Mutex mu;
  int value = 0;
  std::thread other([&] {
    for (int i = 0; i < 100; ++i) {
      absl::ReleasableMutexLock lock(&mu);
      ++value;
      lock.Release();
    }
  });
  for (int i = 0; i < 100; ++i) {
    absl::MutexLock lock(&mu);
    ++value;
  }
  other.join();
  EXPECT_EQ(value, 200);
}

#ifdef ABSL_HAVE_THREAD_SANITIZER
// Two writes with nothing between them but a relaxed flag, which orders
// nothing: ThreadSanitizer must report it, and end the process with 66.
void UnorderedWrites() {
  int value = 0;
  std::atomic<bool> first_done{false};
  std::thread first([&] {
    value = 1;
    first_done.store(true, std::memory_order_relaxed);
  });
  std::thread second([&] {
    while (!first_done.load(std::memory_order_relaxed)) {
    }
    value = 2;
  });
  first.join();
  second.join();
  std::exit(value == 2 ? 0 : 1);
}

TEST(TsanAbseilSyncDeathTest, ARealRaceIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(UnorderedWrites(), testing::ExitedWithCode(66), "ThreadSanitizer: data race");
}
#endif

}  // namespace
}  // namespace tensorgrid
