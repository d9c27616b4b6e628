#include "kernels/nn/onednn.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace nn {
namespace {

TEST(PrimitiveCacheTest, MakesOncePerKeyAndDropsTheLeastRecentlyUsed) {
  PrimitiveCache<int> cache(2);
  int made = 0;
  auto make = [&](int v) {
    return [&made, v] {
      ++made;
      return v;
    };
  };
  EXPECT_EQ(*cache.Get("a", make(1)), 1);
  EXPECT_EQ(*cache.Get("b", make(2)), 2);
  EXPECT_EQ(*cache.Get("a", make(9)), 1);  // hit; "a" is now the most recent
  EXPECT_EQ(made, 2);
  EXPECT_EQ(*cache.Get("c", make(3)), 3);  // drops "b"
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(*cache.Get("a", make(9)), 1);
  EXPECT_EQ(*cache.Get("b", make(4)), 4);  // made again
  EXPECT_EQ(made, 4);
}

TEST(PrimitiveCacheTest, ConcurrentGetsAgree) {
  PrimitiveCache<std::string> cache(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string key = std::to_string((i + t) % 12);
        EXPECT_EQ(*cache.Get(key, [&] { return "v" + key; }), "v" + key);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.size(), 8u);
}

TEST(OneDnnTest, GuardTurnsErrorsIntoInternal) {
  absl::Status s =
      Guard("test", []() -> absl::Status { throw dnnl::error(dnnl_invalid_arguments, "bad"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("oneDNN test: bad"), std::string::npos) << s;
}

}  // namespace
}  // namespace nn
}  // namespace tensorgrid
