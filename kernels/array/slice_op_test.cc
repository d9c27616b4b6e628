#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class SliceTest : public OpsTestBase {
 protected:
  absl::Status Run(Tensor input, std::vector<int32_t> begin, std::vector<int32_t> size) {
    TG_RETURN_IF_ERROR(
        MakeOp(NodeDefBuilder("s", "Slice").Attr("T", input.dtype()).Attr("Index", DT_INT32)));
    AddInput(std::move(input));
    AddInput(Tensor::FromVector<int32_t>(begin, {static_cast<int64_t>(begin.size())}));
    AddInput(Tensor::FromVector<int32_t>(size, {static_cast<int64_t>(size.size())}));
    return RunOp();
  }
};

TEST_F(SliceTest, BlockOfAMatrix) {
  ASSERT_OK(Run(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}), {1, 1}, {2, 2}));
  ExpectTensorEqual<float>(GetOutput(0), {5, 6, 8, 9}, {2, 2});
}

TEST_F(SliceTest, MinusOneTakesTheRest) {
  ASSERT_OK(Run(Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}), {0, 1}, {-1, -1}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {2, 3, 5, 6}, {2, 2});
}

TEST_F(SliceTest, ThreeDimensionsAndInt64Index) {
  Tensor x(DT_DOUBLE, {2, 3, 4});
  for (int i = 0; i < 24; ++i) x.data<double>()[i] = i;
  ASSERT_OK(MakeOp(NodeDefBuilder("s", "Slice").Attr("T", DT_DOUBLE).Attr("Index", DT_INT64)));
  AddInput(x);
  AddInput(Tensor::FromVector<int64_t>({1, 1, 2}, {3}));
  AddInput(Tensor::FromVector<int64_t>({1, 2, 2}, {3}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<double>(GetOutput(0), {18, 19, 22, 23}, {1, 2, 2});
}

TEST_F(SliceTest, WholeTensorSharesTheBufferAndStringsCopy) {
  Tensor x = Tensor::FromVector<float>({1, 2}, {2});
  ASSERT_OK(Run(x, {0}, {2}));
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(x));
  inputs_.clear();
  ASSERT_OK(Run(Tensor::FromVector<std::string>({"a", "b", "c"}, {3}), {1}, {2}));
  ExpectTensorEqual<std::string>(GetOutput(0), {"b", "c"}, {2});
}

TEST_F(SliceTest, Errors) {
  EXPECT_STATUS(Run(Tensor(DT_FLOAT, {2, 3}), {0}, {1}), kInvalidArgument,
                "Expected begin and size arguments to be 1-D tensors of size 2");
  inputs_.clear();
  EXPECT_STATUS(Run(Tensor(DT_FLOAT, {2, 3}), {1, 2}, {1, 2}), kInvalidArgument,
                "Expected begin[1] in [0, 3] and size[1] in [0, 1]");
}

}  // namespace
}  // namespace tensorgrid
