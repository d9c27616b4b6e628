// The convolution kernels against a direct loop (double sums) on random
// shapes, strides, dilations, the three paddings and both data formats; and
// their errors.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/conv/dnnl_conv.h"
#include "kernels/openmp.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// One convolution, sized independently of the code under test.
struct Case {
  bool depthwise = false;
  bool nchw = false;
  std::string padding = "VALID";
  int64_t n = 1, rows = 1, cols = 1, depth = 1;
  int64_t k_rows = 1, k_cols = 1, filter_depth = 1, filter_out = 1;  // filter dims 2 and 3
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t pad[4] = {0, 0, 0, 0};  // top, bottom, left, right (EXPLICIT)

  int64_t groups() const { return depthwise ? depth : depth / filter_depth; }
  int64_t out_depth() const { return depthwise ? depth * filter_out : filter_out; }
  std::vector<int64_t> Image(int64_t r, int64_t c, int64_t d) const {
    return nchw ? std::vector<int64_t>{n, d, r, c} : std::vector<int64_t>{n, r, c, d};
  }
  std::vector<int64_t> InputDims() const { return Image(rows, cols, depth); }
  std::vector<int64_t> FilterDims() const { return {k_rows, k_cols, filter_depth, filter_out}; }
  std::vector<int64_t> Spatial(int64_t r, int64_t c) const {
    return nchw ? std::vector<int64_t>{1, 1, r, c} : std::vector<int64_t>{1, r, c, 1};
  }
  std::vector<int64_t> Strides() const { return Spatial(stride_rows, stride_cols); }
  std::vector<int64_t> Dilations() const { return Spatial(dilation_rows, dilation_cols); }
  std::vector<int64_t> ExplicitPaddings() const {
    if (padding != "EXPLICIT") return {};
    if (nchw) return {0, 0, 0, 0, pad[0], pad[1], pad[2], pad[3]};
    return {0, 0, pad[0], pad[1], pad[2], pad[3], 0, 0};
  }
};

// Output size and leading padding of one dimension, TensorFlow's rules.
void Window(const Case& c, int64_t in, int64_t k, int64_t s, int64_t d, int64_t before,
            int64_t after, int64_t* out, int64_t* pad) {
  const int64_t eff = (k - 1) * d + 1;
  if (c.padding == "SAME") {
    *out = (in + s - 1) / s;
    *pad = std::max<int64_t>(0, (*out - 1) * s + eff - in) / 2;
  } else if (c.padding == "VALID") {
    *out = (in - eff) / s + 1;
    *pad = 0;
  } else {
    *out = (in + before + after - eff) / s + 1;
    *pad = before;
  }
}

struct Sizes {
  int64_t out_rows, out_cols, pad_top, pad_left;
};

Sizes SizesOf(const Case& c) {
  Sizes s;
  Window(c, c.rows, c.k_rows, c.stride_rows, c.dilation_rows, c.pad[0], c.pad[1], &s.out_rows,
         &s.pad_top);
  Window(c, c.cols, c.k_cols, c.stride_cols, c.dilation_cols, c.pad[2], c.pad[3], &s.out_cols,
         &s.pad_left);
  return s;
}

int64_t At(const Case& c, int64_t b, int64_t r, int64_t col, int64_t d, int64_t rows,
           int64_t cols, int64_t depth) {
  return c.nchw ? ((b * depth + d) * rows + r) * cols + col : ((b * rows + r) * cols + col) * depth + d;
}

// Calls fn(input index, filter index, output index) for every product the
// convolution sums.
template <typename Fn>
void ForEachTap(const Case& c, Fn fn) {
  const Sizes s = SizesOf(c);
  const int64_t out_depth = c.out_depth(), per_group_out = out_depth / c.groups();
  for (int64_t b = 0; b < c.n; ++b)
    for (int64_t orow = 0; orow < s.out_rows; ++orow)
      for (int64_t ocol = 0; ocol < s.out_cols; ++ocol)
        for (int64_t od = 0; od < out_depth; ++od)
          for (int64_t kr = 0; kr < c.k_rows; ++kr)
            for (int64_t kc = 0; kc < c.k_cols; ++kc) {
              const int64_t r = orow * c.stride_rows - s.pad_top + kr * c.dilation_rows;
              const int64_t col = ocol * c.stride_cols - s.pad_left + kc * c.dilation_cols;
              if (r < 0 || r >= c.rows || col < 0 || col >= c.cols) continue;
              const int64_t out = At(c, b, orow, ocol, od, s.out_rows, s.out_cols, out_depth);
              if (c.depthwise) {  // output channel d * multiplier + m
                const int64_t d = od / c.filter_out, m = od % c.filter_out;
                const int64_t f = ((kr * c.k_cols + kc) * c.depth + d) * c.filter_out + m;
                fn(At(c, b, r, col, d, c.rows, c.cols, c.depth), f, out);
                continue;
              }
              const int64_t g = od / per_group_out;
              for (int64_t i = 0; i < c.filter_depth; ++i) {
                const int64_t d = g * c.filter_depth + i;
                const int64_t f = ((kr * c.k_cols + kc) * c.filter_depth + i) * out_depth + od;
                fn(At(c, b, r, col, d, c.rows, c.cols, c.depth), f, out);
              }
            }
}

