// The pooling kernels against direct loops on random shapes, windows,
// strides and paddings, in both data formats; their error cases.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// One random pooling problem, sizes in natural (N, H, W, C) terms.
struct Case {
  int64_t n, h, w, c, kh, kw, sh, sw;
  std::string padding;  // VALID, SAME or EXPLICIT
  std::string format;
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // EXPLICIT
  int64_t oh = 0, ow = 0;

  std::vector<int64_t> Dims(int64_t rows, int64_t cols) const {
    return format == "NHWC" ? std::vector<int64_t>{n, rows, cols, c}
                            : std::vector<int64_t>{n, c, rows, cols};
  }
  std::vector<int64_t> Window(int64_t r, int64_t col) const {
    return format == "NHWC" ? std::vector<int64_t>{1, r, col, 1}
                            : std::vector<int64_t>{1, 1, r, col};
  }
  // Offset of (b, y, x, ch) in a tensor of `rows` x `cols` images.
  int64_t At(int64_t b, int64_t y, int64_t x, int64_t ch, int64_t rows, int64_t cols) const {
    return format == "NHWC" ? ((b * rows + y) * cols + x) * c + ch
                            : ((b * c + ch) * rows + y) * cols + x;
  }
};

// Fills in the output size and the padding before each axis.
void Resolve(Case* k) {
  auto axis = [&](int64_t in, int64_t win, int64_t stride, int64_t* before, int64_t after,
                  int64_t* out) {
    if (k->padding == "VALID") {
      *before = 0;
      *out = (in - win) / stride + 1;
    } else if (k->padding == "SAME") {
      *out = (in + stride - 1) / stride;
      *before = std::max<int64_t>((*out - 1) * stride + win - in, 0) / 2;
    } else {
      *out = (in + *before + after - win) / stride + 1;
    }
  };
  axis(k->h, k->kh, k->sh, &k->top, k->bottom, &k->oh);
  axis(k->w, k->kw, k->sw, &k->left, k->right, &k->ow);
}

// Calls fn(output index, input index) for every covered input of every window.
template <typename Fn>
void ForEachTap(const Case& k, Fn fn) {
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t ch = 0; ch < k.c; ++ch)
      for (int64_t oy = 0; oy < k.oh; ++oy)
        for (int64_t ox = 0; ox < k.ow; ++ox)
          for (int64_t dy = 0; dy < k.kh; ++dy)
            for (int64_t dx = 0; dx < k.kw; ++dx) {
              const int64_t y = oy * k.sh - k.top + dy, x = ox * k.sw - k.left + dx;
              if (y < 0 || y >= k.h || x < 0 || x >= k.w) continue;
              fn(k.At(b, oy, ox, ch, k.oh, k.ow), k.At(b, y, x, ch, k.h, k.w));
            }
}

std::vector<float> RefMaxPool(const Case& k, const float* in) {
  std::vector<float> out(k.n * k.oh * k.ow * k.c, -std::numeric_limits<float>::infinity());
  ForEachTap(k, [&](int64_t o, int64_t i) { out[o] = std::max(out[o], in[i]); });
  return out;
}

std::vector<float> RefAvgPool(const Case& k, const float* in) {
  std::vector<float> sum(k.n * k.oh * k.ow * k.c, 0), count(sum.size(), 0);
  ForEachTap(k, [&](int64_t o, int64_t i) {
    sum[o] += in[i];
    count[o] += 1;
  });
  for (size_t o = 0; o < sum.size(); ++o) sum[o] /= count[o];
  return sum;
}

// Each window's grad goes to the first input equal to the window's maximum.
std::vector<float> RefMaxPoolGrad(const Case& k, const float* in, const float* grad) {
  const std::vector<float> max = RefMaxPool(k, in);
  std::vector<bool> taken(max.size(), false);
  std::vector<float> out(k.n * k.h * k.w * k.c, 0);
  ForEachTap(k, [&](int64_t o, int64_t i) {
    if (!taken[o] && in[i] == max[o]) {
      out[i] += grad[o];
      taken[o] = true;
    }
  });
  return out;
}

