// The GPU code paths that need no GPU, on the fake GPU: placement prefers
// the GPU where a kernel exists and falls back to the CPU where none does;
// tensors cross between host and device memory exactly where a kernel wants
// them elsewhere (counted copies); shapes stay in host memory; fetches come
// back as host tensors; device memory is limited with a clear error; the
// session lists the device with its memory.
#include "devices/fake_gpu/fake_gpu_device.h"

#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "core/framework/device_context.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

class FakeGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RegisterFakeGpuFactory(1);
    // CPU kernels run on the fake GPU's memory (host memory in disguise).
    RegisterFakeGpuKernel("Const", {});
    RegisterFakeGpuKernel("MatMul", {});
    RegisterFakeGpuKernel("AddV2", {});
    RegisterFakeGpuKernel("Fill", {"dims", "value"});
  }
  void SetUp() override { ResetFakeGpuCopyCounts(); }

  static std::string DeviceOf(const RunMetadata& meta, const std::string& node) {
    for (const auto& dev : meta.step_stats().dev_stats()) {
      for (const auto& n : dev.node_stats()) {
        if (n.node_name() == node) return dev.device();
      }
    }
    return "";
  }
};

TEST_F(FakeGpuTest, MatMulOnTheGpuCopiesItsInputsInAndItsFetchOut) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root.WithOpName("a").WithDevice("/device:CPU:0"), {{1.f, 2.f}, {3.f, 4.f}});
  auto b = ops::Const(root.WithOpName("b").WithDevice("/device:CPU:0"), {{5.f, 6.f}, {7.f, 8.f}});
  auto m = ops::MatMul(root.WithOpName("m").WithDevice("/device:GPU:0"), a, b);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({m}, &out));
  ASSERT_TRUE(out[0].OnHost());
  EXPECT_EQ(out[0].SummarizeValue(4), "19 22 43 50");
  EXPECT_EQ(FakeGpuCopyCounts().host_to_device, 2);  // a and b, into the GPU
  EXPECT_EQ(FakeGpuCopyCounts().device_to_host, 1);  // the fetch, out of it
}

TEST_F(FakeGpuTest, DeviceResultsStayOnTheDeviceBetweenGpuKernels) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root.WithOpName("a").WithDevice("/device:CPU:0"), {{1.f, 0.f}, {0.f, 1.f}});
  Scope gpu = root.WithDevice("/device:GPU:0");
  auto m1 = ops::MatMul(gpu.WithOpName("m1"), a, a);
  auto m2 = ops::MatMul(gpu.WithOpName("m2"), m1, m1);
  auto sum = ops::AddV2(gpu.WithOpName("sum"), m2, m1);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({sum}, &out));
  EXPECT_EQ(out[0].SummarizeValue(4), "2 0 0 2");
  // `a` enters the GPU once per consumer edge that crosses (one _Recv, two
  // uses by m1), and nothing else moves until the fetch.
  EXPECT_LE(FakeGpuCopyCounts().host_to_device, 2);
  EXPECT_EQ(FakeGpuCopyCounts().device_to_host, 1);
}

TEST_F(FakeGpuTest, ShapesStayInHostMemory) {
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/device:GPU:0");
  // Fill's dims and value are HostMemory arguments: no copy into the GPU.
  auto filled = ops::Fill(gpu.WithOpName("fill"), {2, 3}, 1.5f);
  auto shape = ops::Shape(gpu.WithOpName("shape"), filled);
  auto reshaped = ops::Reshape(gpu.WithOpName("reshape"), filled, shape);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({reshaped, shape}, &out));
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ(out[1].SummarizeValue(2), "2 3");
  EXPECT_EQ(FakeGpuCopyCounts().host_to_device, 0);
  EXPECT_EQ(FakeGpuCopyCounts().device_to_host, 1);  // the fetched data; the shape was on host
}

