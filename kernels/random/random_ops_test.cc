#include <algorithm>
#include <cmath>
#include <thread>

#include "core/framework/shape_inference.h"
#include "kernels/ops_testutil.h"
#include "kernels/random/philox_random.h"

namespace tensorgrid {
namespace {

struct Moments {
  double mean, stddev, min, max;
};

template <typename T>
Moments MomentsOf(const Tensor& t) {
  double sum = 0, sum_sq = 0, lo = INFINITY, hi = -INFINITY;
  for (T v : t.values<T>()) {
    sum += v;
    sum_sq += double{v} * v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
  }
  const double n = static_cast<double>(t.NumElements());
  const double mean = sum / n;
  return {mean, std::sqrt(sum_sq / n - mean * mean), lo, hi};
}

// The values a sequential generator gives for the first run of a node
// seeded (seed, seed2): group g draws on blocks [g * B, (g + 1) * B).
template <typename T, typename Dist>
std::vector<T> Reference(int64_t seed, int64_t seed2, int64_t n) {
  std::vector<T> out;
  PhiloxRandom group_start(seed, seed2);
  while (static_cast<int64_t>(out.size()) < n) {
    PhiloxRandom gen = group_start;
    T values[Dist::kResultsPerGroup];
    Dist::Generate(gen, values);
    out.insert(out.end(), values, values + Dist::kResultsPerGroup);
    group_start.Skip(Dist::kBlocksPerGroup);
  }
  out.resize(n);
  return out;
}

class RandomOpsTest : public OpsTestBase {
 protected:
  absl::Status Make(const std::string& op, DataType dtype, int64_t seed, int64_t seed2,
                    DataType shape_type = DT_INT32) {
    inputs_.clear();
    return MakeOp(NodeDefBuilder("r", op)
                      .Attr("dtype", dtype)
                      .Attr("T", shape_type)
                      .Attr("seed", seed)
                      .Attr("seed2", seed2));
  }
  // Runs the current kernel for a vector of n values.
  Tensor Run(int64_t n) {
    inputs_.clear();
    AddInput(Tensor::FromVector<int32_t>({static_cast<int32_t>(n)}, {1}));
    absl::Status s = RunOp();
    EXPECT_TRUE(s.ok()) << s;
    return GetOutput(0);
  }
};

TEST_F(RandomOpsTest, UniformFloatRangeAndMoments) {
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 87654321, 0));
  Tensor t = Run(10000);
  Moments m = MomentsOf<float>(t);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LT(m.max, 1.0);
  EXPECT_NEAR(m.mean, 0.5, 0.01);
  EXPECT_NEAR(m.stddev, 1 / std::sqrt(12.0), 0.01);
}

TEST_F(RandomOpsTest, UniformDoubleRangeAndMoments) {
  ASSERT_OK(Make("RandomUniform", DT_DOUBLE, 0, 5));
  Tensor t = Run(10000);
  ASSERT_EQ(t.dtype(), DT_DOUBLE);
  Moments m = MomentsOf<double>(t);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LT(m.max, 1.0);
  EXPECT_NEAR(m.mean, 0.5, 0.01);
  EXPECT_NEAR(m.stddev, 1 / std::sqrt(12.0), 0.01);
}

TEST_F(RandomOpsTest, NormalMoments) {
  for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
    ASSERT_OK(Make("RandomStandardNormal", dtype, 3, 4));
    Tensor t = Run(10000);
    Moments m = dtype == DT_FLOAT ? MomentsOf<float>(t) : MomentsOf<double>(t);
    EXPECT_NEAR(m.mean, 0.0, 0.04) << DataTypeString(dtype);
    EXPECT_NEAR(m.stddev, 1.0, 0.03) << DataTypeString(dtype);
    EXPECT_LT(m.min, -3.0) << DataTypeString(dtype);  // real tails
    EXPECT_GT(m.max, 3.0) << DataTypeString(dtype);
  }
}

TEST_F(RandomOpsTest, TruncatedNormalStaysWithinTwoStddev) {
  // A standard normal truncated to (-2, 2) has stddev 0.8796.
  for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
    ASSERT_OK(Make("TruncatedNormal", dtype, 11, 12));
    Tensor t = Run(10000);
    Moments m = dtype == DT_FLOAT ? MomentsOf<float>(t) : MomentsOf<double>(t);
    EXPECT_GT(m.min, -2.0) << DataTypeString(dtype);
    EXPECT_LT(m.max, 2.0) << DataTypeString(dtype);
    EXPECT_NEAR(m.mean, 0.0, 0.03) << DataTypeString(dtype);
    EXPECT_NEAR(m.stddev, 0.8796, 0.02) << DataTypeString(dtype);
  }
}

TEST_F(RandomOpsTest, SameSeedsGiveTheSameSequenceAcrossKernels) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    ASSERT_OK(Make(op, DT_FLOAT, 1, 2));
    Tensor a1 = Run(1000), a2 = Run(1000);
    ASSERT_OK(Make(op, DT_FLOAT, 1, 2));  // a second session built the same way
    Tensor b1 = Run(1000), b2 = Run(1000);
    EXPECT_EQ(a1.SummarizeValue(1000), b1.SummarizeValue(1000)) << op;
    EXPECT_EQ(a2.SummarizeValue(1000), b2.SummarizeValue(1000)) << op;
    EXPECT_NE(a1.SummarizeValue(1000), a2.SummarizeValue(1000)) << op << ": runs must continue";
  }
}

