#include "kernels/conv/bounded_cache.h"

#include <memory>
#include <string>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// Builds "value of <key>" and counts the builds.
struct Counter {
  int builds = 0;
  absl::StatusOr<std::unique_ptr<std::string>> operator()(int key) {
    ++builds;
    return std::make_unique<std::string>("value of " + std::to_string(key));
  }
};

TEST(BoundedCacheTest, BuildsOnceAndDropsTheLeastRecentlyUsed) {
  BoundedCache<int, std::string> cache(2);
  Counter counter;
  auto get = [&](int key) {
    auto v = cache.GetOrCreate(key, [&] { return counter(key); });
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? **v : std::string();
  };
  EXPECT_EQ(get(1), "value of 1");
  EXPECT_EQ(get(2), "value of 2");
  EXPECT_EQ(get(1), "value of 1");  // a hit: 1 is now the most recent
  EXPECT_EQ(counter.builds, 2);
  EXPECT_EQ(get(3), "value of 3");  // evicts 2
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(get(1), "value of 1");
  EXPECT_EQ(counter.builds, 3);
  EXPECT_EQ(get(2), "value of 2");  // built again
  EXPECT_EQ(counter.builds, 4);
}

TEST(BoundedCacheTest, ErrorsAreReturnedAndNotCached) {
  BoundedCache<int, std::string> cache(4);
  int calls = 0;
  auto fail = [&]() -> absl::StatusOr<std::unique_ptr<std::string>> {
    ++calls;
    return errors::Internal("no primitive");
  };
  EXPECT_STATUS(cache.GetOrCreate(7, fail).status(), kInternal, "no primitive");
  EXPECT_STATUS(cache.GetOrCreate(7, fail).status(), kInternal, "no primitive");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(BoundedCacheTest, AnEvictedValueStaysAliveForItsHolder) {
  BoundedCache<int, std::string> cache(1);
  Counter counter;
  auto held = cache.GetOrCreate(1, [&] { return counter(1); });
  ASSERT_OK(held.status());
  ASSERT_OK(cache.GetOrCreate(2, [&] { return counter(2); }).status());  // evicts 1
  EXPECT_EQ(**held, "value of 1");
}

}  // namespace
}  // namespace tensorgrid
