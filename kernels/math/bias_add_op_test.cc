#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class BiasAddTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(Tensor value, Tensor bias, const std::string& data_format = "NHWC") {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("b", "BiasAdd")
                                  .Attr("T", DataTypeToEnum<T>::value)
                                  .Attr("data_format", data_format)));
    AddInput(std::move(value));
    AddInput(std::move(bias));
    return RunOp();
  }
};

TEST_F(BiasAddTest, MatrixNHWC) {
  ASSERT_OK(Run<float>(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                       Tensor::FromVector<float>({10, 20, 30}, {3})));
  ExpectTensorEqual<float>(GetOutput(0), {11, 22, 33, 14, 25, 36}, {2, 3});
}

TEST_F(BiasAddTest, DefaultsToNHWC) {
  ASSERT_OK(MakeOp(NodeDefBuilder("b", "BiasAdd").Attr("T", DT_INT32)));
  AddInput(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 2, 2}));
  AddInput(Tensor::FromVector<int32_t>({100, 200}, {2}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int32_t>(GetOutput(0), {101, 202, 103, 204, 105, 206, 107, 208}, {2, 1, 2, 2});
}

TEST_F(BiasAddTest, NCHWAddsAlongDimensionOne) {
  ASSERT_OK(Run<double>(Tensor::FromVector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}),
                        Tensor::FromVector<double>({100, 200}, {2}), "NCHW"));
  ExpectTensorEqual<double>(GetOutput(0), {101, 102, 103, 104, 205, 206, 207, 208}, {1, 2, 2, 2});
}

TEST_F(BiasAddTest, LargeInputRunsOnThePool) {
  Tensor value(DT_FLOAT, {1000, 40});
  Tensor bias(DT_FLOAT, {40});
  std::vector<float> want(40000);
  for (int c = 0; c < 40; ++c) bias.data<float>()[c] = c * 100.0f;
  for (int i = 0; i < 40000; ++i) {
    value.data<float>()[i] = static_cast<float>(i);
    want[i] = i + (i % 40) * 100.0f;
  }
  ASSERT_OK(Run<float>(value, bias));
  ExpectTensorEqual<float>(GetOutput(0), want, {1000, 40});
}

TEST_F(BiasAddTest, BiasMustMatchChannels) {
  EXPECT_STATUS(
      Run<float>(Tensor(DT_FLOAT, {2, 4}), Tensor(DT_FLOAT, {3})), kInvalidArgument,
      "Must provide as many biases as the last dimension of the input tensor: [3] vs. [2,4]");
  inputs_.clear();
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 4, 5}), Tensor(DT_FLOAT, {5}), "NCHW"),
                kInvalidArgument, "as many biases as the channel dimension");
}

TEST_F(BiasAddTest, RanksAreChecked) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {3}), Tensor(DT_FLOAT, {3})), kInvalidArgument,
                "Input tensor must be at least 2D: [3]");
  inputs_.clear();
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3}), Tensor(DT_FLOAT, {1, 3})), kInvalidArgument,
                "Biases must be 1D: [1,3]");
}

TEST_F(BiasAddTest, UnknownDataFormatIsRejected) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3}), Tensor(DT_FLOAT, {3}), "NDHWC"),
                kInvalidArgument, "data_format");
}

}  // namespace
}  // namespace tensorgrid
