// FusedBatchNormV3 and FusedBatchNormGradV3 against a double-precision
// reference written here, in both modes and data formats, including the
// moving-average update; their error cases.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// A 4-D problem; Index(e, ch) is the offset of example-position e of channel ch.
struct Problem {
  int64_t n, h, w, c;
  std::string format;
  int64_t Count() const { return n * h * w; }
  std::vector<int64_t> Dims() const {
    return format == "NHWC" ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
  }
  int64_t Index(int64_t e, int64_t ch) const {
    if (format == "NHWC") return e * c + ch;
    const int64_t b = e / (h * w), pos = e % (h * w);
    return (b * c + ch) * h * w + pos;
  }
};

struct Stats {
  std::vector<double> mean, var;  // var biased
};

Stats BatchStats(const Problem& p, const float* x) {
  Stats s{std::vector<double>(p.c, 0), std::vector<double>(p.c, 0)};
  for (int64_t ch = 0; ch < p.c; ++ch) {
    for (int64_t e = 0; e < p.Count(); ++e) s.mean[ch] += x[p.Index(e, ch)];
    s.mean[ch] /= p.Count();
    for (int64_t e = 0; e < p.Count(); ++e) {
      const double d = x[p.Index(e, ch)] - s.mean[ch];
      s.var[ch] += d * d;
    }
    s.var[ch] /= p.Count();
  }
  return s;
}

class BatchNormTest : public OpsTestBase {
 protected:
  Tensor Random(const std::vector<int64_t>& dims, float lo, float hi) {
    Tensor t(DT_FLOAT, TensorShape(dims));
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(rng_);
    return t;
  }
  NodeDefBuilder Node(const std::string& op, const Problem& p, bool training, float factor = 1) {
    NodeDefBuilder b("bn", op);
    b.Attr("T", DT_FLOAT).Attr("U", DT_FLOAT).Attr("epsilon", 1e-3f);
    b.Attr("data_format", p.format).Attr("is_training", training);
    if (op == "FusedBatchNormV3") b.Attr("exponential_avg_factor", factor);
    return b;
  }
  absl::Status Run(const NodeDefBuilder& b, std::vector<Tensor> in) {
    TG_RETURN_IF_ERROR(MakeOp(b));
    inputs_.clear();
    for (Tensor& t : in) AddInput(std::move(t));
    return RunOp();
  }
  void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol) {
    ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(t.data<float>()[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
    }
  }
  std::vector<Problem> Problems() {
    return {{2, 3, 4, 5, "NHWC"},
            {3, 5, 2, 7, "NCHW"},
            {4, 7, 7, 16, "NHWC"},
            {8, 9, 9, 24, "NCHW"},
            {1, 1, 1, 3, "NHWC"}};
  }
  std::mt19937 rng_{5};
};

TEST_F(BatchNormTest, TrainingNormalizesWithBatchStatsAndBlendsMovingStats) {
  const double eps = 1e-3;
  for (const Problem& p : Problems()) {
    for (float factor : {1.f, 0.1f}) {
      SCOPED_TRACE(p.format + " c=" + std::to_string(p.c) + " f=" + std::to_string(factor));
      Tensor x = Random(p.Dims(), -2, 3), scale = Random({p.c}, 0.5, 2),
             offset = Random({p.c}, -1, 1), old_mean = Random({p.c}, -1, 1),
             old_var = Random({p.c}, 0.5, 2);
      ASSERT_OK(
          Run(Node("FusedBatchNormV3", p, true, factor), {x, scale, offset, old_mean, old_var}));
      const Stats s = BatchStats(p, x.data<float>());
      std::vector<double> y(x.NumElements()), moving_mean(p.c), moving_var(p.c);
      for (int64_t ch = 0; ch < p.c; ++ch) {
        const double inv = 1 / std::sqrt(s.var[ch] + eps);
        for (int64_t e = 0; e < p.Count(); ++e) {
          const int64_t i = p.Index(e, ch);
          y[i] = (x.data<float>()[i] - s.mean[ch]) * inv * scale.data<float>()[ch] +
                 offset.data<float>()[ch];
        }
        const double unbiased = s.var[ch] * p.Count() / std::max<int64_t>(p.Count() - 1, 1);
        moving_mean[ch] = (1 - factor) * old_mean.data<float>()[ch] + factor * s.mean[ch];
        moving_var[ch] = (1 - factor) * old_var.data<float>()[ch] + factor * unbiased;
      }
      ExpectNear(GetOutput(0), y, 1e-4);
      ExpectNear(GetOutput(1), moving_mean, 1e-5);
      ExpectNear(GetOutput(2), moving_var, 1e-4);
      ExpectNear(GetOutput(3), s.mean, 1e-5);
      ExpectNear(GetOutput(4), s.var, 1e-4);
      EXPECT_EQ(GetOutput(5).shape(), TensorShape({0}));
    }
  }
}

