#include "devices/fake_gpu/fake_gpu_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#define EIGEN_USE_THREADS
#include "absl/strings/str_cat.h"
#include "core/framework/device_context.h"
#include "core/framework/device_factory.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {

FakeGpuCopies& FakeGpuCopyCounts() {
  static auto* counts = new FakeGpuCopies;
  return *counts;
}

void ResetFakeGpuCopyCounts() {
  FakeGpuCopyCounts().host_to_device = 0;
  FakeGpuCopyCounts().device_to_host = 0;
  FakeGpuCopyCounts().in_device = 0;
}

namespace {

absl::Status CheckSameSize(const Tensor& src, const Tensor& dst) {
  if (src.dtype() != dst.dtype() || src.TotalBytes() != dst.TotalBytes()) {
    return errors::Internal("copy of ", src.DebugString(0), " into ", dst.DebugString(0));
  }
  return absl::OkStatus();
}

class FakeGpuContext final : public DeviceContext {
 public:
  absl::Status CopyCPUTensorToDevice(const Tensor& src, Tensor* dst) override {
    if (!src.OnHost() || dst->OnHost()) return errors::Internal("fake GPU: not host to device");
    ++FakeGpuCopyCounts().host_to_device;
    return Copy(src, dst);
  }
  absl::Status CopyDeviceTensorToCPU(const Tensor& src, Tensor* dst) override {
    if (src.OnHost() || !dst->OnHost()) return errors::Internal("fake GPU: not device to host");
    ++FakeGpuCopyCounts().device_to_host;
    return Copy(src, dst);
  }
  absl::Status CopyTensorInSameDevice(const Tensor& src, Tensor* dst) override {
    ++FakeGpuCopyCounts().in_device;
    return Copy(src, dst);
  }
  absl::Status Sync() override { return absl::OkStatus(); }

 private:
  static absl::Status Copy(const Tensor& src, Tensor* dst) {
    TG_RETURN_IF_ERROR(CheckSameSize(src, *dst));
    if (src.TotalBytes() > 0) std::memcpy(dst->raw_data(), src.raw_data(), src.TotalBytes());
    return absl::OkStatus();
  }
};

class FakeGpuAllocator final : public Allocator {
 public:
  FakeGpuAllocator(std::string name, int64_t limit, DeviceContext* context)
      : name_(std::move(name)), limit_(limit), context_(context) {}
  std::string Name() const override { return name_; }
  void* Allocate(size_t bytes) override {
    int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
    if (now > limit_) {
      in_use_.fetch_sub(static_cast<int64_t>(bytes));
      return nullptr;
    }
    ++allocs_;
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return std::aligned_alloc(64, bytes);
  }
  void Deallocate(void* ptr, size_t bytes) override {
    std::free(ptr);
    in_use_.fetch_sub(static_cast<int64_t>(bytes));
  }
  bool OnHost() const override { return false; }
  DeviceContext* device_context() const override { return context_; }
  AllocatorStats GetStats() const override {
    AllocatorStats s;
    s.num_allocs = allocs_.load();
    s.bytes_in_use = in_use_.load();
    s.peak_bytes_in_use = peak_.load();
    s.bytes_limit = limit_;
    return s;
  }

 private:
  const std::string name_;
  const int64_t limit_;
  DeviceContext* const context_;
  std::atomic<int64_t> in_use_{0}, peak_{0}, allocs_{0};
};

class FakeGpuDevice final : public Device {
 public:
  FakeGpuDevice(const std::string& name, int64_t limit)
      : Device(name, DEVICE_GPU, NewDeviceIncarnation()),
        pool_(1),
        eigen_device_(pool_.AsEigenThreadPool(), 1),
        allocator_(absl::StrCat("fake_gpu_", name), limit, &context_),
        limit_(limit) {}
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const override { return eigen_device_; }
  Allocator* GetAllocator(MemoryType type) override {
    return type == DEVICE_MEMORY ? &allocator_ : nullptr;
  }
  DeviceContext* device_context() override { return &context_; }
  DeviceInfo info() const override {
    DeviceInfo i = Device::info();
    i.memory_limit = limit_;
    i.description = "fake GPU (host memory, for tests)";
    return i;
  }

 private:
  ThreadPool pool_;
  Eigen::ThreadPoolDevice eigen_device_;
  FakeGpuContext context_;
  FakeGpuAllocator allocator_;
  const int64_t limit_;
};

}  // namespace

std::unique_ptr<Device> NewFakeGpuDevice(const std::string& name, int64_t memory_limit) {
  return std::make_unique<FakeGpuDevice>(name, memory_limit);
}

void RegisterFakeGpuFactory(int count) {
  auto count_for = [count](const ConfigProto& config) -> absl::StatusOr<int> {
    auto it = config.device_count().find(DEVICE_GPU);
    return it == config.device_count().end() ? count : std::max(0, std::min(count, it->second));
  };
  RegisterDeviceFactory(
      DEVICE_GPU,
      [count_for](const ConfigProto& config, const std::string& task_prefix,
                  std::vector<std::unique_ptr<Device>>* devices) {
        const int n = *count_for(config);
        for (int i = 0; i < n; ++i) {
          devices->push_back(NewFakeGpuDevice(absl::StrCat(task_prefix, "/device:GPU:", i)));
        }
        return absl::OkStatus();
      },
      count_for);
}

void RegisterFakeGpuKernel(const std::string& op, std::initializer_list<const char*> host_memory) {
  std::vector<std::string> args(host_memory.begin(), host_memory.end());
  TG_CHECK(KernelRegistry::Global()->RegisterCopies(op, DEVICE_CPU, DEVICE_GPU, args) > 0);
}

}  // namespace tensorgrid