std::vector<float> RefAvgPoolGrad(const Case& k, const float* grad) {
  std::vector<float> count(k.n * k.oh * k.ow * k.c, 0);
  ForEachTap(k, [&](int64_t o, int64_t) { count[o] += 1; });
  std::vector<float> out(k.n * k.h * k.w * k.c, 0);
  ForEachTap(k, [&](int64_t o, int64_t i) { out[i] += grad[o] / count[o]; });
  return out;
}

class PoolingTest : public OpsTestBase {
 protected:
  Case RandomCase(int trial) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); };
    Case k;
    k.n = pick(1, 3), k.c = pick(1, 9), k.kh = pick(1, 4), k.kw = pick(1, 4);
    k.h = pick(k.kh, 12), k.w = pick(k.kw, 12), k.sh = pick(1, 3), k.sw = pick(1, 3);
    k.padding = trial % 3 == 0 ? "VALID" : trial % 3 == 1 ? "SAME" : "EXPLICIT";
    k.format = trial % 2 ? "NCHW" : "NHWC";
    if (k.padding == "EXPLICIT") {
      k.top = pick(0, k.kh - 1), k.bottom = pick(0, k.kh - 1);
      k.left = pick(0, k.kw - 1), k.right = pick(0, k.kw - 1);
    }
    Resolve(&k);
    return k;
  }
  Tensor Random(const std::vector<int64_t>& dims) {
    Tensor t(DT_FLOAT, TensorShape(dims));
    std::uniform_real_distribution<float> dist(-1, 1);
    for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(rng_);
    return t;
  }
  NodeDefBuilder Node(const std::string& op, const Case& k) {
    NodeDefBuilder b("pool", op);
    b.Attr("T", DT_FLOAT).Attr("ksize", k.Window(k.kh, k.kw)).Attr("strides", k.Window(k.sh, k.sw));
    b.Attr("padding", k.padding).Attr("data_format", k.format);
    if (k.padding == "EXPLICIT") {
      b.Attr("explicit_paddings",
             k.format == "NHWC"
                 ? std::vector<int64_t>{0, 0, k.top, k.bottom, k.left, k.right, 0, 0}
                 : std::vector<int64_t>{0, 0, 0, 0, k.top, k.bottom, k.left, k.right});
    }
    return b;
  }
  absl::Status Run(const NodeDefBuilder& b, std::vector<Tensor> in) {
    TG_RETURN_IF_ERROR(MakeOp(b));
    inputs_.clear();
    for (Tensor& t : in) AddInput(std::move(t));
    return RunOp();
  }
  std::mt19937 rng_{2026};
};

TEST_F(PoolingTest, MaxPoolAndItsGradientMatchTheLoops) {
  for (int trial = 0; trial < 36; ++trial) {
    Case k = RandomCase(trial);
    SCOPED_TRACE(Node("MaxPool", k).def().DebugString());
    Tensor in = Random(k.Dims(k.h, k.w));
    ASSERT_OK(Run(Node("MaxPool", k), {in}));
    Tensor out = GetOutput(0);
    ExpectTensorNear<float>(out, RefMaxPool(k, in.data<float>()), TensorShape(k.Dims(k.oh, k.ow)),
                            0);
    Tensor grad = Random(k.Dims(k.oh, k.ow));
    ASSERT_OK(Run(Node("MaxPoolGrad", k), {in, out, grad}));
    ExpectTensorNear<float>(GetOutput(0), RefMaxPoolGrad(k, in.data<float>(), grad.data<float>()),
                            in.shape(), 1e-5);
  }
}

// Inputs of a few values only: windows hold several equal maxima, and the
// gradient must go to the first in row-major order (as TensorFlow's does).
TEST_F(PoolingTest, MaxPoolGradSendsTiesToTheFirstMaximum) {
  for (int trial = 0; trial < 36; ++trial) {
    Case k = RandomCase(trial);
    SCOPED_TRACE(Node("MaxPoolGrad", k).def().DebugString());
    Tensor in = Random(k.Dims(k.h, k.w));
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      in.data<float>()[i] = std::floor(in.data<float>()[i] * 1.5f);  // -2, -1, 0 or 1
    }
    ASSERT_OK(Run(Node("MaxPool", k), {in}));
    Tensor out = GetOutput(0);
    Tensor grad = Random(k.Dims(k.oh, k.ow));
    ASSERT_OK(Run(Node("MaxPoolGrad", k), {in, out, grad}));
    ExpectTensorNear<float>(GetOutput(0), RefMaxPoolGrad(k, in.data<float>(), grad.data<float>()),
                            in.shape(), 1e-5);
  }
}

