#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class RangeTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(T start, T limit, T delta) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("r", "Range").Attr("Tidx", DataTypeToEnum<T>::value)));
    AddInput(Tensor::Scalar<T>(start));
    AddInput(Tensor::Scalar<T>(limit));
    AddInput(Tensor::Scalar<T>(delta));
    return RunOp();
  }
};

TEST_F(RangeTest, Int32UpAndDown) {
  ASSERT_OK(Run<int32_t>(0, 5, 2));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 2, 4}, {3});
  inputs_.clear();
  ASSERT_OK(Run<int32_t>(3, -1, -1));
  ExpectTensorEqual<int32_t>(GetOutput(0), {3, 2, 1, 0}, {4});
}

TEST_F(RangeTest, EmptyAndInt64AndFloat) {
  ASSERT_OK(Run<int64_t>(4, 4, 1));
  EXPECT_EQ(GetOutput(0).shape(), TensorShape({0}));
  inputs_.clear();
  ASSERT_OK(Run<float>(0.5f, 2.f, 0.5f));
  ExpectTensorEqual<float>(GetOutput(0), {0.5f, 1.f, 1.5f}, {3});
}

TEST_F(RangeTest, BadArguments) {
  EXPECT_STATUS(Run<int32_t>(0, 5, 0), kInvalidArgument, "Requires delta != 0");
  inputs_.clear();
  EXPECT_STATUS(Run<int32_t>(5, 0, 1), kInvalidArgument,
                "Requires start <= limit when delta > 0: 5/0");
  inputs_.clear();
  EXPECT_STATUS(Run<int64_t>(0, 5, -1), kInvalidArgument,
                "Requires start >= limit when delta < 0: 0/5");
  inputs_.clear();
  ASSERT_OK(MakeOp(NodeDefBuilder("r", "Range")));
  AddInput(Tensor::FromVector<int32_t>({0, 1}, {2}));
  AddInput(Tensor::Scalar<int32_t>(3));
  AddInput(Tensor::Scalar<int32_t>(1));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "start must be a scalar, not shape [2]");
}

}  // namespace
}  // namespace tensorgrid
