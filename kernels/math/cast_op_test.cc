#include <cmath>
#include <limits>

#include "core/platform/status.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class CastTest : public OpsTestBase {
 protected:
  template <typename Src, typename Dst>
  absl::Status Run(Tensor x, bool truncate = false) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("c", "Cast")
                                  .Attr("SrcT", DataTypeToEnum<Src>::value)
                                  .Attr("DstT", DataTypeToEnum<Dst>::value)
                                  .Attr("Truncate", truncate)));
    AddInput(std::move(x));
    return RunOp();
  }
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST_F(CastTest, FloatToIntTruncatesTowardZero) {
  ASSERT_OK((Run<float, int32_t>(Tensor::FromVector<float>({2.9f, -1.7f, 0.5f, -0.5f, 7}, {5}))));
  ExpectTensorEqual<int32_t>(GetOutput(0), {2, -1, 0, 0, 7}, {5});
}

TEST_F(CastTest, FloatToIntSaturatesAndMapsNaNToZero) {
  const int32_t max = std::numeric_limits<int32_t>::max(),
                min = std::numeric_limits<int32_t>::min();
  ASSERT_OK(
      (Run<float, int32_t>(Tensor::FromVector<float>({1e10f, -1e10f, kNaN, kInf, -kInf}, {5}))));
  ExpectTensorEqual<int32_t>(GetOutput(0), {max, min, 0, max, min}, {5});
  inputs_.clear();
  ASSERT_OK((Run<double, int64_t>(Tensor::FromVector<double>({1e19, -1e19, -2.5}, {3}))));
  ExpectTensorEqual<int64_t>(
      GetOutput(0), {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -2},
      {3});
  inputs_.clear();
  ASSERT_OK((Run<float, uint8_t>(Tensor::FromVector<float>({-3.7f, 300.5f, 254.9f}, {3}))));
  ExpectTensorEqual<uint8_t>(GetOutput(0), {0, 255, 254}, {3});
}

TEST_F(CastTest, IntegersWrap) {
  ASSERT_OK(
      (Run<int64_t, int32_t>(Tensor::FromVector<int64_t>({(int64_t{1} << 32) + 5, -1}, {2}))));
  ExpectTensorEqual<int32_t>(GetOutput(0), {5, -1}, {2});
  inputs_.clear();
  ASSERT_OK((Run<int32_t, uint8_t>(Tensor::FromVector<int32_t>({-1, 256, 200}, {3}))));
  ExpectTensorEqual<uint8_t>(GetOutput(0), {255, 0, 200}, {3});
}

TEST_F(CastTest, IntegersToFloatingPoint) {
  ASSERT_OK((Run<int32_t, float>(Tensor::FromVector<int32_t>({-3, 16777217}, {2}))));
  ExpectTensorEqual<float>(GetOutput(0), {-3, 16777216}, {2});  // nearest float
  inputs_.clear();
  ASSERT_OK((Run<int64_t, double>(Tensor::FromVector<int64_t>({int64_t{1} << 40}, {1}))));
  ExpectTensorEqual<double>(GetOutput(0), {1099511627776.0}, {1});
  inputs_.clear();
  ASSERT_OK((Run<uint8_t, half>(Tensor::FromVector<uint8_t>({255}, {1}))));
  ExpectTensorEqual<half>(GetOutput(0), {half(255.0f)}, {1});
}

TEST_F(CastTest, ToAndFromBool) {
  ASSERT_OK((Run<float, bool>(Tensor::FromVector<float>({0, -0.0f, -0.5f, kNaN, 3}, {5}))));
  ExpectTensorEqual<bool>(GetOutput(0), {false, false, true, true, true}, {5});
  inputs_.clear();
  ASSERT_OK((Run<bool, float>(Tensor::FromVector<bool>({true, false}, {2}))));
  ExpectTensorEqual<float>(GetOutput(0), {1, 0}, {2});
  inputs_.clear();
  ASSERT_OK((Run<int64_t, bool>(Tensor::FromVector<int64_t>({0, int64_t{1} << 40}, {2}))));
  ExpectTensorEqual<bool>(GetOutput(0), {false, true}, {2});
}