TEST_F(PoolingTest, AvgPoolAndItsGradientMatchTheLoops) {
  for (int trial = 0; trial < 36; ++trial) {
    Case k = RandomCase(trial);
    if (k.padding == "EXPLICIT") continue;  // AvgPool has only SAME and VALID
    SCOPED_TRACE(Node("AvgPool", k).def().DebugString());
    Tensor in = Random(k.Dims(k.h, k.w));
    ASSERT_OK(Run(Node("AvgPool", k), {in}));
    ExpectTensorNear<float>(GetOutput(0), RefAvgPool(k, in.data<float>()),
                            TensorShape(k.Dims(k.oh, k.ow)), 1e-5);
    Tensor grad = Random(k.Dims(k.oh, k.ow));
    const std::vector<int64_t> dims = k.Dims(k.h, k.w);
    Tensor shape = Tensor::FromVector<int32_t>(std::vector<int32_t>(dims.begin(), dims.end()), {4});
    ASSERT_OK(Run(Node("AvgPoolGrad", k), {shape, grad}));
    ExpectTensorNear<float>(GetOutput(0), RefAvgPoolGrad(k, grad.data<float>()), TensorShape(dims),
                            1e-5);
  }
}

TEST_F(PoolingTest, RunsOnTheDevicesIntraOpThreadCount) {
  Case k{2, 8, 8, 4, 2, 2, 2, 2, "VALID", "NHWC"};
  Resolve(&k);
  omp_set_num_threads(1);
  ASSERT_OK(Run(Node("MaxPool", k), {Random(k.Dims(k.h, k.w))}));
  EXPECT_EQ(omp_get_max_threads(), 2);  // the fixture's device has two threads
}

TEST_F(PoolingTest, EmptyBatchGivesEmptyOutput) {
  Case k{0, 4, 4, 3, 2, 2, 2, 2, "SAME", "NHWC"};
  Resolve(&k);
  ASSERT_OK(Run(Node("MaxPool", k), {Tensor(DT_FLOAT, {0, 4, 4, 3})}));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0, 2, 2, 3}));
}

TEST_F(PoolingTest, BadInputsAreInvalidArgument) {
  Case k{1, 4, 4, 1, 3, 3, 1, 1, "VALID", "NHWC"};
  Resolve(&k);
  EXPECT_STATUS(Run(Node("MaxPool", k), {Tensor(DT_FLOAT, {4, 4, 1})}), kInvalidArgument,
                "input must be 4-D, got [4,4,1]");
  EXPECT_STATUS(Run(Node("AvgPool", k), {Tensor(DT_FLOAT, {1, 2, 4, 1})}), kInvalidArgument,
                "rows: window of 3");
  Tensor in = Random({1, 4, 4, 1});
  EXPECT_STATUS(Run(Node("MaxPoolGrad", k),
                    {in, Tensor(DT_FLOAT, {1, 2, 2, 1}), Tensor(DT_FLOAT, {1, 3, 2, 1})}),
                kInvalidArgument, "grad must have the pooled shape [1,2,2,1]");
  EXPECT_STATUS(Run(Node("AvgPoolGrad", k),
                    {Tensor::FromVector<int32_t>({1, 4, 4}, {3}), Tensor(DT_FLOAT, {1, 2, 2, 1})}),
                kInvalidArgument, "orig_input_shape must be a vector of 4");
  EXPECT_STATUS(Run(Node("AvgPoolGrad", k), {Tensor::FromVector<int32_t>({1, -4, 4, 1}, {4}),
                                             Tensor(DT_FLOAT, {1, 2, 2, 1})}),
                kInvalidArgument, "orig_input_shape");
}

}  // namespace
}  // namespace tensorgrid
