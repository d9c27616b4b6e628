#include "kernels/gpu/gpu_kernel_testutil.h"

#include <cmath>
#include <iostream>

#include "core/framework/device_context.h"
#include "core/framework/device_factory.h"
#include "core/platform/status.h"
#include "devices/gpu/gpu_device.h"

namespace tensorgrid {
namespace gpu {
namespace {

constexpr char kTask[] = "/job:localhost/replica:0/task:0";

template <typename T>
::testing::AssertionResult Compare(const Tensor& a, const Tensor& b, double tolerance) {
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    const T x = a.data<T>()[i], y = b.data<T>()[i];
    if constexpr (std::is_floating_point<T>::value) {
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y) continue;  // equal infinities too (their difference is NaN)
      const double scale = std::max({1.0, std::fabs(double(x)), std::fabs(double(y))});
      if (std::fabs(double(x) - double(y)) <= tolerance * scale) continue;
    } else {
      if (x == y) continue;
    }
    return ::testing::AssertionFailure() << "element " << i << ": CPU " << +x << ", GPU " << +y
                                         << " (shape " << a.shape().DebugString() << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

::testing::AssertionResult TensorsMatch(const Tensor& a, const Tensor& b, double tolerance) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return ::testing::AssertionFailure()
           << "CPU " << a.DebugString() << " vs GPU " << b.DebugString();
  }
  switch (a.dtype()) {
    case DT_FLOAT: return Compare<float>(a, b, tolerance);
    case DT_DOUBLE: return Compare<double>(a, b, tolerance);
    case DT_INT32: return Compare<int32_t>(a, b, tolerance);
    case DT_INT64: return Compare<int64_t>(a, b, tolerance);
    case DT_BOOL: return Compare<bool>(a, b, tolerance);
    default:
      return ::testing::AssertionFailure() << "no comparison for " << DataTypeString(a.dtype());
  }
}

void GpuKernelTest::SetUp() {
  if (VisibleGpuCount() == 0) {
    std::cout << "skipped: no GPU: CUDA sees no device on this machine\n";
    GTEST_SKIP() << "no GPU: CUDA sees no device on this machine";
  }
  cpu_ = NewCpuDevice(std::string(kTask) + "/device:CPU:0", 2);
  auto factories = DeviceFactories();
  ASSERT_TRUE(factories.count(DEVICE_GPU)) << "no GPU device factory is linked in";
  ConfigProto config;
  (*config.mutable_device_count())[DEVICE_GPU] = 1;
  std::vector<std::unique_ptr<Device>> devices;
  ASSERT_OK(factories[DEVICE_GPU](config, kTask, &devices));
  ASSERT_FALSE(devices.empty());
  gpu_ = std::move(devices[0]);
}

KernelRun GpuKernelTest::Run(Device* device, const NodeDefBuilder& builder,
                             std::vector<TensorValue> inputs) {
  KernelRun run;
  NodeDef node = builder.def();
  const OpDef* op = OpRegistry::Global()->Find(node.op());
  if (op == nullptr) {
    run.status = errors::NotFound("op '", node.op(), "' is not registered");
    return run;
  }
  if (node.input_size() == 0) {
    for (size_t i = 0; i < inputs.size(); ++i) node.add_input("input" + std::to_string(i));
  }
  run.status = ValidateNodeDef(*op, &node);
  if (!run.status.ok()) return run;
  absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
      KernelRegistry::Global()->CreateKernel(device, node, *op);
  if (!kernel.ok()) {
    run.status = kernel.status();
    return run;
  }
  Allocator* device_memory = device->GetAllocator(DEVICE_MEMORY);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorValue& v = inputs[i];
    if (v.ref != nullptr) {
      if (IsRefType((*kernel)->input_type(i))) continue;
      absl::MutexLock lock(&v.ref->mu);  // a non-ref slot sees the value
      v.tensor = v.ref->tensor;
      v.ref = nullptr;
      continue;
    }
    absl::StatusOr<Tensor> placed =
        EnsureMemory(v.tensor, (*kernel)->input_memory_type(i), device_memory);
    if (!placed.ok()) {
      run.status = placed.status();
      return run;
    }
    v.tensor = *std::move(placed);
  }
  OpKernelContext::Params params;
  params.device = device;
  params.kernel = kernel->get();
  params.inputs = inputs.data();
  CallFrame frame;
  CancellationManager cancellation;
  params.call_frame = &frame;
  params.cancellation = &cancellation;
  OpKernelContext ctx(params);
  run.status = (*kernel)->Compute(ctx);
  absl::Status sync = device->Sync();
  if (run.status.ok()) run.status = sync;
  if (!run.status.ok()) return run;
  for (const TensorValue& out : ctx.outputs()) {
    if (!out.tensor.IsInitialized()) {
      run.outputs.emplace_back();
      continue;
    }
    absl::StatusOr<Tensor> host = EnsureMemory(out.tensor, HOST_MEMORY, device_memory);
    if (!host.ok()) {
      run.status = host.status();
      return run;
    }
    run.outputs.push_back(*std::move(host));
  }
  return run;
}

