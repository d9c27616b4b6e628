// The convolution gradients against central finite differences (float: the
// kernels are float-only), and a bad shape's error naming the node at run time.
#include "client/client_session.h"
#include "client/gradients/grad_testutil.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

constexpr double kTolerance = 5e-3;

class ConvGradTest : public GradientTest {
 protected:
  Output F() { return Placeholder(DT_FLOAT); }
  Tensor R(const TensorShape& shape) { return Random(DT_FLOAT, shape); }
};

TEST_F(ConvGradTest, Conv2DSameStride2) {
  auto x = F(), w = F();
  auto y = ops::Conv2D(root_, x, w, {1, 2, 2, 1}, "SAME");
  CheckGradient({x, w}, {R({1, 5, 4, 2}), R({3, 2, 2, 3})}, {y}, kTolerance);
}

TEST_F(ConvGradTest, Conv2DNchwExplicitDilated) {
  auto x = F(), w = F();
  auto y = ops::Conv2D(root_, x, w, {1, 1, 1, 1}, "EXPLICIT",
                       ops::Conv2D::ExplicitPaddings({0, 0, 0, 0, 1, 0, 0, 2})
                           .DataFormat("NCHW")
                           .Dilations({1, 1, 2, 1}));
  CheckGradient({x, w}, {R({2, 2, 4, 3}), R({2, 2, 2, 2})}, {y}, kTolerance);
}

TEST_F(ConvGradTest, GroupedConv2D) {
  auto x = F(), w = F();
  auto y = ops::Conv2D(root_, x, w, {1, 1, 1, 1}, "VALID");
  CheckGradient({x, w}, {R({1, 3, 3, 4}), R({2, 2, 2, 4})}, {y}, kTolerance);
}

TEST_F(ConvGradTest, DepthwiseWithMultiplier) {
  auto x = F(), w = F();
  auto y = ops::DepthwiseConv2dNative(root_, x, w, {1, 2, 1, 1}, "SAME");
  CheckGradient({x, w}, {R({1, 4, 3, 2}), R({3, 2, 2, 2})}, {y}, kTolerance);
  auto nchw = ops::DepthwiseConv2dNative(root_, x, w, {1, 1, 1, 1}, "VALID",
                                         ops::DepthwiseConv2dNative::DataFormat("NCHW"));
  CheckGradient({x, w}, {R({1, 2, 4, 3}), R({2, 2, 2, 2})}, {nchw}, kTolerance);
}

TEST_F(ConvGradTest, Conv2DBackpropsAreDifferentiable) {
  auto w = F(), dy = F(), x = F();
  auto dx = ops::Conv2DBackpropInput(root_, ops::Const(root_, {1, 4, 4, 2}), w, dy, {1, 2, 2, 1},
                                     "SAME");
  CheckGradient({w, dy}, {R({3, 3, 2, 2}), R({1, 2, 2, 2})}, {dx}, kTolerance);
  auto dw = ops::Conv2DBackpropFilter(root_, x, ops::Const(root_, {2, 2, 2, 3}), dy,
                                      {1, 1, 1, 1}, "VALID");
  CheckGradient({x, dy}, {R({1, 3, 3, 2}), R({1, 2, 2, 3})}, {dw}, kTolerance);
}

TEST_F(ConvGradTest, DepthwiseBackpropsAreDifferentiable) {
  auto w = F(), dy = F(), x = F();
  auto dx = ops::DepthwiseConv2dNativeBackpropInput(root_, ops::Const(root_, {1, 3, 3, 2}), w, dy,
                                                    {1, 1, 1, 1}, "SAME");
  CheckGradient({w, dy}, {R({2, 2, 2, 2}), R({1, 3, 3, 4})}, {dx}, kTolerance);
  auto dw = ops::DepthwiseConv2dNativeBackpropFilter(root_, x, ops::Const(root_, {2, 2, 2, 1}),
                                                     dy, {1, 1, 1, 1}, "VALID");
  CheckGradient({x, dy}, {R({1, 3, 3, 2}), R({1, 2, 2, 2})}, {dw}, kTolerance);
}

TEST_F(ConvGradTest, ARunTimeShapeErrorNamesTheNode) {
  auto x = F();
  auto y = ops::Conv2D(root_.WithOpName("conv1"), x, ops::Const(root_, 1.f, {3, 3, 2, 1}),
                       {1, 1, 1, 1}, "SAME");
  ClientSession session(root_);
  std::vector<Tensor> out;
  EXPECT_STATUS(session.Run({{x, R({1, 4, 4, 3})}}, {y}, &out), kInvalidArgument,
                "node 'conv1' (Conv2D): input depth 3 must be a multiple of the filter's depth 2");
}

}  // namespace
}  // namespace tensorgrid