TEST_F(RandomOpsTest, DifferentSeedsDiffer) {
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 1, 0));
  Tensor a = Run(100);
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 0, 1));
  Tensor b = Run(100);
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 1, 1));
  Tensor c = Run(100);
  EXPECT_NE(a.SummarizeValue(100), b.SummarizeValue(100));
  EXPECT_NE(a.SummarizeValue(100), c.SummarizeValue(100));
  EXPECT_NE(b.SummarizeValue(100), c.SummarizeValue(100));
}

TEST_F(RandomOpsTest, ZeroSeedsAreNondeterministic) {
  ASSERT_OK(Make("RandomUniform", DT_DOUBLE, 0, 0));
  Tensor a = Run(100);
  ASSERT_OK(Make("RandomUniform", DT_DOUBLE, 0, 0));
  Tensor b = Run(100);
  EXPECT_NE(a.SummarizeValue(100), b.SummarizeValue(100));
}

TEST_F(RandomOpsTest, ConcurrentRunsGetDisjointPartsOfTheStream) {
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 9, 9));
  std::vector<std::string> concurrent(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([this, &concurrent, i] {
      TensorValue shape{Tensor::FromVector<int32_t>({1000}, {1}), nullptr};
      OpKernelContext::Params params;
      params.device = device();
      params.kernel = kernel_.get();
      params.inputs = &shape;
      OpKernelContext ctx(params);
      EXPECT_OK(kernel_->Compute(ctx));
      concurrent[i] = ctx.outputs()[0].tensor.SummarizeValue(1000);
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 9, 9));
  std::vector<std::string> sequential;
  for (int i = 0; i < 4; ++i) sequential.push_back(Run(1000).SummarizeValue(1000));
  std::sort(concurrent.begin(), concurrent.end());
  std::sort(sequential.begin(), sequential.end());
  EXPECT_EQ(concurrent, sequential);
}

TEST_F(RandomOpsTest, LargeParallelOutputMatchesASequentialGenerator) {
  const int64_t n = 1000003;  // many groups, and a partial last one
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 5, 6));
  Tensor u = Run(n);
  EXPECT_EQ(std::vector<float>(u.values<float>().begin(), u.values<float>().end()),
            (Reference<float, UniformDistribution<float>>(5, 6, n)));

  ASSERT_OK(Make("RandomStandardNormal", DT_DOUBLE, 5, 6));
  Tensor g = Run(n);
  EXPECT_EQ(std::vector<double>(g.values<double>().begin(), g.values<double>().end()),
            (Reference<double, NormalDistribution<double>>(5, 6, n)));

  ASSERT_OK(Make("TruncatedNormal", DT_FLOAT, 5, 6));
  Tensor tn = Run(n);
  EXPECT_EQ(std::vector<float>(tn.values<float>().begin(), tn.values<float>().end()),
            (Reference<float, TruncatedNormalDistribution<float>>(5, 6, n)));
}

TEST_F(RandomOpsTest, Int64ShapeScalarAndEmpty) {
  ASSERT_OK(Make("RandomStandardNormal", DT_FLOAT, 1, 1, DT_INT64));
  AddInput(Tensor::FromVector<int64_t>({2, 3, 4}, {3}));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({2, 3, 4}));

  inputs_.clear();
  AddInput(Tensor(DT_INT64, TensorShape({0})));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape());

  inputs_.clear();
  AddInput(Tensor::FromVector<int64_t>({5, 0}, {2}));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({5, 0}));
}

TEST_F(RandomOpsTest, ShapeMustBeAVector) {
  ASSERT_OK(Make("RandomUniform", DT_FLOAT, 1, 1));
  AddInput(Tensor::FromVector<int32_t>({2, 2}, {1, 2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "shape must be a vector, got a tensor of shape [1,2]");
}

TEST_F(RandomOpsTest, NegativeDimension) {
  ASSERT_OK(Make("TruncatedNormal", DT_FLOAT, 1, 1));
  AddInput(Tensor::FromVector<int32_t>({3, -1}, {2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "shape [3,-1] has a negative dimension");
}

TEST_F(RandomOpsTest, IntegerDtypeIsNotAllowed) {
  EXPECT_STATUS(Make("RandomUniform", DT_INT32, 1, 1), kInvalidArgument,
                "not one of the allowed types");
}

TEST_F(RandomOpsTest, OpsAreStatefulWithZeroSeedDefaults) {
  for (const char* name : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    const OpDef* op = OpRegistry::Global()->Find(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_TRUE(op->is_stateful) << name;
    EXPECT_EQ(op->FindAttr("seed")->default_value->i(), 0) << name;
    EXPECT_EQ(op->FindAttr("seed2")->default_value->i(), 0) << name;
  }
}

TEST(RandomShapeFnTest, RankFromShape) {
  EXPECT_EQ(InferShapes("TruncatedNormal", {PartialTensorShape({3})}),
            std::vector<std::string>{"[?,?,?]"});
}

}  // namespace
}  // namespace tensorgrid