TEST_F(BatchNormTest, TrainingWithFactorOneAcceptsEmptyMovingStats) {
  Problem p{2, 2, 2, 3, "NHWC"};
  ASSERT_OK(Run(Node("FusedBatchNormV3", p, true),
                {Random(p.Dims(), -1, 1), Random({3}, 1, 2), Random({3}, 0, 1),
                 Tensor(DT_FLOAT, {0}), Tensor(DT_FLOAT, {0})}));
  EXPECT_EQ(GetOutput(1).shape(), TensorShape({3}));
}

TEST_F(BatchNormTest, InferenceUsesTheGivenStats) {
  const double eps = 1e-3;
  for (const Problem& p : Problems()) {
    SCOPED_TRACE(p.format);
    Tensor x = Random(p.Dims(), -2, 3), scale = Random({p.c}, 0.5, 2),
           offset = Random({p.c}, -1, 1), mean = Random({p.c}, -1, 1), var = Random({p.c}, 0.5, 2);
    ASSERT_OK(Run(Node("FusedBatchNormV3", p, false), {x, scale, offset, mean, var}));
    std::vector<double> y(x.NumElements());
    for (int64_t ch = 0; ch < p.c; ++ch) {
      for (int64_t e = 0; e < p.Count(); ++e) {
        const int64_t i = p.Index(e, ch);
        y[i] = (x.data<float>()[i] - mean.data<float>()[ch]) /
                   std::sqrt(var.data<float>()[ch] + eps) * scale.data<float>()[ch] +
               offset.data<float>()[ch];
      }
    }
    ExpectNear(GetOutput(0), y, 1e-5);
    for (int out : {1, 3})
      ExpectTensorEqual<float>(
          GetOutput(out),
          std::vector<float>(mean.values<float>().begin(), mean.values<float>().end()), {p.c});
    for (int out : {2, 4})
      ExpectTensorEqual<float>(
          GetOutput(out),
          std::vector<float>(var.values<float>().begin(), var.values<float>().end()), {p.c});
  }
}

