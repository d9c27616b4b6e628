#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class DynamicStitchTest : public OpsTestBase {
 protected:
  absl::Status Run(std::vector<Tensor> indices, std::vector<Tensor> data) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("d", "DynamicStitch")
                                  .Attr("N", static_cast<int64_t>(indices.size()))
                                  .Attr("T", data[0].dtype())));
    for (Tensor& t : indices) AddInput(std::move(t));
    for (Tensor& t : data) AddInput(std::move(t));
    return RunOp();
  }
};

TEST_F(DynamicStitchTest, ReplacesReducedDimensionsOfAShape) {
  ASSERT_OK(Run(
      {Tensor::FromVector<int32_t>({0, 1, 2, 3}, {4}), Tensor::FromVector<int32_t>({1, 2}, {2})},
      {Tensor::FromVector<int32_t>({2, 3, 5, 7}, {4}), Tensor::FromVector<int32_t>({1, 1}, {2})}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {2, 1, 1, 7}, {4});
}

TEST_F(DynamicStitchTest, ScalarIndexAndRowsOfData) {
  ASSERT_OK(Run({Tensor::Scalar<int32_t>(1), Tensor::FromVector<int32_t>({0, 2}, {2})},
                {Tensor::FromVector<float>({10, 11}, {2}),
                 Tensor::FromVector<float>({0, 1, 20, 21}, {2, 2})}));
  ExpectTensorEqual<float>(GetOutput(0), {0, 1, 10, 11, 20, 21}, {3, 2});
}

TEST_F(DynamicStitchTest, GapsAreZeroAndEmptyIndicesGiveEmpty) {
  ASSERT_OK(Run({Tensor::FromVector<int32_t>({2}, {1})}, {Tensor::FromVector<double>({5}, {1})}));
  ExpectTensorEqual<double>(GetOutput(0), {0, 0, 5}, {3});
  inputs_.clear();
  ASSERT_OK(Run({Tensor(DT_INT32, {0})}, {Tensor(DT_INT64, {0})}));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0}));
}

TEST_F(DynamicStitchTest, Strings) {
  ASSERT_OK(Run({Tensor::FromVector<int32_t>({1, 0}, {2})},
                {Tensor::FromVector<std::string>({"b", "a"}, {2})}));
  ExpectTensorEqual<std::string>(GetOutput(0), {"a", "b"}, {2});
}

TEST_F(DynamicStitchTest, Errors) {
  EXPECT_STATUS(Run({Tensor::FromVector<int32_t>({0, 1}, {2})}, {Tensor(DT_FLOAT, {3})}),
                kInvalidArgument, "data[0].shape = [3] does not start with indices[0].shape = [2]");
  inputs_.clear();
  EXPECT_STATUS(Run({Tensor::FromVector<int32_t>({0, -1}, {2})}, {Tensor(DT_FLOAT, {2})}),
                kInvalidArgument, "indices[0] holds -1, which is negative");
}

}  // namespace
}  // namespace tensorgrid
