// Initializers through training::Variable on a local session: exact values
// for the constant ones, loose statistics over many samples for the random
// ones (seeded, so a run cannot fail by chance; every bound is at least six
// standard deviations of its statistic wide), and seeds.
#include "client/training/initializers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/training/variables.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace training {
namespace {

// Builds variable "v" with `init` in a fresh graph, initializes it and reads it.
Tensor Initialized(const Initializer& init, const TensorShape& shape, DataType dtype) {
  Scope root = Scope::NewRootScope();
  Variable v(root, "v", shape, dtype, init);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({}, {}, {v.initializer()}, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  s = session.Run({v.value()}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out.empty() ? Tensor() : out[0];
}

std::vector<double> Samples(const Tensor& t) {
  std::vector<double> v;
  if (t.dtype() == DT_FLOAT) {
    for (float x : t.values<float>()) v.push_back(x);
  } else if (t.dtype() == DT_DOUBLE) {
    for (double x : t.values<double>()) v.push_back(x);
  }
  return v;
}

struct Stats {
  double mean, stddev, min, max;
};

Stats StatsOf(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / v.size();
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / v.size()), *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}

constexpr int64_t kSamples = 100000;

TEST(InitializersTest, ZerosOnesAndConstants) {
  ExpectTensorEqual<float>(Initialized(Zeros(), {2, 3}, DT_FLOAT), std::vector<float>(6, 0.f),
                           TensorShape({2, 3}));
  ExpectTensorEqual<double>(Initialized(Ones(), {4}, DT_DOUBLE), std::vector<double>(4, 1.0),
                            TensorShape({4}));
  ExpectTensorEqual<int64_t>(Initialized(Zeros(), {}, DT_INT64), {0}, TensorShape({}));
  ExpectTensorEqual<int32_t>(Initialized(Constant(7), {3}, DT_INT32), {7, 7, 7}, TensorShape({3}));
  ExpectTensorEqual<float>(Initialized(Constant(2.5), {2, 2}, DT_FLOAT), {2.5f, 2.5f, 2.5f, 2.5f},
                           TensorShape({2, 2}));
}

TEST(InitializersTest, ConstantTensorIsReshapedAndCast) {
  const Tensor value = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({6}));
  ExpectTensorEqual<float>(Initialized(Constant(value), {2, 3}, DT_FLOAT), {1, 2, 3, 4, 5, 6},
                           TensorShape({2, 3}));
  ExpectTensorEqual<double>(Initialized(Constant(value), {3, 2}, DT_DOUBLE), {1, 2, 3, 4, 5, 6},
                            TensorShape({3, 2}));
}

TEST(InitializersTest, ConstantTensorOfTheWrongSizeIsAnError) {
  Scope root = Scope::NewRootScope();
  Variable v(root, "v", {2, 2}, DT_FLOAT,
             Constant(Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))));
  EXPECT_FALSE(v.valid());
  EXPECT_STATUS(root.status(), kInvalidArgument,
                "Constant initializer: a value of shape [3] has 3 elements, the variable's shape "
                "[2,2] needs 4");
}

TEST(InitializersTest, RandomOfAnIntegerDtypeIsAnError) {
  Scope root = Scope::NewRootScope();
  Variable v(root, "v", {2}, DT_INT32, RandomNormal());
  EXPECT_FALSE(v.valid());
  EXPECT_STATUS(root.status(), kInvalidArgument,
                "random_normal initializer: dtype int32 is not a floating-point type");
}

TEST(InitializersTest, RandomNormalStatistics) {
  const Stats s = StatsOf(Samples(Initialized(RandomNormal(3.0, 2.0, /*seed=*/1), {kSamples}, DT_FLOAT)));
  EXPECT_NEAR(s.mean, 3.0, 0.05);
  EXPECT_NEAR(s.stddev, 2.0, 0.05);
  EXPECT_LT(s.min, 3.0 - 2 * 2.0);  // not truncated
  EXPECT_GT(s.max, 3.0 + 2 * 2.0);
}

TEST(InitializersTest, RandomUniformStatistics) {
  const Stats s = StatsOf(Samples(Initialized(RandomUniform(-1.0, 3.0, /*seed=*/2), {kSamples}, DT_DOUBLE)));
  EXPECT_NEAR(s.mean, 1.0, 0.05);
  EXPECT_NEAR(s.stddev, 4.0 / std::sqrt(12.0), 0.05);
  EXPECT_GE(s.min, -1.0);
  EXPECT_LT(s.max, 3.0);
  EXPECT_LT(s.min, -0.99);
  EXPECT_GT(s.max, 2.99);
}

TEST(InitializersTest, TruncatedNormalStaysWithinTwoDeviations) {
  const Stats s = StatsOf(Samples(Initialized(TruncatedNormal(1.0, 0.5, /*seed=*/3), {kSamples}, DT_FLOAT)));
  EXPECT_NEAR(s.mean, 1.0, 0.02);
  EXPECT_NEAR(s.stddev, 0.5 * 0.8796, 0.02);  // a normal cut at 2 deviations
  EXPECT_GE(s.min, 1.0 - 2 * 0.5);
  EXPECT_LE(s.max, 1.0 + 2 * 0.5);
  EXPECT_LT(s.min, 0.05);  // and it does reach out towards the cut
  EXPECT_GT(s.max, 1.95);
}