// The gradients of y = scale * (x - m) / sqrt(v + eps) + offset; in training
// m and v are x's batch statistics (and depend on x), in inference constants.
TEST_F(BatchNormTest, GradientMatchesTheReferenceInBothModes) {
  const double eps = 1e-3;
  for (bool training : {true, false}) {
    for (const Problem& p : Problems()) {
      SCOPED_TRACE(p.format + (training ? " training" : " inference"));
      Tensor x = Random(p.Dims(), -2, 3), dy = Random(p.Dims(), -1, 1),
             scale = Random({p.c}, 0.5, 2);
      Stats s = BatchStats(p, x.data<float>());
      Tensor mean(DT_FLOAT, {p.c}), var(DT_FLOAT, {p.c});
      for (int64_t ch = 0; ch < p.c; ++ch) {
        if (!training) s.mean[ch] += 0.3, s.var[ch] += 0.2;  // moving stats, not the batch's
        mean.data<float>()[ch] = static_cast<float>(s.mean[ch]);
        var.data<float>()[ch] = static_cast<float>(s.var[ch]);
        s.mean[ch] = mean.data<float>()[ch];
        s.var[ch] = var.data<float>()[ch];
      }
      ASSERT_OK(Run(Node("FusedBatchNormGradV3", p, training),
                    {dy, x, scale, mean, var, Tensor(DT_FLOAT, {0})}));
      std::vector<double> dx(x.NumElements()), dscale(p.c, 0), doffset(p.c, 0);
      for (int64_t ch = 0; ch < p.c; ++ch) {
        const double inv = 1 / std::sqrt(s.var[ch] + eps);
        double mean_dy = 0, mean_dy_xhat = 0;
        for (int64_t e = 0; e < p.Count(); ++e) {
          const int64_t i = p.Index(e, ch);
          const double xhat = (x.data<float>()[i] - s.mean[ch]) * inv;
          doffset[ch] += dy.data<float>()[i];
          dscale[ch] += dy.data<float>()[i] * xhat;
        }
        mean_dy = doffset[ch] / p.Count();
        mean_dy_xhat = dscale[ch] / p.Count();
        for (int64_t e = 0; e < p.Count(); ++e) {
          const int64_t i = p.Index(e, ch);
          const double xhat = (x.data<float>()[i] - s.mean[ch]) * inv;
          const double g = dy.data<float>()[i];
          dx[i] =
              scale.data<float>()[ch] * inv * (training ? g - mean_dy - xhat * mean_dy_xhat : g);
        }
      }
      ExpectNear(GetOutput(0), dx, 1e-4);
      ExpectNear(GetOutput(1), dscale, 1e-4);
      ExpectNear(GetOutput(2), doffset, 1e-4);
      EXPECT_EQ(GetOutput(3).shape(), TensorShape({0}));
    }
  }
}

TEST_F(BatchNormTest, BadShapesAreInvalidArgument) {
  Problem p{2, 2, 2, 3, "NHWC"};
  Tensor v3 = Random({3}, 1, 2);
  EXPECT_STATUS(
      Run(Node("FusedBatchNormV3", p, true), {Tensor(DT_FLOAT, {2, 2, 3}), v3, v3, v3, v3}),
      kInvalidArgument, "x must be 4-D, got [2,2,3]");
  EXPECT_STATUS(Run(Node("FusedBatchNormV3", p, true),
                    {Random(p.Dims(), 0, 1), Random({4}, 0, 1), v3, v3, v3}),
                kInvalidArgument, "scale must be a vector of 3 (one per channel), got shape [4]");
  EXPECT_STATUS(Run(Node("FusedBatchNormV3", p, false),
                    {Random(p.Dims(), 0, 1), v3, v3, Tensor(DT_FLOAT, {0}), v3}),
                kInvalidArgument, "mean must be a vector of 3");
  EXPECT_STATUS(Run(Node("FusedBatchNormV3", p, true, 0.5f),
                    {Random(p.Dims(), 0, 1), v3, v3, v3, Tensor(DT_FLOAT, {0})}),
                kInvalidArgument, "variance must be a vector of 3");
  EXPECT_STATUS(
      Run(Node("FusedBatchNormGradV3", p, true),
          {Random({2, 2, 2, 4}, 0, 1), Random(p.Dims(), 0, 1), v3, v3, v3, Tensor(DT_FLOAT, {0})}),
      kInvalidArgument, "y_backprop and x must have the same shape");
  EXPECT_STATUS(Run(Node("FusedBatchNormGradV3", p, true),
                    {Random(p.Dims(), 0, 1), Random(p.Dims(), 0, 1), v3, Random({2}, 0, 1), v3,
                     Tensor(DT_FLOAT, {0})}),
                kInvalidArgument, "reserve_space_1 (mean) must be a vector of 3");
}

TEST_F(BatchNormTest, EmptyBatchGivesNaNStatistics) {
  Problem p{0, 2, 2, 3, "NHWC"};
  Tensor v3 = Random({3}, 1, 2);
  ASSERT_OK(
      Run(Node("FusedBatchNormV3", p, true), {Tensor(DT_FLOAT, {0, 2, 2, 3}), v3, v3, v3, v3}));
  EXPECT_TRUE(std::isnan(GetOutput(1).data<float>()[0]));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0, 2, 2, 3}));
}

}  // namespace
}  // namespace tensorgrid