KernelRun GpuKernelTest::Run(Device* device, const NodeDefBuilder& node,
                             const std::vector<Tensor>& inputs) {
  std::vector<TensorValue> values;
  for (const Tensor& t : inputs) values.push_back(TensorValue{t, nullptr});
  return Run(device, node, std::move(values));
}

void GpuKernelTest::ExpectSameOutputs(const NodeDefBuilder& node, const std::vector<Tensor>& inputs,
                                      double tolerance) {
  std::string shapes;
  for (const Tensor& t : inputs) shapes += t.shape().DebugString() + " ";
  SCOPED_TRACE(node.def().op() + " on inputs of shapes " + shapes);
  KernelRun on_cpu = Run(cpu(), node, inputs);
  KernelRun on_gpu = Run(gpu(), node, inputs);
  ASSERT_EQ(on_cpu.status.code(), on_gpu.status.code())
      << "CPU: " << on_cpu.status << "\nGPU: " << on_gpu.status;
  if (!on_cpu.status.ok()) {
    EXPECT_EQ(on_cpu.status.message(), on_gpu.status.message());
    return;
  }
  ASSERT_EQ(on_cpu.outputs.size(), on_gpu.outputs.size());
  for (size_t i = 0; i < on_cpu.outputs.size(); ++i) {
    EXPECT_TRUE(TensorsMatch(on_cpu.outputs[i], on_gpu.outputs[i], tolerance)) << "output " << i;
  }
}

std::shared_ptr<Var> GpuKernelTest::MakeVar(Device* device, const Tensor& value,
                                            const std::string& name) {
  auto var = std::make_shared<Var>(value.dtype(), name);
  absl::StatusOr<Tensor> placed =
      EnsureMemory(value, DEVICE_MEMORY, device->GetAllocator(DEVICE_MEMORY));
  EXPECT_TRUE(placed.ok()) << placed.status();
  absl::MutexLock lock(&var->mu);
  // A host variable gets its own buffer, so that updating it leaves `value` as is.
  var->tensor = placed->OnHost() ? placed->DeepCopy() : *placed;
  var->initialized = true;
  return var;
}

Tensor GpuKernelTest::MakeResourceVar(Device* device, const Tensor& value,
                                      const std::string& name) {
  std::shared_ptr<Var> made = MakeVar(device, value, name);
  absl::StatusOr<std::shared_ptr<Var>> var =
      device->resource_manager()->LookupOrCreate<Var>("", name, [&] { return made; });
  EXPECT_TRUE(var.ok()) << var.status();
  ResourceHandle h;
  h.name = name;
  h.device = device->name();
  h.type_name = "Var";
  return Tensor::Scalar<ResourceHandle>(h);
}

Tensor GpuKernelTest::VarValue(const std::shared_ptr<Var>& var) {
  Tensor t;
  {
    absl::MutexLock lock(&var->mu);
    t = var->tensor;
  }
  absl::StatusOr<Tensor> host = EnsureMemory(t, HOST_MEMORY, gpu()->GetAllocator(DEVICE_MEMORY));
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *host : Tensor();
}

Tensor GpuKernelTest::ResourceVarValue(Device* device, const std::string& name) {
  absl::StatusOr<std::shared_ptr<Var>> var = device->resource_manager()->Lookup<Var>("", name);
  EXPECT_TRUE(var.ok()) << var.status();
  return var.ok() ? VarValue(*var) : Tensor();
}

Tensor Int32Vector(absl::Span<const int64_t> values) {
  Tensor t(DT_INT32, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  return t;
}

}  // namespace gpu
}  // namespace tensorgrid
