// The convolutions on the GPU (cuDNN, cudnn_conv.h) against the CPU kernels
// (oneDNN, checked against a direct loop in kernels/conv/conv_ops_test.cc):
// forward and both backprops, Conv2D (grouped too) and depthwise, both data
// formats, strides, dilations, and the paddings cuDNN cannot take as they
// are (SAME with an odd total, EXPLICIT). Skips with "no GPU" here.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/cudnn_conv.h"
#include "kernels/gpu/gpu_kernel_testutil.h"

namespace tensorgrid {
namespace gpu {
namespace {

struct Conv {
  std::string op = "Conv2D";
  bool nchw = false;
  std::string padding = "SAME";
  std::vector<int64_t> input;   // in the format's order
  std::vector<int64_t> filter;  // [rows, cols, in/groups or in, out or multiplier]
  int64_t stride = 1, dilation = 1;
  std::vector<int64_t> explicit_paddings;  // top, bottom, left, right

  std::vector<int64_t> Spatial(int64_t v) const {
    return nchw ? std::vector<int64_t>{1, 1, v, v} : std::vector<int64_t>{1, v, v, 1};
  }
  // The node of `op` (the forward op or one of its backprops) with these attrs.
  NodeDefBuilder Node(const std::string& name) const {
    NodeDefBuilder b(name, name);
    b.Attr("T", DT_FLOAT).Attr("strides", Spatial(stride)).Attr("padding", padding);
    b.Attr("dilations", Spatial(dilation)).Attr("data_format", nchw ? "NCHW" : "NHWC");
    if (padding == "EXPLICIT") {
      const std::vector<int64_t>& p = explicit_paddings;
      b.Attr("explicit_paddings", nchw ? std::vector<int64_t>{0, 0, 0, 0, p[0], p[1], p[2], p[3]}
                                       : std::vector<int64_t>{0, 0, p[0], p[1], p[2], p[3], 0, 0});
    }
    return b;
  }
  std::string Name() const {
    return absl::StrCat(op, nchw ? " NCHW " : " NHWC ", padding, " stride ", stride, " dilation ",
                        dilation);
  }
};

class GpuConvTest : public GpuKernelTest {
 protected:
  // The forward op and both backprops of `c`, each on both devices.
  void ExpectAllPassesMatch(const Conv& c) {
    SCOPED_TRACE(c.Name());
    const Tensor input = Random<float>(TensorShape(c.input));
    const Tensor filter = Random<float>(TensorShape(c.filter));
    const NodeDefBuilder forward = c.Node(c.op);
    ExpectSameOutputs(forward, {input, filter}, kTolerance);
    // The output's shape, for a gradient of it.
    const KernelRun on_cpu = Run(cpu(), forward, std::vector<Tensor>{input, filter});
    ASSERT_TRUE(on_cpu.status.ok()) << on_cpu.status;
    const Tensor out_backprop = Random<float>(on_cpu.outputs[0].shape());
    ExpectSameOutputs(c.Node(c.op + "BackpropInput"), {Int32Vector(c.input), filter, out_backprop},
                      kTolerance);
    ExpectSameOutputs(c.Node(c.op + "BackpropFilter"), {input, Int32Vector(c.filter), out_backprop},
                      kTolerance);
  }

