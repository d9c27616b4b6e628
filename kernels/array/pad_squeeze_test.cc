// Pad against a direct loop on random shapes and paddings; Squeeze.
#include <random>
#include <string>
#include <vector>

#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

class PadTest : public OpsTestBase {
 protected:
  absl::Status RunPad(const Tensor& input, const Tensor& paddings) {
    TG_RETURN_IF_ERROR(MakeOp(
        NodeDefBuilder("pad", "Pad").Attr("T", input.dtype()).Attr("Tpaddings", paddings.dtype())));
    inputs_.clear();
    AddInput(input);
    AddInput(paddings);
    return RunOp();
  }
  std::mt19937 rng_{11};
};

// out[i] = in[i - before] inside, 0 outside, by walking the output's indices.
std::vector<float> ReferencePad(const Tensor& in, const std::vector<int64_t>& pads,
                                const std::vector<int64_t>& out_dims) {
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  std::vector<float> out(total, 0.f);
  const int rank = in.dims();
  for (int64_t o = 0; o < total; ++o) {
    int64_t rem = o, src = 0, stride = 1;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = rem % out_dims[d] - pads[2 * d];
      rem /= out_dims[d];
      if (i < 0 || i >= in.dim_size(d)) inside = false;
      src += i * stride;
      stride *= in.dim_size(d);
    }
    if (inside) out[o] = in.data<float>()[src];
  }
  return out;
}

TEST_F(PadTest, MatchesAReferenceOnRandomShapes) {
  for (int trial = 0; trial < 30; ++trial) {
    const int rank = 1 + trial % 4;
    std::vector<int64_t> dims, pads, out_dims;
    for (int d = 0; d < rank; ++d) {
      dims.push_back(std::uniform_int_distribution<int>(trial == 7 ? 0 : 1, 6)(rng_));
      pads.push_back(std::uniform_int_distribution<int>(0, 3)(rng_));
      pads.push_back(std::uniform_int_distribution<int>(0, 3)(rng_));
      out_dims.push_back(dims.back() + pads[2 * d] + pads[2 * d + 1]);
    }
    Tensor in(DT_FLOAT, TensorShape(dims));
    for (int64_t i = 0; i < in.NumElements(); ++i) in.data<float>()[i] = 1.f + i;
    Tensor p = trial % 2 ? Tensor::FromVector<int64_t>(pads, {rank, 2})
                         : Tensor::FromVector<int32_t>(
                               std::vector<int32_t>(pads.begin(), pads.end()), {rank, 2});
    ASSERT_OK(RunPad(in, p));
    ExpectTensorEqual<float>(GetOutput(0), ReferencePad(in, pads, out_dims), TensorShape(out_dims));
  }
}

TEST_F(PadTest, LargeInputUsesThePool) {
  Tensor in(DT_FLOAT, {8, 32, 32, 16});
  for (int64_t i = 0; i < in.NumElements(); ++i) in.data<float>()[i] = i % 97;
  std::vector<int64_t> pads = {0, 0, 1, 1, 0, 1, 0, 0};
  ASSERT_OK(RunPad(in, Tensor::FromVector<int32_t>({0, 0, 1, 1, 0, 1, 0, 0}, {4, 2})));
  ExpectTensorEqual<float>(GetOutput(0), ReferencePad(in, pads, {8, 34, 33, 16}), {8, 34, 33, 16});
}

TEST_F(PadTest, OtherDtypes) {
  ASSERT_OK(RunPad(Tensor::FromVector<int32_t>({5, 6}, {2}),
                   Tensor::FromVector<int32_t>({1, 2}, {1, 2})));
  ExpectTensorEqual<int32_t>(GetOutput(0), {0, 5, 6, 0, 0}, {5});
  Tensor s(DT_STRING, {1});
  s.data<std::string>()[0] = "a";
  ASSERT_OK(RunPad(s, Tensor::FromVector<int32_t>({1, 0}, {1, 2})));
  EXPECT_EQ(GetOutput(0).data<std::string>()[0], "");
  EXPECT_EQ(GetOutput(0).data<std::string>()[1], "a");
}

TEST_F(PadTest, BadPaddings) {
  Tensor in(DT_FLOAT, {2, 3});
  EXPECT_STATUS(RunPad(in, Tensor::FromVector<int32_t>({0, 0, 1, 1, 1, 1}, {3, 2})),
                kInvalidArgument, "paddings must be [rank of input, 2] = [2,2], got [3,2]");
  EXPECT_STATUS(RunPad(in, Tensor::FromVector<int32_t>({0, 0, 1, 1}, {4})), kInvalidArgument,
                "paddings must be [rank of input, 2]");
  EXPECT_STATUS(RunPad(in, Tensor::FromVector<int32_t>({0, -1, 1, 1}, {2, 2})), kInvalidArgument,
                "paddings must be non-negative, got 0 and -1 for dimension 0");
}

class SqueezeTest : public OpsTestBase {
 protected:
  absl::Status RunSqueeze(const Tensor& input, std::vector<int64_t> dims) {
    TG_RETURN_IF_ERROR(MakeOp(
        NodeDefBuilder("sq", "Squeeze").Attr("T", input.dtype()).Attr("squeeze_dims", dims)));
    inputs_.clear();
    AddInput(input);
    return RunOp();
  }
};

TEST_F(SqueezeTest, AllOrNamedDimsSharingTheBuffer) {
  Tensor in = Tensor::FromVector<float>({1, 2, 3}, {1, 3, 1, 1});
  ASSERT_OK(RunSqueeze(in, {}));
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3}, {3});
  EXPECT_EQ(GetOutput(0).raw_data(), in.raw_data());
  ASSERT_OK(RunSqueeze(in, {-1, 0}));
  ExpectTensorEqual<float>(GetOutput(0), {1, 2, 3}, {3, 1});
}

TEST_F(SqueezeTest, NamedDimMustBeOne) {
  Tensor in(DT_FLOAT, {1, 3});
  EXPECT_STATUS(RunSqueeze(in, {1}), kInvalidArgument,
                "cannot squeeze dimension 1: it has size 3, not 1");
  EXPECT_STATUS(RunSqueeze(in, {2}), kInvalidArgument,
                "squeeze_dims entry 2 is out of range [-2, 2)");
}

}  // namespace
}  // namespace tensorgrid
