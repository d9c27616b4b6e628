// Relu6 and Relu6Grad against a direct loop on random inputs.
#include <algorithm>
#include <random>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class Relu6Test : public OpsTestBase {
 protected:
  Tensor RandomTensor(const TensorShape& shape, float lo, float hi) {
    Tensor t(DT_FLOAT, shape);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(rng_);
    return t;
  }
  std::mt19937 rng_{7};
};

TEST_F(Relu6Test, ClampsToZeroAndSixOnLargeInputs) {
  // Past kInlineElements, so the intra-op pool splits it.
  Tensor x = RandomTensor({300, 100}, -4, 10);
  ASSERT_OK(MakeOp(NodeDefBuilder("r", "Relu6").Attr("T", DT_FLOAT)));
  AddInput(x);
  ASSERT_OK(RunOp());
  const Tensor& y = GetOutput(0);
  ASSERT_EQ(y.shape(), x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    EXPECT_EQ(y.data<float>()[i], std::min(std::max(x.data<float>()[i], 0.f), 6.f)) << i;
  }
}

TEST_F(Relu6Test, Integers) {
  ASSERT_OK(MakeOp(NodeDefBuilder("r", "Relu6").Attr("T", DT_INT32)));
  AddInput(Tensor::FromVector<int32_t>({-3, 0, 4, 6, 9}, {5}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 0, 4, 6, 6}, {5});
}

TEST_F(Relu6Test, GradPassesInsideTheOpenInterval) {
  Tensor g = RandomTensor({200, 100}, -1, 1);
  Tensor f = RandomTensor({200, 100}, -3, 9);
  f.data<float>()[0] = 0;
  f.data<float>()[1] = 6;
  ASSERT_OK(MakeOp(NodeDefBuilder("r", "Relu6Grad").Attr("T", DT_FLOAT)));
  AddInput(g);
  AddInput(f);
  ASSERT_OK(RunOp());
  const Tensor& out = GetOutput(0);
  for (int64_t i = 0; i < g.NumElements(); ++i) {
    const float x = f.data<float>()[i];
    EXPECT_EQ(out.data<float>()[i], x > 0 && x < 6 ? g.data<float>()[i] : 0.f) << i;
  }
}

TEST_F(Relu6Test, GradShapesMustMatch) {
  ASSERT_OK(MakeOp(NodeDefBuilder("r", "Relu6Grad").Attr("T", DT_FLOAT)));
  AddInput(Tensor(DT_FLOAT, {2, 3}));
  AddInput(Tensor(DT_FLOAT, {3, 2}));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "gradients and features must have the same shape, got [2,3] and [3,2]");
}

}  // namespace
}  // namespace tensorgrid