TEST_F(CastTest, FloatToDoubleAndBack) {
  ASSERT_OK((Run<float, double>(Tensor::FromVector<float>({0.1f}, {1}))));
  ExpectTensorEqual<double>(GetOutput(0), {static_cast<double>(0.1f)}, {1});
  inputs_.clear();
  // 1 + 0.75 ulp rounds up to the next float; truncated it stays 1.
  const double x = 1 + 0.75 * std::ldexp(1.0, -23);
  ASSERT_OK((Run<double, float>(Tensor::FromVector<double>({x, -x}, {2}))));
  ExpectTensorEqual<float>(GetOutput(0), {1 + std::ldexp(1.0f, -23), -1 - std::ldexp(1.0f, -23)},
                           {2});
  inputs_.clear();
  ASSERT_OK((Run<double, float>(Tensor::FromVector<double>({x, -x}, {2}), /*truncate=*/true)));
  ExpectTensorEqual<float>(GetOutput(0), {1, -1}, {2});
}

TEST_F(CastTest, FloatToHalfRoundsToNearestEvenOrTruncates) {
  const float tie = 1 + std::ldexp(1.0f, -11);        // halfway between two halves
  const float above = 1 + 3 * std::ldexp(1.0f, -12);  // 0.75 of a half's ulp
  const half up(1 + std::ldexp(1.0f, -10));
  ASSERT_OK((Run<float, half>(Tensor::FromVector<float>({tie, above, -above, 70000}, {4}))));
  ExpectTensorEqual<half>(GetOutput(0), {half(1.0f), up, -up, half(kInf)}, {4});
  inputs_.clear();
  ASSERT_OK((Run<float, half>(Tensor::FromVector<float>({above, -above}, {2}), /*truncate=*/true)));
  ExpectTensorEqual<half>(GetOutput(0), {half(1.0f), half(-1.0f)}, {2});
  inputs_.clear();
  ASSERT_OK((Run<half, float>(Tensor::FromVector<half>({up, half(-2.5f)}, {2}))));
  ExpectTensorEqual<float>(GetOutput(0), {1 + std::ldexp(1.0f, -10), -2.5f}, {2});
}

TEST_F(CastTest, FloatToBfloat16RoundsOrTruncates) {
  const float above = 1 + 3 * std::ldexp(1.0f, -9);  // 0.75 of a bfloat16's ulp
  ASSERT_OK((Run<float, bfloat16>(Tensor::FromVector<float>({above}, {1}))));
  ExpectTensorEqual<bfloat16>(GetOutput(0), {bfloat16(1 + std::ldexp(1.0f, -7))}, {1});
  inputs_.clear();
  ASSERT_OK(
      (Run<float, bfloat16>(Tensor::FromVector<float>({above, kNaN}, {2}), /*truncate=*/true)));
  EXPECT_EQ(static_cast<float>(GetOutput(0).data<bfloat16>()[0]), 1.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(GetOutput(0).data<bfloat16>()[1])));
}

TEST_F(CastTest, LargeCastRunsOnThePool) {
  Tensor x(DT_INT32, {40000});
  std::vector<float> want(40000);
  for (int i = 0; i < 40000; ++i) {
    x.data<int32_t>()[i] = i - 20000;
    want[i] = static_cast<float>(i - 20000);
  }
  ASSERT_OK((Run<int32_t, float>(x)));
  ExpectTensorEqual<float>(GetOutput(0), want, {40000});
}

TEST_F(CastTest, SameTypeSharesTheBuffer) {
  ASSERT_OK((Run<float, float>(Tensor::FromVector<float>({1.5f}, {1}))));
  EXPECT_TRUE(GetOutput(0).SharesBufferWith(inputs_[0].tensor));
}

TEST_F(CastTest, UnsupportedPair) {
  EXPECT_STATUS((Run<float, std::string>(Tensor::FromVector<float>({1}, {1}))), kUnimplemented,
                "Cast float to string is not supported");
}

}  // namespace
}  // namespace tensorgrid