TEST(InitializersTest, GlorotUniformLimitFromTheFans) {
  const double limit = std::sqrt(6.0 / (300 + 100));
  const Stats s = StatsOf(Samples(Initialized(GlorotUniform(300, 100, /*seed=*/4), {300, 100}, DT_FLOAT)));
  EXPECT_GE(s.min, -limit);
  EXPECT_LE(s.max, limit);
  EXPECT_LT(s.min, -0.99 * limit);
  EXPECT_GT(s.max, 0.99 * limit);
  // The mean of 30,000 draws has a standard deviation of 0.0033 * limit.
  EXPECT_NEAR(s.mean, 0.0, 0.02 * limit);
  EXPECT_NEAR(s.stddev, limit / std::sqrt(3.0), 0.02 * limit);
}

TEST(InitializersTest, GlorotUniformFansFromTheShape) {
  EXPECT_EQ(ComputeFans(TensorShape({})), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(ComputeFans(TensorShape({7})), std::make_pair(int64_t{7}, int64_t{7}));
  EXPECT_EQ(ComputeFans(TensorShape({784, 10})), std::make_pair(int64_t{784}, int64_t{10}));
  // A 3x3 convolution from 16 to 32 channels.
  EXPECT_EQ(ComputeFans(TensorShape({3, 3, 16, 32})), std::make_pair(int64_t{144}, int64_t{288}));
  const double limit = std::sqrt(6.0 / (144 + 288));
  const Stats s = StatsOf(Samples(Initialized(GlorotUniform(/*seed=*/5), {3, 3, 16, 32}, DT_FLOAT)));
  EXPECT_GE(s.min, -limit);
  EXPECT_LE(s.max, limit);
  EXPECT_GT(s.max, 0.9 * limit);
}

TEST(InitializersTest, SeedsAreReproducibleAcrossSessions) {
  for (const auto& [name, make] :
       std::vector<std::pair<const char*, Initializer (*)(std::optional<int64_t>)>>{
           {"normal", [](std::optional<int64_t> seed) { return RandomNormal(0, 1, seed); }},
           {"uniform", [](std::optional<int64_t> seed) { return RandomUniform(0, 1, seed); }},
           {"truncated", [](std::optional<int64_t> seed) { return TruncatedNormal(0, 1, seed); }},
           {"glorot", [](std::optional<int64_t> seed) { return GlorotUniform(seed); }}}) {
    SCOPED_TRACE(name);
    const std::vector<double> a = Samples(Initialized(make(7), {64}, DT_FLOAT));
    const std::vector<double> b = Samples(Initialized(make(7), {64}, DT_FLOAT));
    const std::vector<double> c = Samples(Initialized(make(8), {64}, DT_FLOAT));
    const std::vector<double> d = Samples(Initialized(make(std::nullopt), {64}, DT_FLOAT));
    const std::vector<double> e = Samples(Initialized(make(std::nullopt), {64}, DT_FLOAT));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(d, e);
  }
}

TEST(InitializersTest, RerunningASeededInitializerContinuesItsStream) {
  Scope root = Scope::NewRootScope();
  Variable v(root, "v", {8}, DT_FLOAT, RandomNormal(0, 1, 3));
  ClientSession session(root);
  std::vector<Tensor> first, second;
  ASSERT_OK(session.Run({}, {}, {v.initializer()}, nullptr));
  ASSERT_OK(session.Run({v.value()}, &first));
  ASSERT_OK(session.Run({}, {}, {v.initializer()}, nullptr));
  ASSERT_OK(session.Run({v.value()}, &second));
  EXPECT_NE(Samples(first[0]), Samples(second[0]));
  // ... and a fresh session starts the stream over.
  EXPECT_EQ(Samples(first[0]), Samples(Initialized(RandomNormal(0, 1, 3), {8}, DT_FLOAT)));
}

TEST(InitializersTest, OpsAreNamedUnderTheVariable) {
  Scope root = Scope::NewRootScope();
  Variable v(root, "w", {2, 2}, DT_FLOAT, TruncatedNormal(0, 1, 1));
  GraphDef graph;
  ASSERT_OK(root.ToGraphDef(&graph));
  std::vector<std::string> names;
  for (const NodeDef& n : graph.node()) names.push_back(n.name() + " " + n.op());
  EXPECT_NE(std::find(names.begin(), names.end(),
                      "w/Initializer/truncated_normal/TruncatedNormal TruncatedNormal"),
            names.end())
      << ::testing::PrintToString(names);
  for (const NodeDef& n : graph.node()) {
    if (n.op() != "TruncatedNormal") continue;
    int64_t seed, seed2;
    ASSERT_OK(GetNodeAttr(n, "seed", &seed));
    ASSERT_OK(GetNodeAttr(n, "seed2", &seed2));
    EXPECT_EQ(seed, kDefaultGraphSeed);
    EXPECT_EQ(seed2, 1);
  }
}

}  // namespace
}  // namespace training
}  // namespace tensorgrid
