// The CUDA GPU device. Without a GPU (every CI machine) only the first test
// runs: the factory makes no device and reports no error. With one, the
// device's memory options, limits, copies and MatMul are checked against
// the CPU; each of those tests says "skipped: no GPU" elsewhere.
#include "devices/gpu/gpu_device.h"

#include <cstring>
#include <random>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "core/framework/device_context.h"
#include "core/framework/device_factory.h"
#include "core/platform/status_testutil.h"
#include "core/runtime/device_mgr.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

constexpr char kTask[] = "/job:localhost/replica:0/task:0";

#define SKIP_WITHOUT_GPU()                                                \
  if (VisibleGpuCount() == 0) {                                           \
    GTEST_SKIP() << "skipped: no GPU (cudaGetDeviceCount found none here)"; \
  }

absl::StatusOr<std::vector<std::unique_ptr<Device>>> MakeGpus(const ConfigProto& config) {
  std::vector<std::unique_ptr<Device>> devices;
  TG_RETURN_IF_ERROR(DeviceFactories().at(DEVICE_GPU)(config, kTask, &devices));
  return devices;
}

Tensor Random(const TensorShape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor t(DT_FLOAT, shape);
  for (float& v : t.values<float>()) v = dist(gen);
  return t;
}

TEST(GpuDeviceTest, WithoutAGpuTheFactoryMakesNoDeviceAndNoError) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "skipped: a GPU is present";
  auto mgr = DeviceMgr::ForTask(kTask, ConfigProto());
  ASSERT_OK(mgr->status());
  for (const auto& d : mgr->devices()) EXPECT_EQ(d->device_type(), DEVICE_CPU);
}

TEST(GpuDeviceTest, OneDevicePerGpuWithItsMemoryAndName) {
  SKIP_WITHOUT_GPU();
  auto gpus = MakeGpus(ConfigProto());
  ASSERT_OK(gpus.status());
  ASSERT_EQ(gpus->size(), static_cast<size_t>(VisibleGpuCount()));
  DeviceInfo info = (*gpus)[0]->info();
  EXPECT_EQ(info.name, std::string(kTask) + "/device:GPU:0");
  EXPECT_EQ(info.type, "GPU");
  EXPECT_GT(info.memory_limit, int64_t{1} << 30);
  EXPECT_NE(info.description.find("compute capability"), std::string::npos) << info.description;
  std::printf("%s: %s, %lld bytes\n", info.name.c_str(), info.description.c_str(),
              static_cast<long long>(info.memory_limit));
}

TEST(GpuDeviceTest, DeviceCountAndVisibleDeviceListChooseAndCheck) {
  SKIP_WITHOUT_GPU();
  ConfigProto none;
  (*none.mutable_device_count())["GPU"] = 0;
  auto zero = MakeGpus(none);
  ASSERT_OK(zero.status());
  EXPECT_TRUE(zero->empty());

  ConfigProto bad;
  bad.mutable_gpu_options()->set_visible_device_list("0,99");
  auto s = MakeGpus(bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("visible_device_list"), std::string::npos) << s;
  bad.mutable_gpu_options()->set_visible_device_list("0,0");
  s = MakeGpus(bad).status();
  EXPECT_NE(s.message().find("twice"), std::string::npos) << s;
  bad.mutable_gpu_options()->set_visible_device_list("");
  bad.mutable_gpu_options()->set_per_process_gpu_memory_fraction(1.5);
  s = MakeGpus(bad).status();
  EXPECT_NE(s.message().find("per_process_gpu_memory_fraction"), std::string::npos) << s;
}

TEST(GpuDeviceTest, MemoryFractionIsALimitWithStatisticsAndAClearError) {
  SKIP_WITHOUT_GPU();
  ConfigProto config;
  config.mutable_gpu_options()->set_per_process_gpu_memory_fraction(0.01);
  auto gpus = MakeGpus(config);
  ASSERT_OK(gpus.status());
  Device& gpu = *(*gpus)[0];
  Allocator* a = gpu.GetAllocator(DEVICE_MEMORY);
  const int64_t limit = a->GetStats().bytes_limit;
  EXPECT_EQ(limit, gpu.info().memory_limit);
  {
    auto half = Tensor::Allocate(a, DT_FLOAT, TensorShape({limit / 8}));
    ASSERT_OK(half.status());
    EXPECT_FALSE(half->OnHost());
    EXPECT_GE(a->GetStats().bytes_in_use, limit / 2);
    auto more = Tensor::Allocate(a, DT_FLOAT, TensorShape({limit / 4}));
    EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted) << more.status();
    EXPECT_NE(more.status().message().find("GPU_0_pool"), std::string::npos) << more.status();
  }
  EXPECT_EQ(a->GetStats().bytes_in_use, 0);
  EXPECT_GE(a->GetStats().peak_bytes_in_use, limit / 2);
  ASSERT_OK(gpu.Sync());
}

