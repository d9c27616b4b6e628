#include "client/data/dataset.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <numeric>
#include <set>
#include <thread>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

// Elements 0, 1, ..., n-1 (int64 scalars).
Dataset Range(int64_t n) {
  std::vector<int64_t> values(n);
  std::iota(values.begin(), values.end(), 0);
  return Dataset::FromTensorSlices({Tensor::FromVector<int64_t>(values, {n})});
}

// Every element of `ds`, each flattened: one vector per element.
std::vector<std::vector<int64_t>> CollectBatches(const Dataset& ds, int64_t limit = 1 << 20) {
  std::vector<std::vector<int64_t>> out;
  auto it = ds.MakeIterator();
  EXPECT_TRUE(it.ok()) << it.status();
  if (!it.ok()) return out;
  std::vector<Tensor> element;
  bool end = false;
  while (static_cast<int64_t>(out.size()) < limit) {
    absl::Status s = (*it)->GetNext(&element, &end);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok() || end) break;
    auto v = element[0].values<int64_t>();
    out.emplace_back(v.begin(), v.end());
  }
  return out;
}

// Every element of a dataset of scalars, in order.
std::vector<int64_t> Collect(const Dataset& ds, int64_t limit = 1 << 20) {
  std::vector<int64_t> out;
  for (const auto& e : CollectBatches(ds, limit)) out.insert(out.end(), e.begin(), e.end());
  return out;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

bool IsPermutationOfIota(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  return v == Iota(n);
}

TEST(DatasetTest, SlicesAreRowsThatShareTheComponentBuffers) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor y = Tensor::FromVector<int64_t>({7, 8, 9}, {3});
  auto it = Dataset::FromTensorSlices({x, y}).MakeIterator();
  ASSERT_OK(it.status());
  std::vector<Tensor> e;
  bool end = false;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK((*it)->GetNext(&e, &end));
    ASSERT_FALSE(end);
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].shape(), TensorShape({2}));
    EXPECT_EQ(e[0].SummarizeValue(2), absl::StrCat(2 * i + 1, " ", 2 * i + 2));
    EXPECT_EQ(e[1].shape(), TensorShape({}));
    EXPECT_EQ(e[1].scalar<int64_t>(), 7 + i);
    EXPECT_TRUE(e[0].SharesBufferWith(x));
  }
  ASSERT_OK((*it)->GetNext(&e, &end));
  EXPECT_TRUE(end);
  EXPECT_TRUE(e.empty());
}

TEST(DatasetTest, FromTensorSlicesValidatesComponents) {
  Tensor a(DT_FLOAT, TensorShape({3, 2}));
  EXPECT_STATUS(Dataset::FromTensorSlices({a, Tensor(DT_INT64, TensorShape({4}))}).status(),
                kInvalidArgument, "component 1 has shape [4] but component 0 has [3,2]");
  EXPECT_STATUS(Dataset::FromTensorSlices({Tensor::Scalar<float>(1)}).status(), kInvalidArgument,
                "component 0 is a scalar");
  EXPECT_STATUS(Dataset::FromTensorSlices({}).status(), kInvalidArgument, "no components");
  EXPECT_STATUS(Dataset().MakeIterator().status(), kFailedPrecondition, "empty Dataset");
}

TEST(DatasetTest, ShuffleIsAPermutation) {
  for (int64_t buffer : {2, 10, 100, 1000, 5000}) {
    std::vector<int64_t> order = Collect(Range(1000).Shuffle(buffer, /*seed=*/7));
    EXPECT_TRUE(IsPermutationOfIota(order, 1000)) << "buffer " << buffer;
    EXPECT_NE(order, Iota(1000)) << "buffer " << buffer;
  }
}

TEST(DatasetTest, ShuffleWithTheSameSeedGivesTheSameOrder) {
  Dataset a = Range(500).Shuffle(64, 42);
  EXPECT_EQ(Collect(a), Collect(a));                           // two iterators, one Dataset
  EXPECT_EQ(Collect(a), Collect(Range(500).Shuffle(64, 42)));  // built twice
}

