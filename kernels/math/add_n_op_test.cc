#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class AddNTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(std::vector<Tensor> inputs) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("sum", "AddN")
                                  .Attr("T", DataTypeToEnum<T>::value)
                                  .Attr("N", static_cast<int64_t>(inputs.size()))));
    for (Tensor& t : inputs) AddInput(std::move(t));
    return RunOp();
  }
};

TEST_F(AddNTest, AddsThreeTensors) {
  ASSERT_OK(Run<float>({Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}),
                        Tensor::FromVector<float>({10, 20, 30, 40}, {2, 2}),
                        Tensor::FromVector<float>({100, 200, 300, 400}, {2, 2})}));
  ExpectTensorEqual<float>(GetOutput(0), {111, 222, 333, 444}, {2, 2});
}

TEST_F(AddNTest, OneInputPassesThrough) {
  Tensor x = Tensor::FromVector<int64_t>({5, 6}, {2});
  ASSERT_OK(Run<int64_t>({x}));
  ExpectTensorEqual<int64_t>(GetOutput(0), {5, 6}, {2});
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(x));
}

TEST_F(AddNTest, TwoDoublesAndEmpty) {
  ASSERT_OK(
      Run<double>({Tensor::FromVector<double>({0.5}, {}), Tensor::FromVector<double>({2}, {})}));
  ExpectTensorEqual<double>(GetOutput(0), {2.5}, TensorShape());
  inputs_.clear();
  ASSERT_OK(Run<int32_t>({Tensor(DT_INT32, {0, 3}), Tensor(DT_INT32, {0, 3})}));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0, 3}));
}

TEST_F(AddNTest, LargeInputsRunOnThePool) {
  const int n = 50000;
  Tensor a(DT_FLOAT, {n}), b(DT_FLOAT, {n}), c(DT_FLOAT, {n});
  for (int i = 0; i < n; ++i) {
    a.data<float>()[i] = i;
    b.data<float>()[i] = 1;
    c.data<float>()[i] = -2.f * i;
  }
  ASSERT_OK(Run<float>({a, b, c}));
  for (int i = 0; i < n; i += 499) EXPECT_EQ(GetOutput(0).data<float>()[i], 1.f - i);
}

TEST_F(AddNTest, ShapesMustMatch) {
  EXPECT_STATUS(Run<float>({Tensor(DT_FLOAT, {2}), Tensor(DT_FLOAT, {2}), Tensor(DT_FLOAT, {1})}),
                kInvalidArgument, "input 0 is [2] and input 2 is [1]");
}

TEST_F(AddNTest, ShapeFunctionPrefersAKnownShape) {
  EXPECT_EQ(InferShapes("AddN", {PartialTensorShape({-1, 3}), PartialTensorShape({2, 3})}),
            std::vector<std::string>{"[2,3]"});
}

}  // namespace
}  // namespace tensorgrid