  // Sums of up to a few hundred products, by different algorithms (cuDNN
  // may pick Winograd or FFT): relative 1e-3 catches any misplaced element.
  static constexpr double kTolerance = 1e-3;
};

TEST_F(GpuConvTest, Conv2DSameStrideOne) {
  Conv c;
  c.input = {2, 7, 7, 3};
  c.filter = {3, 3, 3, 5};
  ExpectAllPassesMatch(c);
}

TEST_F(GpuConvTest, Conv2DSameStrideTwoPadsOnlyAfter) {
  // 8 rows, window 3, stride 2: a total padding of 1, all of it after.
  Conv c;
  c.input = {2, 8, 8, 4};
  c.filter = {3, 3, 4, 6};
  c.stride = 2;
  ExpectAllPassesMatch(c);
}

TEST_F(GpuConvTest, Conv2DValidStridedAndDilated) {
  Conv c;
  c.padding = "VALID";
  c.input = {3, 11, 11, 2};
  c.filter = {3, 3, 2, 4};
  c.stride = 2;
  ExpectAllPassesMatch(c);
  c.stride = 1;
  c.dilation = 2;
  ExpectAllPassesMatch(c);
}

TEST_F(GpuConvTest, Conv2DExplicitAsymmetricPadding) {
  Conv c;
  c.padding = "EXPLICIT";
  c.explicit_paddings = {0, 2, 1, 0};
  c.input = {2, 6, 5, 3};
  c.filter = {3, 2, 3, 4};
  ExpectAllPassesMatch(c);
}

TEST_F(GpuConvTest, Conv2DPointwiseAndGrouped) {
  Conv c;
  c.input = {4, 5, 5, 16};
  c.filter = {1, 1, 16, 8};
  ExpectAllPassesMatch(c);
  c.filter = {3, 3, 4, 8};  // 4 groups of 4 input channels
  ExpectAllPassesMatch(c);
}

TEST_F(GpuConvTest, Conv2DNchw) {
  Conv c;
  c.nchw = true;
  c.input = {2, 3, 8, 8};
  c.filter = {3, 3, 3, 5};
  c.stride = 2;
  ExpectAllPassesMatch(c);
  c.padding = "EXPLICIT";
  c.explicit_paddings = {1, 0, 2, 1};
  c.stride = 1;
  ExpectAllPassesMatch(c);
}

// Every convolution here gets a cuDNN graph plan (cudnn_graph.h): the legacy
// API is the fallback only, and this says when it was taken, and why.
TEST_F(GpuConvTest, TheGraphApiPlansThem) {
  const CudnnConvApiCounts before = CudnnConvApis();
  Conv c;
  c.input = {3, 9, 9, 8};
  c.filter = {3, 3, 8, 16};
  ExpectAllPassesMatch(c);
  c.filter = {3, 3, 2, 16};  // 4 groups
  c.nchw = true;
  c.input = {3, 8, 9, 9};
  c.stride = 2;
  ExpectAllPassesMatch(c);
  // SAME, stride 2 on 10 rows: 0 rows of padding before, 1 after, which the
  // plans take as it is.
  c.nchw = false;
  c.input = {3, 10, 10, 8};
  c.filter = {3, 3, 8, 16};
  ExpectAllPassesMatch(c);
  const CudnnConvApiCounts after = CudnnConvApis();
  const char* legacy = std::getenv("TG_CUDNN_LEGACY_API");
  if (legacy != nullptr && std::string(legacy) == "1") {
    EXPECT_EQ(after.graph, before.graph);
    EXPECT_GE(after.legacy - before.legacy, 9);
  } else {
    EXPECT_GE(after.graph - before.graph, 9);
    EXPECT_GE(after.graph_asymmetric - before.graph_asymmetric, 3);
    EXPECT_EQ(after.legacy, before.legacy) << after.last_legacy_reason;
  }
}

TEST_F(GpuConvTest, Depthwise) {
  Conv c;
  c.op = "DepthwiseConv2dNative";
  c.input = {2, 9, 9, 4};
  c.filter = {3, 3, 4, 2};
  ExpectAllPassesMatch(c);
  c.input = {2, 8, 8, 6};
  c.filter = {3, 3, 6, 1};
  c.stride = 2;  // MobileNetV2's downsampling depthwise layer
  ExpectAllPassesMatch(c);
  c.nchw = true;
  c.input = {2, 6, 8, 8};
  ExpectAllPassesMatch(c);
}

// The forward and backprop-input passes of a depthwise convolution run
// depthwise.cu.h's kernels rather than cuDNN: every window case they index.
TEST_F(GpuConvTest, DepthwiseWindowsPaddingsAndFormats) {
  for (bool nchw : {false, true}) {
    Conv c;
    c.op = "DepthwiseConv2dNative";
    c.nchw = nchw;
    auto dims = [&](int64_t n, int64_t rows, int64_t cols, int64_t channels) {
      return nchw ? std::vector<int64_t>{n, channels, rows, cols}
                  : std::vector<int64_t>{n, rows, cols, channels};
    };
    c.padding = "VALID";
    c.input = dims(2, 11, 9, 5);
    c.filter = {3, 3, 5, 3};
    c.dilation = 2;
    ExpectAllPassesMatch(c);
    c.dilation = 1;
    c.stride = 3;
    ExpectAllPassesMatch(c);
    c.padding = "EXPLICIT";
    c.explicit_paddings = {2, 0, 1, 3};
    c.stride = 2;
    c.filter = {5, 2, 5, 2};  // a window wider than the stride, not square
    ExpectAllPassesMatch(c);
    // Large enough for every thread of the grid to take several elements.
    c.padding = "SAME";
    c.stride = 1;
    c.input = dims(4, 56, 56, 144);
    c.filter = {3, 3, 144, 1};
    ExpectAllPassesMatch(c);
  }
  // NHWC, one filter per channel and a multiple of 4 channels: the float4
  // kernels, with every window feature.
  {
    Conv c;
    c.op = "DepthwiseConv2dNative";
    c.input = {2, 11, 9, 8};
    c.filter = {3, 3, 8, 1};
    c.dilation = 2;
    ExpectAllPassesMatch(c);
    c.dilation = 1;
    c.padding = "EXPLICIT";
    c.explicit_paddings = {2, 0, 1, 3};
    c.stride = 2;
    c.filter = {5, 2, 8, 1};
    ExpectAllPassesMatch(c);
  }
  // Conv2D with one group per input channel is a depthwise convolution.
  Conv c;
  c.input = {2, 9, 7, 6};
  c.filter = {3, 3, 1, 12};
  c.stride = 2;
  ExpectAllPassesMatch(c);
}

TEST_F(GpuConvTest, EmptyBatchAndEmptyFilter) {
  Conv c;
  c.input = {0, 5, 5, 3};
  c.filter = {3, 3, 3, 2};
  ExpectSameOutputs(c.Node("Conv2D"),
                    {Random<float>(TensorShape(c.input)), Random<float>(TensorShape(c.filter))});
  c.input = {1, 5, 5, 0};  // no input channels: sums of nothing
  c.filter = {3, 3, 0, 2};
  ExpectSameOutputs(c.Node("Conv2D"),
                    {Random<float>(TensorShape(c.input)), Random<float>(TensorShape(c.filter))});
}

TEST_F(GpuConvTest, BadShapesAreTheCpusErrors) {
  Conv c;
  c.input = {1, 5, 5, 3};
  c.filter = {3, 3, 2, 4};  // 3 channels are not groups of 2
  ExpectSameOutputs(c.Node("Conv2D"),
                    {Random<float>(TensorShape(c.input)), Random<float>(TensorShape(c.filter))});
  // An out_backprop of the wrong shape.
  c.filter = {3, 3, 3, 4};
  ExpectSameOutputs(c.Node("Conv2DBackpropInput"),
                    {Int32Vector(c.input), Random<float>(TensorShape(c.filter)),
                     Random<float>(TensorShape({1, 4, 4, 4}))});
}

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
