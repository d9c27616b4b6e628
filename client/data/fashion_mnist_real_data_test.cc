// The real Fashion-MNIST files from Debian's dataset-fashion-mnist package
// (scripts/setup.sh installs it). Skips, naming the package, without it.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "client/data/dataset.h"
#include "client/data/fashion_mnist.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

class FashionMnistRealDataTest : public testing::Test {
 protected:
  void SetUp() override {
    struct stat st;
    if (stat(kFashionMnistDir, &st) != 0) {
      GTEST_SKIP() << kFashionMnistDir << " is missing: install Debian's " << kFashionMnistPackage
                   << " package (apt-get install " << kFashionMnistPackage << ")";
    }
  }
};

void ExpectSplit(MnistSplit split, int64_t n) {
  auto data = LoadFashionMnist(kFashionMnistDir, split);
  ASSERT_OK(data.status());
  EXPECT_EQ(data->images.shape(), TensorShape({n, 784}));
  EXPECT_EQ(data->labels.shape(), TensorShape({n}));
  // Fashion-MNIST is balanced: every class has n / 10 examples.
  std::vector<int64_t> per_class(10, 0);
  for (int64_t label : data->labels.values<int64_t>()) {
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 10);
    ++per_class[label];
  }
  for (int c = 0; c < 10; ++c) EXPECT_EQ(per_class[c], n / 10) << "class " << c;
  float lo = 1, hi = 0;
  for (float p : data->images.values<float>()) {
    lo = std::min(lo, p);
    hi = std::max(hi, p);
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
}

TEST_F(FashionMnistRealDataTest, TrainSplitHas60000Images) {
  ExpectSplit(MnistSplit::kTrain, 60000);
}

TEST_F(FashionMnistRealDataTest, TestSplitHas10000Images) { ExpectSplit(MnistSplit::kTest, 10000); }

TEST_F(FashionMnistRealDataTest, ShardedShuffledBatchesCoverTheTestSplit) {
  auto data = LoadFashionMnist(kFashionMnistDir, MnistSplit::kTest);
  ASSERT_OK(data.status());
  int64_t seen = 0;
  for (int shard = 0; shard < 3; ++shard) {
    Dataset ds = Dataset::FromTensorSlices({data->images, data->labels})
                     .Shard(3, shard)
                     .Shuffle(1000, /*seed=*/shard)
                     .Batch(128)
                     .Prefetch(2);
    auto it = ds.MakeIterator();
    ASSERT_OK(it.status());
    FeedList feeds;
    bool end = false;
    while (true) {
      ASSERT_OK((*it)->GetNextFeeds({"x", "y"}, &feeds, &end));
      if (end) break;
      ASSERT_EQ(feeds[0].second.dim_size(1), 784);
      seen += feeds[1].second.dim_size(0);
    }
  }
  EXPECT_EQ(seen, 10000);
}

}  // namespace
}  // namespace tensorgrid