TEST(DatasetTest, ShuffleWithDifferentSeedsDiffers) {
  std::set<std::vector<int64_t>> orders;
  for (uint64_t seed = 0; seed < 5; ++seed) orders.insert(Collect(Range(500).Shuffle(500, seed)));
  EXPECT_EQ(orders.size(), 5u);
}

TEST(DatasetTest, ShuffleBufferOfOneKeepsTheOrder) {
  EXPECT_EQ(Collect(Range(100).Shuffle(1, 3)), Iota(100));
}

TEST(DatasetTest, ShuffleDrawsOnlyFromItsBuffer) {
  // Output position p can only hold one of the first p + buffer inputs.
  const int64_t buffer = 8;
  std::vector<int64_t> order = Collect(Range(400).Shuffle(buffer, 11));
  for (size_t p = 0; p < order.size(); ++p) EXPECT_LT(order[p], static_cast<int64_t>(p) + buffer);
}

TEST(DatasetTest, RepeatReshufflesEachEpochDeterministically) {
  const int64_t n = 50;
  Dataset ds = Range(n).Shuffle(n, 5).Repeat(3);
  std::vector<int64_t> all = Collect(ds);
  ASSERT_EQ(all.size(), 3u * n);
  std::vector<std::vector<int64_t>> epochs;
  for (int e = 0; e < 3; ++e) {
    epochs.emplace_back(all.begin() + e * n, all.begin() + (e + 1) * n);
    EXPECT_TRUE(IsPermutationOfIota(epochs.back(), n)) << "epoch " << e;
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);
  EXPECT_EQ(epochs[0], Collect(Range(n).Shuffle(n, 5)));  // the first epoch is the plain shuffle
  EXPECT_EQ(all, Collect(ds));                            // and the whole run repeats exactly

  std::vector<int64_t> fixed =
      Collect(Range(n).Shuffle(n, 5, /*reshuffle_each_iteration=*/false).Repeat(3));
  EXPECT_TRUE(std::equal(fixed.begin(), fixed.begin() + n, fixed.begin() + n));
}