TEST_F(FakeGpuTest, PlacementPrefersTheGpuAndFallsBackWhereNoKernelExists) {
  Scope root = Scope::NewRootScope();
  auto a = ops::Const(root.WithOpName("a"), {{1.f, 2.f}, {3.f, 4.f}});
  auto m = ops::MatMul(root.WithOpName("m"), a, a);
  auto c = ops::Cast(root.WithOpName("c"), m, DT_INT32);  // no GPU kernel registered here
  SessionOptions options;
  options.config.set_allow_soft_placement(true);
  ClientSession session(root, options);
  std::vector<Tensor> out;
  RunOptions run_options;
  run_options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata meta;
  ASSERT_OK(session.Run(run_options, {}, {c}, {}, &out, &meta));
  EXPECT_EQ(out[0].SummarizeValue(4), "7 10 15 22");
  EXPECT_EQ(DeviceOf(meta, "m"), "/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_EQ(DeviceOf(meta, "c"), "/job:localhost/replica:0/task:0/device:CPU:0");
  // The GPU node's stats name its allocator and how much of it is in use.
  for (const auto& dev : meta.step_stats().dev_stats()) {
    for (const auto& n : dev.node_stats()) {
      if (n.node_name() != "m") continue;
      ASSERT_EQ(n.memory_size(), 1);
      EXPECT_EQ(n.memory(0).allocator_name().rfind("fake_gpu_", 0), 0u);
      EXPECT_GE(n.memory(0).allocator_bytes_in_use(), 16);  // m's 2x2 floats at least
      EXPECT_EQ(n.output(0).tensor_description().allocation_description().allocator_name(),
                n.memory(0).allocator_name());
    }
  }
}

TEST_F(FakeGpuTest, RunningOutOfDeviceMemoryIsResourceExhaustedNamingNodeAndDevice) {
  Scope root = Scope::NewRootScope();
  // 2^28 floats = 1 GiB, the fake GPU's whole memory; the product needs as much again.
  auto big = ops::Fill(root.WithOpName("big").WithDevice("/device:GPU:0"), {16384, 16384}, 1.f);
  auto m = ops::MatMul(root.WithOpName("m").WithDevice("/device:GPU:0"), big, big);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({m}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("fake_gpu_"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'m'"), std::string::npos) << s;
}

TEST_F(FakeGpuTest, ListDevicesReportsTheGpuWithItsMemory) {
  Scope root = Scope::NewRootScope();
  ClientSession session(root);
  auto devices = session.session()->ListDevices();
  ASSERT_OK(devices.status());
  bool found = false;
  for (const DeviceInfo& d : *devices) {
    if (d.type != "GPU") continue;
    found = true;
    EXPECT_EQ(d.name, "/job:localhost/replica:0/task:0/device:GPU:0");
    EXPECT_EQ(d.memory_limit, int64_t{1} << 30);
  }
  EXPECT_TRUE(found);
}

TEST_F(FakeGpuTest, EnsureMemoryMovesOnlyWhatIsElsewhere) {
  auto gpu = NewFakeGpuDevice("/job:t/replica:0/task:0/device:GPU:0");
  Allocator* dev = gpu->GetAllocator(DEVICE_MEMORY);
  Tensor host = Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}));
  auto on_device = EnsureMemory(host, DEVICE_MEMORY, dev);
  ASSERT_OK(on_device.status());
  EXPECT_FALSE(on_device->OnHost());
  EXPECT_EQ(on_device->allocator(), dev);
  auto again = EnsureMemory(*on_device, DEVICE_MEMORY, dev);
  ASSERT_OK(again.status());
  EXPECT_TRUE(again->SharesBufferWith(*on_device));  // already there: no copy
  auto back = EnsureMemory(*on_device, HOST_MEMORY, dev);
  ASSERT_OK(back.status());
  EXPECT_TRUE(back->OnHost());
  EXPECT_EQ(back->SummarizeValue(3), "1 2 3");
  EXPECT_EQ(FakeGpuCopyCounts().host_to_device, 1);
  EXPECT_EQ(FakeGpuCopyCounts().device_to_host, 1);
  // Strings never leave the host.
  Tensor s(DT_STRING, TensorShape({1}));
  auto kept = EnsureMemory(s, DEVICE_MEMORY, dev);
  ASSERT_OK(kept.status());
  EXPECT_TRUE(kept->OnHost());
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

TEST_F(FakeGpuTest, AVariableStaysOnTheDeviceItsFirstStepPlacedItOn) {
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/device:GPU:0");
  auto v = ops::Variable(gpu.WithOpName("v"), {2, 2}, DT_FLOAT);
  // The initializer is colocated with the variable, as training::Variable
  // does, and has no GPU kernel here: the first step (initialization) puts
  // the whole group, variable included, on the CPU. A later step without the
  // initializer could run the variable on the GPU — a different, never
  // initialized variable — unless the variable stays where it was put.
  Scope colocated = gpu.ColocateWith(v.operation);
  auto init_value = ops::RandomUniform(colocated.WithOpName("init_value"), {2, 2}, DT_FLOAT);
  auto init = ops::Assign(colocated.WithOpName("init"), v, init_value);
  auto m = ops::MatMul(gpu.WithOpName("m"), v, v);
  SessionOptions options;
  options.config.set_allow_soft_placement(true);
  ClientSession session(root, options);
  std::vector<Tensor> out;
  RunOptions trace;
  trace.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata meta;
  ASSERT_OK(session.Run(trace, {}, {}, {init.operation}, nullptr, &meta));
  EXPECT_EQ(DeviceOf(meta, "v"), "/job:localhost/replica:0/task:0/device:CPU:0");
  ASSERT_OK(session.Run(trace, {}, {m}, {}, &out, &meta));
  EXPECT_EQ(DeviceOf(meta, "v"), "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(DeviceOf(meta, "m"), "/job:localhost/replica:0/task:0/device:GPU:0");
}

}  // namespace
}  // namespace tensorgrid
