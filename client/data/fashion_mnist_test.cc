// LoadFashionMnist on small synthetic files written to TEST_TMPDIR.
#include "client/data/fashion_mnist.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "client/data/idx.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

Tensor Images(int n) {
  Tensor t(DT_UINT8, TensorShape({n, 28, 28}));
  for (int i = 0; i < n * 784; ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i % 256);
  return t;
}

Tensor Labels(std::initializer_list<uint8_t> values) {
  return Tensor::FromVector<uint8_t>(values, {static_cast<int64_t>(values.size())});
}

void WriteSplit(const std::string& dir, const std::string& prefix, const Tensor& images,
                const Tensor& labels, bool gzip) {
  std::string suffix = gzip ? ".gz" : "";
  ASSERT_OK(WriteIdx(dir + "/" + prefix + "-images-idx3-ubyte" + suffix, images, gzip));
  ASSERT_OK(WriteIdx(dir + "/" + prefix + "-labels-idx1-ubyte" + suffix, labels, gzip));
}

TEST(FashionMnistTest, LoadsScaledImagesAndInt64Labels) {
  for (bool gzip : {false, true}) {
    std::string dir = TempDir(gzip ? "gz" : "plain");
    WriteSplit(dir, "train", Images(3), Labels({9, 0, 4}), gzip);
    auto data = LoadFashionMnist(dir, MnistSplit::kTrain);
    ASSERT_OK(data.status());
    EXPECT_EQ(data->images.dtype(), DT_FLOAT);
    EXPECT_EQ(data->images.shape(), TensorShape({3, 784}));
    const float* px = data->images.data<float>();
    EXPECT_EQ(px[0], 0.0f);
    EXPECT_FLOAT_EQ(px[51], 0.2f);
    EXPECT_EQ(px[255], 1.0f);
    EXPECT_EQ(data->labels.dtype(), DT_INT64);
    EXPECT_EQ(data->labels.SummarizeValue(3), "9 0 4");
  }
}

TEST(FashionMnistTest, TestSplitUsesT10kFiles) {
  std::string dir = TempDir("t10k");
  WriteSplit(dir, "t10k", Images(2), Labels({1, 2}), /*gzip=*/true);
  auto data = LoadFashionMnist(dir + "/", MnistSplit::kTest);
  ASSERT_OK(data.status());
  EXPECT_EQ(data->images.dim_size(0), 2);
  EXPECT_STATUS(LoadFashionMnist(dir, MnistSplit::kTrain).status(), kNotFound,
                "train-images-idx3-ubyte[.gz] not found");
}

TEST(FashionMnistTest, CountMismatchIsDataLossNamingBothFiles) {
  std::string dir = TempDir("mismatch");
  WriteSplit(dir, "train", Images(3), Labels({1, 2}), /*gzip=*/false);
  absl::Status s = LoadFashionMnist(dir, MnistSplit::kTrain).status();
  EXPECT_STATUS(s, kDataLoss, "train-images-idx3-ubyte holds 3 images but ");
  EXPECT_STATUS(s, kDataLoss, "train-labels-idx1-ubyte holds 2 labels");
}

TEST(FashionMnistTest, LabelOutsideTheTenClassesIsDataLoss) {
  std::string dir = TempDir("bad_label");
  WriteSplit(dir, "train", Images(2), Labels({3, 10}), /*gzip=*/false);
  EXPECT_STATUS(LoadFashionMnist(dir, MnistSplit::kTrain).status(), kDataLoss,
                "label 1 is 10, not a class id in [0, 10)");
}

TEST(FashionMnistTest, WrongDtypeOrRankIsDataLoss) {
  std::string dir = TempDir("bad_types");
  Tensor float_images(DT_FLOAT, TensorShape({2, 28, 28}));
  WriteSplit(dir, "train", float_images, Labels({3, 1}), /*gzip=*/false);
  EXPECT_STATUS(LoadFashionMnist(dir, MnistSplit::kTrain).status(), kDataLoss,
                "expected uint8 images [N, rows, cols], found float [2,28,28]");
  WriteSplit(dir, "train", Images(2), Tensor(DT_UINT8, TensorShape({2, 1})), /*gzip=*/false);
  EXPECT_STATUS(LoadFashionMnist(dir, MnistSplit::kTrain).status(), kDataLoss,
                "expected uint8 labels [N], found uint8 [2,1]");
}

TEST(FashionMnistTest, MissingDefaultDirNamesThePackage) {
  // kFashionMnistDir may well exist here; a sibling under the same root shows
  // the message without depending on that.
  auto path = FindMnistFile("/usr/share/datasets/fashion-mnist/missing", MnistSplit::kTrain, false);
  EXPECT_STATUS(path.status(), kNotFound, "apt-get install dataset-fashion-mnist");
}

}  // namespace
}  // namespace tensorgrid
