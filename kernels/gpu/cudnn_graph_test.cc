// cuDNN graph plans for the convolutions tensorgrid runs, built for a GPU
// that is not here: from device properties in cuDNN's JSON form, so this runs
// on every machine with the toolkit, GPU or not. Whether the plans compute
// the right thing is gpu_conv_ops_test's (on a GPU, against the CPU kernels).
#include "kernels/gpu/cudnn_graph.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace gpu {
namespace cudnn {
namespace {

using conv::ConvPass;

// An sm_90 GPU of the H100 SXM's kind (132 SMs, 228 KiB of shared memory a
// block may opt into, 50 MiB of L2). Written here by hand from NVIDIA's
// published figures, not read from a device: which plan the heuristics rank
// first may differ on a real one; that plans build is what is tested.
constexpr char kSm90[] = R"json({
  "deviceName": "sm_90 (tensorgrid test)", "deviceVer": 900, "driverVer": 13000,
  "cudaDeviceId": 0, "pciDeviceId": 0, "totalGlobalMem": 85031714816,
  "maxGridSize": [2147483647, 65535, 65535], "maxBlockSize": [1024, 1024, 64],
  "regsPerBlock": 65536, "multiProcessorCount": 132, "warpSize": 32,
  "maxSharedMemoryPerBlock": 49152, "maxSharedMemoryPerBlockOptin": 232448,
  "reservedSharedMemoryPerBlock": 1024, "maxRegistersPerSM": 65536, "maxCtasPerSM": 32,
  "maxThreadsPerBlock": 1024, "maxThreadsPerSM": 2048, "isTccDriver": 0,
  "supportCoopLaunch": 1, "smClockRateKHz": 1980000, "memClockRateKHz": 2619000,
  "l2CacheSize": 52428800})json";

// A stride-1 or stride-s convolution with SAME-like symmetric padding.
ConvProblem Problem(ConvPass pass, bool nhwc, int64_t n, int64_t c, int64_t hw, int64_t k,
                    int64_t window, int64_t stride = 1, int64_t groups = 1, int64_t dilation = 1) {
  ConvProblem p;
  p.pass = pass;
  p.nhwc = nhwc;
  p.n = n;
  p.c = c;
  p.k = k;
  p.groups = groups;
  p.h = p.w = hw;
  p.r = p.s = window;
  p.stride_h = p.stride_w = stride;
  p.dilation_h = p.dilation_w = dilation;
  const int64_t reach = dilation * (window - 1);
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = reach / 2;
  p.out_h = p.out_w = (hw + 2 * (reach / 2) - reach - 1) / stride + 1;
  return p;
}

class CudnnGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Descriptor> device = DevicePropertiesFromJson(kSm90);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
  }
  Descriptor device_;
};

TEST_F(CudnnGraphTest, EveryPassLayoutAndShapeOfMobileNetHasFp32Plans) {
  const struct {
    const char* name;
    ConvProblem (*make)(ConvPass, bool);
  } shapes[] = {
      {"3x3 stride 1", [](ConvPass p, bool f) { return Problem(p, f, 32, 64, 28, 64, 3); }},
      {"3x3 stride 2", [](ConvPass p, bool f) { return Problem(p, f, 32, 32, 56, 64, 3, 2); }},
      {"1x1", [](ConvPass p, bool f) { return Problem(p, f, 32, 144, 28, 32, 1); }},
      {"depthwise 3x3",
       [](ConvPass p, bool f) { return Problem(p, f, 32, 144, 56, 144, 3, 1, 144); }},
      {"grouped, dilated",
       [](ConvPass p, bool f) { return Problem(p, f, 4, 16, 15, 8, 3, 1, 2, 2); }},
      {"first layer, 1 channel",
       [](ConvPass p, bool f) { return Problem(p, f, 64, 1, 28, 32, 3, 1); }},
  };
  ConvPlanOptions options;
  options.max_plans = 4;
  for (const auto& shape : shapes) {
    for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData, ConvPass::kBackwardFilter}) {
      for (bool nhwc : {true, false}) {
        const ConvProblem problem = shape.make(pass, nhwc);
        SCOPED_TRACE(absl::StrCat(shape.name, ": ", problem.ToString()));
        absl::StatusOr<std::vector<std::unique_ptr<ConvPlan>>> plans =
            ConvPlans(PlanTarget{nullptr, &device_}, problem, options);
        ASSERT_TRUE(plans.ok()) << plans.status();
        ASSERT_FALSE(plans->empty());
        EXPECT_LE(plans->size(), 4u);
        for (const auto& plan : *plans) {
          EXPECT_FALSE(plan->tensor_cores()) << plan->ToString();
          EXPECT_LE(static_cast<size_t>(plan->workspace_bytes()), options.workspace_limit);
          EXPECT_GE(plan->engine(), 0);
        }
      }
    }
  }
}

