#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class FloorModTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(Tensor x, Tensor y) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("m", "FloorMod").Attr("T", DataTypeToEnum<T>::value)));
    AddInput(std::move(x));
    AddInput(std::move(y));
    return RunOp();
  }
};

TEST_F(FloorModTest, ResultTakesTheSignOfTheDivisor) {
  ASSERT_OK(Run<int32_t>(Tensor::FromVector<int32_t>({7, -7, 7, -7, 6}, {5}),
                         Tensor::FromVector<int32_t>({3, 3, -3, -3, 3}, {5})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 2, -2, -1, 0}, {5});
  inputs_.clear();
  ASSERT_OK(Run<double>(Tensor::FromVector<double>({5.5, -5.5}, {2}),
                        Tensor::FromVector<double>({2, 2}, {2})));
  ExpectTensorNear<double>(GetOutput(0), {1.5, 0.5}, {2}, 1e-12);
}

TEST_F(FloorModTest, BroadcastsLikeOtherBinaryOps) {
  // Normalizing axes: (axes + rank) mod rank, or axes mod rank directly.
  ASSERT_OK(
      Run<int64_t>(Tensor::FromVector<int64_t>({-1, 0, 2, -3}, {4}), Tensor::Scalar<int64_t>(3)));
  ExpectTensorEqual<int64_t>(GetOutput(0), {2, 0, 2, 0}, {4});
}

TEST_F(FloorModTest, MinusOneDivisorDoesNotTrap) {
  ASSERT_OK(Run<int32_t>(Tensor::FromVector<int32_t>({-2147483647 - 1, 5}, {2}),
                         Tensor::FromVector<int32_t>({-1, -1}, {2})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 0}, {2});
}

TEST_F(FloorModTest, IntegerZeroDivisorIsAnError) {
  EXPECT_STATUS(Run<int32_t>(Tensor::FromVector<int32_t>({1, 2}, {2}),
                             Tensor::FromVector<int32_t>({1, 0}, {2})),
                kInvalidArgument, "Integer division by zero");
}

}  // namespace
}  // namespace tensorgrid