TEST(GpuDeviceTest, CopiesRoundTripAtEverySize) {
  SKIP_WITHOUT_GPU();
  auto gpus = MakeGpus(ConfigProto());
  ASSERT_OK(gpus.status());
  auto* gpu = static_cast<GpuDevice*>((*gpus)[0].get());
  DeviceContext* ctx = gpu->device_context();
  Allocator* dev = gpu->GetAllocator(DEVICE_MEMORY);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{16} << 20}) {
    for (bool pinned : {false, true}) {
      Tensor src = Random(TensorShape({n}), static_cast<uint32_t>(n));
      if (pinned) {
        auto p = Tensor::Allocate(gpu->pinned_allocator(), DT_FLOAT, src.shape());
        ASSERT_OK(p.status());
        if (n > 0) std::memcpy(p->raw_data(), src.raw_data(), src.TotalBytes());
        src = *p;
      }
      auto d1 = Tensor::Allocate(dev, DT_FLOAT, src.shape());
      auto d2 = Tensor::Allocate(dev, DT_FLOAT, src.shape());
      ASSERT_OK(d1.status());
      ASSERT_OK(d2.status());
      ASSERT_OK(ctx->CopyCPUTensorToDevice(src, &*d1));
      ASSERT_OK(ctx->CopyTensorInSameDevice(*d1, &*d2));
      Tensor back(DT_FLOAT, src.shape());
      ASSERT_OK(ctx->CopyDeviceTensorToCPU(*d2, &back));
      EXPECT_EQ(std::memcmp(back.raw_data(), src.raw_data(), src.TotalBytes()), 0)
          << n << " floats, pinned=" << pinned;
    }
  }
  Tensor wrong(DT_FLOAT, TensorShape({3}));
  auto d = Tensor::Allocate(dev, DT_FLOAT, TensorShape({4}));
  EXPECT_EQ(ctx->CopyCPUTensorToDevice(wrong, &*d).code(), absl::StatusCode::kInternal);
}

// The same graph on the GPU and on the CPU.
absl::StatusOr<Tensor> RunMatMul(const std::string& device, const Tensor& a, const Tensor& b,
                                 bool ta, bool tb, const ConfigProto& config = ConfigProto()) {
  Scope root = Scope::NewRootScope();
  auto pa = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
  auto pb = ops::Placeholder(root.WithOpName("b"), DT_FLOAT);
  auto m = ops::MatMul(root.WithOpName("m").WithDevice(device), pa, pb,
                       ops::MatMul::TransposeA(ta).TransposeB(tb));
  SessionOptions options;
  options.config = config;
  ClientSession session(root, options);
  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(session.Run({{pa, a}, {pb, b}}, {m}, &out));
  return out[0];
}

TEST(GpuDeviceTest, MatMulMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  struct Case {
    int64_t m, k, n;
    bool ta, tb;
  };
  for (Case c : {Case{1, 1, 1, false, false}, Case{3, 5, 7, false, false},
                 Case{3, 5, 7, true, false}, Case{3, 5, 7, false, true},
                 Case{3, 5, 7, true, true}, Case{128, 784, 500, false, false},
                 Case{33, 0, 9, false, false}, Case{0, 4, 4, false, false}}) {
    Tensor a = Random(c.ta ? TensorShape({c.k, c.m}) : TensorShape({c.m, c.k}), 1);
    Tensor b = Random(c.tb ? TensorShape({c.n, c.k}) : TensorShape({c.k, c.n}), 2);
    auto gpu = RunMatMul("/device:GPU:0", a, b, c.ta, c.tb);
    auto cpu = RunMatMul("/device:CPU:0", a, b, c.ta, c.tb);
    ASSERT_OK(gpu.status());
    ASSERT_OK(cpu.status());
    ASSERT_TRUE(gpu->OnHost());
    ASSERT_EQ(gpu->shape(), cpu->shape());
    for (int64_t i = 0; i < cpu->NumElements(); ++i) {
      ASSERT_NEAR(gpu->data<float>()[i], cpu->data<float>()[i], 1e-4 * (1 + c.k / 100))
          << c.m << "x" << c.k << "x" << c.n << " at " << i;
    }
  }
  auto bad = RunMatMul("/device:GPU:0", Random(TensorShape({2, 3}), 1),
                       Random(TensorShape({4, 5}), 2), false, false);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
}

TEST(GpuDeviceTest, OutOfDeviceMemoryInAStepNamesTheNodeAndTheDevice) {
  SKIP_WITHOUT_GPU();
  ConfigProto config;
  config.mutable_gpu_options()->set_per_process_gpu_memory_fraction(0.001);  // ~80 MB on an H100
  Tensor a = Random(TensorShape({4096, 4096}), 1);                          // 64 MiB
  auto r = RunMatMul("/device:GPU:0", a, a, false, false, config);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("GPU_0_pool"), std::string::npos) << r.status();
}

TEST(GpuDeviceTest, AMalformedGpuOptionFailsEveryStepWithItsName) {
  SKIP_WITHOUT_GPU();
  ConfigProto config;
  config.mutable_gpu_options()->set_visible_device_list("42");
  auto r = RunMatMul("/device:CPU:0", Random(TensorShape({1, 1}), 1),
                     Random(TensorShape({1, 1}), 2), false, false, config);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("visible_device_list"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace tensorgrid
