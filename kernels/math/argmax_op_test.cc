#include <limits>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class ArgMaxTest : public OpsTestBase {
 protected:
  template <typename T>
  absl::Status Run(Tensor input, int64_t dimension, DataType output_type = DT_INT64) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("a", "ArgMax")
                                  .Attr("T", DataTypeToEnum<T>::value)
                                  .Attr("Tidx", DT_INT64)
                                  .Attr("output_type", output_type)));
    AddInput(std::move(input));
    AddInput(Tensor::Scalar<int64_t>(dimension));
    return RunOp();
  }
};

TEST_F(ArgMaxTest, AlongEachDimension) {
  const Tensor x = Tensor::FromVector<float>({1, 9, 3, 7, 2, 8}, {2, 3});
  ASSERT_OK(Run<float>(x, 1));
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 2}, {2});
  inputs_.clear();
  ASSERT_OK(Run<float>(x, 0));
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 0, 1}, {3});
  inputs_.clear();
  ASSERT_OK(Run<float>(x, -1));
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 2}, {2});
}

TEST_F(ArgMaxTest, DefaultsToInt32DimensionAndInt64Output) {
  ASSERT_OK(MakeOp(NodeDefBuilder("a", "ArgMax").Attr("T", DT_INT32)));
  AddInput(Tensor::FromVector<int32_t>({4, 5, 5, 1}, {4}));
  AddInput(Tensor::Scalar<int32_t>(0));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1}, {});  // ties: the first
}

TEST_F(ArgMaxTest, Int32Output) {
  ASSERT_OK(Run<int64_t>(Tensor::FromVector<int64_t>({-3, -1, -2}, {3}), 0, DT_INT32));
  ExpectTensorEqual<int32_t>(GetOutput(0), {1}, {});
}

TEST_F(ArgMaxTest, NaNWins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ASSERT_OK(Run<double>(Tensor::FromVector<double>({1, nan, 5, nan, 2, 3}, {2, 3}), 1));
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 0}, {2});
}

TEST_F(ArgMaxTest, MiddleDimensionWithWideInner) {
  // [2, 3, 300]: the inner 300 columns span two chunks.
  Tensor x(DT_FLOAT, {2, 3, 300});
  std::vector<int64_t> want(600);
  for (int o = 0; o < 2; ++o)
    for (int c = 0; c < 300; ++c) {
      const int winner = (o + c) % 3;
      want[o * 300 + c] = winner;
      for (int r = 0; r < 3; ++r) x.data<float>()[(o * 3 + r) * 300 + c] = r == winner ? 1.0f : -c;
    }
  ASSERT_OK(Run<float>(x, 1));
  ExpectTensorEqual<int64_t>(GetOutput(0), want, {2, 300});
}

TEST_F(ArgMaxTest, LargeRowsRunOnThePool) {
  Tensor x(DT_INT32, {500, 100});
  std::vector<int64_t> want(500);
  for (int r = 0; r < 500; ++r) {
    want[r] = (r * 7) % 100;
    for (int c = 0; c < 100; ++c) x.data<int32_t>()[r * 100 + c] = c == want[r] ? 1000 : c;
  }
  ASSERT_OK(Run<int32_t>(x, 1));
  ExpectTensorEqual<int64_t>(GetOutput(0), want, {500});
}

TEST_F(ArgMaxTest, DimensionOutOfRange) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {2, 3}), 2), kInvalidArgument,
                "Expected dimension in the range [-2, 2), but got 2");
  inputs_.clear();
  EXPECT_STATUS(Run<float>(Tensor::Scalar<float>(1), 0), kInvalidArgument,
                "Expected dimension in the range [0, 0), but got 0");
}

TEST_F(ArgMaxTest, EmptyDimension) {
  EXPECT_STATUS(Run<float>(Tensor(DT_FLOAT, {3, 0}), 1), kInvalidArgument,
                "Reduction axis 1 is empty in shape [3,0]");
}

TEST_F(ArgMaxTest, DimensionMustBeScalar) {
  ASSERT_OK(MakeOp(NodeDefBuilder("a", "ArgMax").Attr("T", DT_FLOAT)));
  AddInput(Tensor(DT_FLOAT, {2, 3}));
  AddInput(Tensor::FromVector<int32_t>({0}, {1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "dimension must be a scalar, got shape [1]");
}

}  // namespace
}  // namespace tensorgrid