// TensorFlow's SAME padding with an odd total (stride 2 on an even size)
// and EXPLICIT padding put more after than before: plans take that as it is.
TEST_F(CudnnGraphTest, AsymmetricPaddingHasPlans) {
  for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData, ConvPass::kBackwardFilter}) {
    for (bool nhwc : {true, false}) {
      ConvProblem problem = Problem(pass, nhwc, 32, 32, 56, 64, 3, 2);
      problem.pad_top = problem.pad_left = 0;  // SAME: 0 before, 1 after
      problem.out_h = problem.out_w = 28;
      SCOPED_TRACE(problem.ToString());
      ASSERT_OK_AND_ASSIGN(auto plans,
                           ConvPlans(PlanTarget{nullptr, &device_}, problem, ConvPlanOptions()));
      EXPECT_FALSE(plans.empty());
      problem = Problem(pass, nhwc, 2, 3, 6, 4, 3);  // EXPLICIT 0/2 rows, 1/0 cols, 3x2 window
      problem.s = 2;
      problem.w = 5;
      problem.pad_top = 0;
      problem.pad_bottom = 2;
      problem.pad_left = 1;
      problem.pad_right = 0;
      problem.out_h = 6 + 2 - 3 + 1;
      problem.out_w = 5 + 1 - 2 + 1;
      SCOPED_TRACE(problem.ToString());
      ASSERT_OK_AND_ASSIGN(plans,
                           ConvPlans(PlanTarget{nullptr, &device_}, problem, ConvPlanOptions()));
      EXPECT_FALSE(plans.empty());
    }
  }
}

TEST_F(CudnnGraphTest, Tf32PlansOnlyWhenAllowed) {
  const ConvProblem problem = Problem(ConvPass::kForward, true, 32, 64, 28, 64, 3);
  ConvPlanOptions options;
  options.max_plans = 64;
  ASSERT_OK_AND_ASSIGN(auto fp32, ConvPlans(PlanTarget{nullptr, &device_}, problem, options));
  for (const auto& plan : fp32) EXPECT_FALSE(plan->tensor_cores()) << plan->ToString();
  options.allow_tf32 = true;
  ASSERT_OK_AND_ASSIGN(auto tf32, ConvPlans(PlanTarget{nullptr, &device_}, problem, options));
  bool any = false;
  for (const auto& plan : tf32) any |= plan->tensor_cores();
  EXPECT_TRUE(any) << "no TF32 tensor-core plan for a 3x3 64->64 convolution on sm_90";
  EXPECT_GT(tf32.size(), fp32.size());
}

TEST_F(CudnnGraphTest, WorkspaceLimitAndPlanCountAreHonoured) {
  const ConvProblem problem = Problem(ConvPass::kBackwardFilter, true, 32, 64, 28, 64, 3);
  ConvPlanOptions options;
  options.workspace_limit = 0;
  ASSERT_OK_AND_ASSIGN(auto plans, ConvPlans(PlanTarget{nullptr, &device_}, problem, options));
  ASSERT_FALSE(plans.empty());
  for (const auto& plan : plans) EXPECT_EQ(plan->workspace_bytes(), 0) << plan->ToString();
  options.workspace_limit = size_t{1} << 30;
  options.max_plans = 1;
  ASSERT_OK_AND_ASSIGN(plans, ConvPlans(PlanTarget{nullptr, &device_}, problem, options));
  EXPECT_EQ(plans.size(), 1u);
}

TEST_F(CudnnGraphTest, AnInconsistentProblemIsRejectedByName) {
  ConvProblem problem = Problem(ConvPass::kForward, true, 2, 8, 10, 4, 3);
  problem.out_h += 1;  // not what a 3x3 window with padding 1 gives
  absl::StatusOr<std::vector<std::unique_ptr<ConvPlan>>> plans =
      ConvPlans(PlanTarget{nullptr, &device_}, problem, ConvPlanOptions());
  ASSERT_FALSE(plans.ok());
  EXPECT_EQ(plans.status().code(), absl::StatusCode::kInvalidArgument) << plans.status();
  EXPECT_NE(plans.status().message().find("cuDNN rejects the convolution forward NHWC 2x8x10x10"),
            std::string::npos)
      << plans.status();
}

TEST_F(CudnnGraphTest, ATargetIsAHandleOrProperties) {
  const ConvProblem problem = Problem(ConvPass::kForward, true, 2, 8, 10, 4, 3);
  absl::StatusOr<std::vector<std::unique_ptr<ConvPlan>>> plans =
      ConvPlans(PlanTarget{}, problem, ConvPlanOptions());
  ASSERT_FALSE(plans.ok());
  EXPECT_EQ(plans.status().code(), absl::StatusCode::kInvalidArgument) << plans.status();
}

TEST(CudnnDevicePropertiesTest, IncompleteJsonSaysWhatIsMissing) {
  absl::StatusOr<Descriptor> device = DevicePropertiesFromJson("{}");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(device.status().message().find("maxGridSize"), std::string::npos) << device.status();
}

}  // namespace
}  // namespace cudnn
}  // namespace gpu
}  // namespace tensorgrid