TEST(DatasetTest, BatchSizesIncludeTheRemainderUnlessDropped) {
  std::vector<std::vector<int64_t>> batches = CollectBatches(Range(10).Batch(4));
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batches[2], (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(Range(10).Batch(4).Cardinality(), 3);

  batches = CollectBatches(Range(10).Batch(4, /*drop_remainder=*/true));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(Range(10).Batch(4, true).Cardinality(), 2);
  EXPECT_EQ(CollectBatches(Range(10).Batch(5, true)).size(), 2u);
  EXPECT_TRUE(CollectBatches(Range(3).Batch(4, true)).empty());
}

TEST(DatasetTest, BatchStacksRowsOfEveryComponent) {
  Tensor x(DT_FLOAT, TensorShape({5, 2, 3}));
  for (int i = 0; i < 30; ++i) x.data<float>()[i] = static_cast<float>(i);
  Tensor names = Tensor::FromVector<std::string>({"a", "b", "c", "d", "e"}, {5});
  auto it = Dataset::FromTensorSlices({x, names}).Shuffle(1, 0).Batch(3).MakeIterator();
  ASSERT_OK(it.status());
  std::vector<Tensor> e;
  bool end = false;
  ASSERT_OK((*it)->GetNext(&e, &end));
  EXPECT_EQ(e[0].shape(), TensorShape({3, 2, 3}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e[0].raw_data()) % kTensorAlignment, 0u);
  EXPECT_EQ(e[0].SummarizeValue(18), x.Slice(0, 3).SummarizeValue(18));
  EXPECT_EQ(e[1].SummarizeValue(3), "\"a\" \"b\" \"c\"");
  ASSERT_OK((*it)->GetNext(&e, &end));
  EXPECT_EQ(e[0].shape(), TensorShape({2, 2, 3}));
  EXPECT_EQ(e[0].data<float>()[11], 29.0f);
  EXPECT_EQ(e[1].SummarizeValue(2), "\"d\" \"e\"");
}

TEST(DatasetTest, BatchOfUnequalShapesIsInvalidArgument) {
  // Range(8).Batch(3) ends with a batch of 2, which cannot stack with 3s.
  auto it = Range(8).Batch(3).Batch(3).MakeIterator();
  ASSERT_OK(it.status());
  std::vector<Tensor> e;
  bool end = false;
  EXPECT_STATUS((*it)->GetNext(&e, &end), kInvalidArgument,
                "component 0 of element 2 is int64 [2] but element 0 has int64 [3]");
  ASSERT_OK((*it)->GetNext(&e, &end));
  EXPECT_TRUE(end);
}

TEST(DatasetTest, RepeatCounts) {
  EXPECT_EQ(Collect(Range(3).Repeat(2)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_TRUE(Collect(Range(3).Repeat(0)).empty());
  EXPECT_EQ(Collect(Range(3).Repeat(), 10), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
  EXPECT_TRUE(Collect(Range(0).Repeat()).empty());  // ends rather than spinning
  EXPECT_EQ(Range(3).Repeat().Cardinality(), Dataset::kInfiniteCardinality);
  EXPECT_EQ(Range(3).Repeat(4).Batch(5).Cardinality(), 3);
  EXPECT_EQ(Range(0).Repeat().Cardinality(), 0);
  EXPECT_STATUS(Range(3).Repeat(-2).status(), kInvalidArgument, "Repeat: count must be >= 0");
}

TEST(DatasetTest, ShardsPartitionTheDataExactly) {
  for (int64_t n : {0, 1, 7, 10, 101}) {
    for (int64_t k : {1, 2, 3, 4, 8}) {
      std::vector<int64_t> all;
      for (int64_t i = 0; i < k; ++i) {
        Dataset shard = Range(n).Shard(k, i);
        std::vector<int64_t> part = Collect(shard);
        EXPECT_EQ(static_cast<int64_t>(part.size()), shard.Cardinality())
            << n << " " << k << " " << i;
        // Balanced: sizes differ by at most one, earlier shards first.
        EXPECT_EQ(static_cast<int64_t>(part.size()), n / k + (i < n % k ? 1 : 0));
        for (int64_t v : part) EXPECT_EQ(v % k, i);
        all.insert(all.end(), part.begin(), part.end());
      }
      EXPECT_TRUE(IsPermutationOfIota(all, n)) << "n " << n << " k " << k;
    }
  }
}

TEST(DatasetTest, ShardThenShuffleKeepsEachWorkersShard) {
  std::vector<int64_t> all;
  for (int64_t i = 0; i < 3; ++i) {
    std::vector<int64_t> part = Collect(Range(90).Shard(3, i).Shuffle(30, 9).Batch(4));
    for (int64_t v : part) EXPECT_EQ(v % 3, i);
    all.insert(all.end(), part.begin(), part.end());
  }
  EXPECT_TRUE(IsPermutationOfIota(all, 90));
}

TEST(DatasetTest, ShardArgumentsOutOfRangeAreInvalidArgument) {
  EXPECT_STATUS(Range(4).Shard(2, 2).status(), kInvalidArgument,
                "Shard: index 2 is out of range for 2 shards");
  EXPECT_STATUS(Range(4).Shard(2, -1).status(), kInvalidArgument, "index -1 is out of range");
  EXPECT_STATUS(Range(4).Shard(0, 0).status(), kInvalidArgument, "num_shards must be >= 1");
  // The first error survives later transformations and stops MakeIterator.
  Dataset bad = Range(4).Shard(2, 5).Shuffle(0, 1).Batch(2);
  EXPECT_STATUS(bad.MakeIterator().status(), kInvalidArgument, "Shard: index 5");
  EXPECT_STATUS(Range(4).Shuffle(0, 1).status(), kInvalidArgument, "Shuffle: buffer_size");
  EXPECT_STATUS(Range(4).Batch(0).status(), kInvalidArgument, "Batch: batch_size");
  EXPECT_STATUS(Range(4).Prefetch(-1).status(), kInvalidArgument, "Prefetch: buffer_size");
}

TEST(DatasetTest, PrefetchYieldsTheSameSequence) {
  Dataset ds = Range(1000).Shuffle(100, 7).Batch(7).Repeat(2);
  for (int64_t buffer : {1, 3, 64}) {
    EXPECT_EQ(CollectBatches(ds.Prefetch(buffer)), CollectBatches(ds)) << "buffer " << buffer;
  }
  EXPECT_EQ(Collect(Range(10).Prefetch(2).Prefetch(1)), Iota(10));
  EXPECT_TRUE(Collect(Range(0).Prefetch(4)).empty());
  EXPECT_EQ(Range(10).Prefetch(2).Cardinality(), 10);
}

TEST(DatasetTest, PrefetchPassesErrorsThrough) {
  auto it = Range(8).Batch(3).Batch(3).Prefetch(2).MakeIterator();
  ASSERT_OK(it.status());
  std::vector<Tensor> e;
  bool end = false;
  EXPECT_STATUS((*it)->GetNext(&e, &end), kInvalidArgument, "equal shapes");
  ASSERT_OK((*it)->GetNext(&e, &end));
  EXPECT_TRUE(end);
}

// Runs `fn` on a thread and waits for it at most a minute (a generous bound:
// what is checked is that it finishes, not how fast).
bool FinishesInBoundedTime(std::function<void()> fn) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread t([fn = std::move(fn), done] {
    fn();
    done->set_value();
  });
  if (finished.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    t.detach();  // leave it: the test fails instead of hanging
    return false;
  }
  t.join();
  return true;
}

TEST(DatasetTest, DestroyingAPrefetchingIteratorMidwayDoesNotHang) {
  for (int64_t buffer : {1, 4}) {
    Dataset ds = Range(100).Repeat().Batch(3).Prefetch(buffer).Prefetch(2);
    auto it = ds.MakeIterator();
    ASSERT_OK(it.status());
    std::vector<Tensor> e;
    bool end = false;
    for (int i = 0; i < 5; ++i) ASSERT_OK((*it)->GetNext(&e, &end));
    std::shared_ptr<DatasetIterator> shared = std::move(it).value();
    EXPECT_TRUE(FinishesInBoundedTime([shared]() mutable { shared.reset(); }));
  }
  // Destroyed before the first GetNext, and destroyed while its queue is full.
  EXPECT_TRUE(FinishesInBoundedTime([] {
    for (int i = 0; i < 50; ++i) {
      auto it = Range(1000).Repeat().Prefetch(8).MakeIterator();
      if (i % 2 == 1) std::this_thread::yield();
    }
  }));
}

TEST(DatasetTest, GetNextFeedsPairsPlaceholderNames) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  Tensor y = Tensor::FromVector<int64_t>({5, 6}, {2});
  auto it = Dataset::FromTensorSlices({x, y}).Batch(2).MakeIterator();
  ASSERT_OK(it.status());
  FeedList feeds;
  bool end = false;
  ASSERT_OK((*it)->GetNextFeeds({"images", "labels"}, &feeds, &end));
  ASSERT_EQ(feeds.size(), 2u);
  EXPECT_EQ(feeds[0].first, "images");
  EXPECT_EQ(feeds[0].second.shape(), TensorShape({2, 2}));
  EXPECT_EQ(feeds[1].first, "labels");
  ASSERT_OK((*it)->GetNextFeeds({"images", "labels"}, &feeds, &end));
  EXPECT_TRUE(end);
  EXPECT_TRUE(feeds.empty());

  auto again = Dataset::FromTensorSlices({x, y}).MakeIterator();
  ASSERT_OK(again.status());
  EXPECT_STATUS((*again)->GetNextFeeds({"images"}, &feeds, &end), kInvalidArgument,
                "1 placeholder names for elements of 2 components");
}

}  // namespace
}  // namespace tensorgrid
