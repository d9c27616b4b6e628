#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class BiasAddGradTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(Tensor grad, const std::string& data_format = "NHWC") {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("g", "BiasAddGrad")
                                  .Attr("T", DataTypeToEnum<T>::value)
                                  .Attr("data_format", data_format)));
    AddInput(std::move(grad));
    return RunOp();
  }
};

TEST_F(BiasAddGradTest, NHWCSumsAllButTheLastDimension) {
  ASSERT_OK(Run<float>(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})));
  ExpectTensorEqual<float>(GetOutput(0), {5, 7, 9}, {3});
  inputs_.clear();
  ASSERT_OK(Run<int32_t>(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {16, 20}, {2});
}

TEST_F(BiasAddGradTest, NCHWSumsAllButDimensionOne) {
  // [1, 2, 2, 2]: channel 0 holds 1..4, channel 1 holds 5..8.
  ASSERT_OK(
      Run<double>(Tensor::FromVector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}), "NCHW"));
  ExpectTensorEqual<double>(GetOutput(0), {10, 26}, {2});
  inputs_.clear();
  ASSERT_OK(Run<double>(Tensor::FromVector<double>({1, 2, 3, 4}, {2, 2}), "NCHW"));
  ExpectTensorEqual<double>(GetOutput(0), {4, 6}, {2});
}

TEST_F(BiasAddGradTest, EmptyBatchGivesZeros) {
  ASSERT_OK(Run<float>(Tensor(DT_FLOAT, {0, 3})));
  ExpectTensorEqual<float>(GetOutput(0), {0, 0, 0}, {3});
}

TEST_F(BiasAddGradTest, NeedsAMatrix) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {3})), kInvalidArgument,
                "Input tensor must be at least 2D: [3]");
}

TEST_F(BiasAddGradTest, ShapeFunctionGivesTheChannels) {
  EXPECT_EQ(InferShapes("BiasAddGrad", {PartialTensorShape({-1, 4})}),
            std::vector<std::string>{"[4]"});
}

}  // namespace
}  // namespace tensorgrid