std::vector<float> Random(int64_t n, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(*rng);
  return v;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

Tensor FloatTensor(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  return Tensor::FromVector<float>(v, TensorShape(dims));
}

Tensor Sizes32(const std::vector<int64_t>& dims) {
  std::vector<int32_t> v(dims.begin(), dims.end());
  return Tensor::FromVector<int32_t>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

void ExpectClose(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size())) << what;
  const float* g = got.data<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(g[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

// A random case whose windows fit (VALID and EXPLICIT need that).
Case RandomCase(std::mt19937* rng, bool depthwise, bool nchw, const std::string& padding) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(*rng); };
  Case c;
  c.depthwise = depthwise;
  c.nchw = nchw;
  c.padding = padding;
  c.n = pick(1, 3);
  c.k_rows = pick(1, 4);
  c.k_cols = pick(1, 4);
  c.stride_rows = pick(1, 3);
  c.stride_cols = pick(1, 3);
  c.dilation_rows = pick(1, 2);
  c.dilation_cols = pick(1, 2);
  for (int64_t& p : c.pad) p = padding == "EXPLICIT" ? pick(0, 3) : 0;
  c.rows = (c.k_rows - 1) * c.dilation_rows + 1 + pick(0, 7);
  c.cols = (c.k_cols - 1) * c.dilation_cols + 1 + pick(0, 7);
  if (depthwise) {
    c.depth = c.filter_depth = pick(1, 5);
    c.filter_out = pick(1, 3);  // the multiplier
  } else {
    const int groups = pick(0, 3) == 0 ? pick(2, 3) : 1;
    c.filter_depth = pick(1, 4);
    c.depth = c.filter_depth * groups;
    c.filter_out = groups * pick(1, 4);
  }
  return c;
}

class ConvOpsTest : public OpsTestBase {
 protected:
  absl::Status Make(const Case& c, const std::string& op) {
    inputs_.clear();
    return MakeOp(NodeDefBuilder("conv", op)
                      .Attr("T", DT_FLOAT)
                      .Attr("strides", c.Strides())
                      .Attr("dilations", c.Dilations())
                      .Attr("padding", c.padding)
                      .Attr("explicit_paddings", c.ExplicitPaddings())
                      .Attr("data_format", std::string(c.nchw ? "NCHW" : "NHWC")));
  }
  static std::string Op(const Case& c, const char* suffix) {
    return std::string(c.depthwise ? "DepthwiseConv2dNative" : "Conv2D") + suffix;
  }
  std::vector<int64_t> OutputDims(const Case& c) {
    const Sizes s = SizesOf(c);
    return c.Image(s.out_rows, s.out_cols, c.out_depth());
  }

  // Runs the three kernels of `c` on random values against the loops.
  void CheckCase(const Case& c, std::mt19937* rng) {
    const std::string what = Describe(c);
    const std::vector<float> x = Random(Product(c.InputDims()), rng);
    const std::vector<float> w = Random(Product(c.FilterDims()), rng);
    const std::vector<float> dy = Random(Product(OutputDims(c)), rng);
    std::vector<double> y(dy.size()), dx(x.size()), dw(w.size());
    ForEachTap(c, [&](int64_t i, int64_t f, int64_t o) {
      y[o] += double{x[i]} * w[f];
      dx[i] += double{w[f]} * dy[o];
      dw[f] += double{x[i]} * dy[o];
    });
    ASSERT_OK(Make(c, Op(c, "")));
    AddInput(FloatTensor(x, c.InputDims()));
    AddInput(FloatTensor(w, c.FilterDims()));
    ASSERT_OK(RunOp());
    ASSERT_EQ(GetOutput(0).shape(), TensorShape(OutputDims(c))) << what;
    ExpectClose(GetOutput(0), y, "forward " + what);

    ASSERT_OK(Make(c, Op(c, "BackpropInput")));
    AddInput(Sizes32(c.InputDims()));
    AddInput(FloatTensor(w, c.FilterDims()));
    AddInput(FloatTensor(dy, OutputDims(c)));
    ASSERT_OK(RunOp());
    ExpectClose(GetOutput(0), dx, "backprop input " + what);

    ASSERT_OK(Make(c, Op(c, "BackpropFilter")));
    AddInput(FloatTensor(x, c.InputDims()));
    AddInput(Sizes32(c.FilterDims()));
    AddInput(FloatTensor(dy, OutputDims(c)));
    ASSERT_OK(RunOp());
    ExpectClose(GetOutput(0), dw, "backprop filter " + what);
  }

  static std::string Describe(const Case& c) {
    return absl::StrCat(c.depthwise ? "depthwise " : "conv2d ", c.nchw ? "NCHW " : "NHWC ",
                        c.padding, " input ", IndexString(c.InputDims()), " filter ",
                        IndexString(c.FilterDims()), " strides ", c.stride_rows, "x",
                        c.stride_cols, " dilations ", c.dilation_rows, "x", c.dilation_cols,
                        " pads ", c.pad[0], ",", c.pad[1], ",", c.pad[2], ",", c.pad[3]);
  }
  static std::string IndexString(const std::vector<int64_t>& v) {
    return absl::StrCat("[", absl::StrJoin(v, ","), "]");
  }
};

TEST_F(ConvOpsTest, Conv2DMatchesTheLoopsOnRandomCases) {
  std::mt19937 rng(18);
  for (bool nchw : {false, true}) {
    for (const char* padding : {"VALID", "SAME", "EXPLICIT"}) {
      for (int i = 0; i < 6; ++i) {
        CheckCase(RandomCase(&rng, /*depthwise=*/false, nchw, padding), &rng);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(ConvOpsTest, DepthwiseMatchesTheLoopsOnRandomCases) {
  std::mt19937 rng(19);
  for (bool nchw : {false, true}) {
    for (const char* padding : {"VALID", "SAME", "EXPLICIT"}) {
      for (int i = 0; i < 6; ++i) {
        CheckCase(RandomCase(&rng, /*depthwise=*/true, nchw, padding), &rng);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(ConvOpsTest, ALargerLayerMatchesTooAndItsPrimitiveIsCached) {
  std::mt19937 rng(20);
  Case c;
  c.padding = "SAME";
  c.n = 2;
  c.rows = c.cols = 14;
  c.depth = c.filter_depth = 16;
  c.k_rows = c.k_cols = 3;
  c.filter_out = 24;
  c.stride_rows = c.stride_cols = 2;
  CheckCase(c, &rng);
  const size_t cached = conv::DnnlConvCacheSize();
  CheckCase(c, &rng);
  EXPECT_EQ(conv::DnnlConvCacheSize(), cached);  // the same three primitives
}

TEST_F(ConvOpsTest, OneDnnRunsOnTheDevicesIntraOpThreadCount) {
  std::mt19937 rng(21);
  for (int threads : {1, 3}) {
    device_ = NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", threads);
    Case c = RandomCase(&rng, /*depthwise=*/false, /*nchw=*/false, "SAME");
    CheckCase(c, &rng);
    // oneDNN sizes its OpenMP team by this, on the thread that ran the kernel.
    EXPECT_EQ(OpenMpThreads(), threads);
  }
}

// A SAME-padded Conv2D for calling RunDnnlConv directly: its geometry,
// random input and filter, and room for its output.
struct DirectConv {
  ConvGeometry g;
  std::vector<float> x, w, y;
};
DirectConv MakeDirectConv(DataFormat format, const std::vector<int64_t>& input,
                          const std::vector<int64_t>& filter, uint32_t seed) {
  Conv2DAttrs attrs;
  attrs.padding = Padding::kSame;
  attrs.format = format;
  auto g = ComputeConvGeometry(attrs, ConvKind::kConv2D, input, filter);
  EXPECT_OK(g.status());
  if (!g.ok()) return {};
  std::mt19937 rng(seed);
  auto count = [](const std::vector<int64_t>& dims) {
    return static_cast<size_t>(
        std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>()));
  };
  return {*g, Random(count(input), &rng), Random(count(filter), &rng),
          std::vector<float>(g->batch * g->out_depth * g->rows.output * g->cols.output)};
}

// oneDNN fixes a primitive's thread count when it builds it (a primitive
// built for 2 threads runs on 2 under a team of 1), so a call with another
// intra-op thread count gets a primitive of its own.
TEST(DnnlConvTest, APrimitiveIsBuiltForEachThreadCount) {
  auto [g, x, w, one] = MakeDirectConv(DataFormat::kNHWC, {2, 11, 11, 8}, {3, 3, 8, 16}, 24);
  std::vector<float> three(one.size());
  const auto forward = conv::ConvPass::kForward;
  SetOpenMpThreads(2);  // what the thread had before: not what the calls ask for
  ASSERT_OK(conv::RunDnnlConv(g, forward, 1, x.data(), w.data(), one.data()));
  EXPECT_EQ(conv::DnnlConvBuiltThreads(g, forward, 1), 1);
  EXPECT_EQ(conv::DnnlConvBuiltThreads(g, forward, 3), 0);  // not built yet
  ASSERT_OK(conv::RunDnnlConv(g, forward, 3, x.data(), w.data(), three.data()));
  EXPECT_EQ(conv::DnnlConvBuiltThreads(g, forward, 3), 3);
  EXPECT_EQ(conv::DnnlConvBuiltThreads(g, forward, 1), 1);
  for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], three[i], 1e-4) << i;
}

TEST(DnnlConvTest, ConcurrentCallsShareOnePrimitiveSafely) {
  auto [g, x, w, want] = MakeDirectConv(DataFormat::kNHWC, {2, 9, 9, 8}, {3, 3, 8, 8}, 22);
  ASSERT_OK(conv::RunDnnlConv(g, conv::ConvPass::kForward, 1, x.data(), w.data(), want.data()));
  std::vector<std::vector<float>> got(4, std::vector<float>(want.size()));
  std::vector<absl::Status> status(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20 && status[t].ok(); ++i) {
        status[t] =
            conv::RunDnnlConv(g, conv::ConvPass::kForward, 1, x.data(), w.data(), got[t].data());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    ASSERT_OK(status[t]);
    EXPECT_EQ(got[t], want) << "thread " << t;
  }
}

// An NCHW convolution runs on copies of its activations in oneDNN's blocked
// layout; when those cannot be allocated the call fails with a status.
TEST(DnnlConvTest, ABufferPastTheTensorLimitIsResourceExhausted) {
  auto [g, x, w, y] = MakeDirectConv(DataFormat::kNCHW, {4, 16, 32, 32}, {3, 3, 16, 16}, 23);
  ASSERT_OK(conv::RunDnnlConv(g, conv::ConvPass::kForward, 1, x.data(), w.data(), y.data()));
  const int64_t limit = MaxTensorBytes();
  SetMaxTensorBytes(64 << 10);  // below the 256 KiB activations
  absl::Status s = conv::RunDnnlConv(g, conv::ConvPass::kForward, 1, x.data(), w.data(), y.data());
  SetMaxTensorBytes(limit);
  if (s.ok()) {
    GTEST_SKIP() << "oneDNN ran this NCHW convolution in place on this CPU ("
                 << conv::DnnlConvImplementation(g, conv::ConvPass::kForward)
                 << "): there was no copy to fail";
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("oneDNN buffer"), std::string::npos) << s;
  // Nothing is left broken: the next call with room succeeds, with the same result.
  std::vector<float> again(y.size());
  ASSERT_OK(conv::RunDnnlConv(g, conv::ConvPass::kForward, 1, x.data(), w.data(), again.data()));
  EXPECT_EQ(again, y);
}

TEST_F(ConvOpsTest, EmptyBatchGivesEmptyOutputAndZeroFilterGradient) {
  Case c;
  c.n = 0;
  c.rows = c.cols = 3;
  ASSERT_OK(Make(c, "Conv2D"));
  AddInput(FloatTensor({}, {0, 3, 3, 1}));
  AddInput(FloatTensor({1}, {1, 1, 1, 1}));
  ASSERT_OK(RunOp());
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0, 3, 3, 1}));
  ASSERT_OK(Make(c, "Conv2DBackpropFilter"));
  AddInput(FloatTensor({}, {0, 3, 3, 1}));
  AddInput(Sizes32({1, 1, 1, 1}));
  AddInput(FloatTensor({}, {0, 3, 3, 1}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {0.f}, TensorShape({1, 1, 1, 1}));
}

TEST_F(ConvOpsTest, BadShapesAreInvalidArguments) {
  Case c;
  c.rows = c.cols = 4;
  c.k_rows = c.k_cols = 3;
  ASSERT_OK(Make(c, "Conv2D"));
  AddInput(FloatTensor(std::vector<float>(16), {4, 4, 1}));
  AddInput(FloatTensor(std::vector<float>(9), {3, 3, 1, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input must be 4-D, got [4,4,1]");

  ASSERT_OK(Make(c, "Conv2D"));
  AddInput(FloatTensor(std::vector<float>(32), {1, 4, 4, 2}));
  AddInput(FloatTensor(std::vector<float>(27), {3, 3, 3, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input depth 2 must be a multiple of the filter's depth 3");

  ASSERT_OK(Make(c, "Conv2D"));
  AddInput(FloatTensor(std::vector<float>(4), {1, 2, 2, 1}));
  AddInput(FloatTensor(std::vector<float>(9), {3, 3, 1, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "rows: window of 3");

  ASSERT_OK(Make(c, "DepthwiseConv2dNative"));
  AddInput(FloatTensor(std::vector<float>(32), {1, 4, 4, 2}));
  AddInput(FloatTensor(std::vector<float>(9), {3, 3, 1, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input depth 2 must equal the filter's 1");
}

TEST_F(ConvOpsTest, BackpropSizesMustAgreeWithTheGeometry) {
  Case c;
  c.rows = c.cols = 4;
  c.k_rows = c.k_cols = 3;  // VALID: output [1,2,2,1]
  ASSERT_OK(Make(c, "Conv2DBackpropInput"));
  AddInput(Sizes32({1, 4, 4, 1}));
  AddInput(FloatTensor(std::vector<float>(9), {3, 3, 1, 1}));
  AddInput(FloatTensor(std::vector<float>(9), {1, 3, 3, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "out_backprop has shape [1,3,3,1] but the convolution's output is [1,2,2,1]");

  ASSERT_OK(Make(c, "Conv2DBackpropInput"));
  AddInput(Sizes32({1, 4, 4}));
  AddInput(FloatTensor(std::vector<float>(9), {3, 3, 1, 1}));
  AddInput(FloatTensor(std::vector<float>(4), {1, 2, 2, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "input_sizes must be a vector of 4 sizes, got shape [3]");

  ASSERT_OK(Make(c, "Conv2DBackpropFilter"));
  AddInput(FloatTensor(std::vector<float>(16), {1, 4, 4, 1}));
  AddInput(Sizes32({3, 3, -1, 1}));
  AddInput(FloatTensor(std::vector<float>(4), {1, 2, 2, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "filter_sizes must not be negative, got [3,3,-1,1]");

  ASSERT_OK(Make(c, "DepthwiseConv2dNativeBackpropFilter"));
  AddInput(FloatTensor(std::vector<float>(16), {1, 4, 4, 1}));
  AddInput(Sizes32({3, 3, 1, 2}));
  AddInput(FloatTensor(std::vector<float>(4), {1, 2, 2, 1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "out_backprop has shape [1,2,2,1] but the convolution's output is [1,2,2,2]");
}

TEST_F(ConvOpsTest, BadAttrsFailTheKernelsConstructionNamingTheNode) {
  NodeDefBuilder b("conv", "Conv2D");
  b.Attr("T", DT_FLOAT).Attr("padding", std::string("SAME"));
  b.Attr("strides", std::vector<int64_t>{2, 1, 1, 1});
  EXPECT_STATUS(MakeOp(b), kInvalidArgument,
                "node 'conv' (Conv2D): strides in the batch and depth dimensions must be 1");
  b.Attr("strides", std::vector<int64_t>{1, 1, 1, 1});
  b.Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0});
  b.Attr("padding", std::string("EXPLICIT"));
  EXPECT_STATUS(MakeOp(b), kInvalidArgument, "node 'conv' (Conv2D): explicit_paddings must have 8");
}

}  // namespace
}  // namespace tensorgrid
