#include "devices/gpu/gpu_device.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#define EIGEN_USE_THREADS
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "core/framework/device_context.h"
#include "core/framework/device_factory.h"
#include "core/platform/status.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {

absl::Status CudaStatus(cudaError_t err, absl::string_view what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return errors::Internal("CUDA error ", cudaGetErrorName(err), " (", cudaGetErrorString(err),
                          ") in ", what);
}

absl::Status CublasStatus(cublasStatus_t err, absl::string_view what) {
  if (err == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return errors::Internal("cuBLAS error ", cublasGetStatusName(err), " (",
                          cublasGetStatusString(err), ") in ", what);
}

absl::Status GpuDevice::LaunchStatus(absl::string_view kernel) {
  return CudaStatus(cudaGetLastError(), absl::StrCat("the launch of ", kernel));
}

bool GpuTf32Allowed() {
  static const bool allowed = [] {
    const char* v = std::getenv("TG_GPU_ALLOW_TF32");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return allowed;
}

int VisibleGpuCount() {
  int count = 0;
  // No driver (cudaErrorInsufficientDriver) or no device: no GPUs. The
  // count is left untouched on error, so it stays 0.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

namespace {

void UpdatePeak(std::atomic<int64_t>& peak, int64_t now) {
  int64_t p = peak.load(std::memory_order_relaxed);
  while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}

// Device memory from the stream-ordered pool, within a byte limit.
class GpuAllocator final : public Allocator {
 public:
  GpuAllocator(std::string name, int ordinal, cudaStream_t stream, int64_t limit,
               DeviceContext* context)
      : name_(std::move(name)),
        ordinal_(ordinal),
        stream_(stream),
        limit_(limit),
        context_(context) {}
  std::string Name() const override { return name_; }
  void* Allocate(size_t bytes) override {
    const int64_t n = static_cast<int64_t>(bytes);
    const int64_t now = in_use_.fetch_add(n, std::memory_order_relaxed) + n;
    if (now > limit_) {
      in_use_.fetch_sub(n, std::memory_order_relaxed);
      return nullptr;
    }
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, stream_) != cudaSuccess) {
      cudaGetLastError();  // out of memory is not sticky: clear it
      in_use_.fetch_sub(n, std::memory_order_relaxed);
      return nullptr;
    }
    allocs_.fetch_add(1, std::memory_order_relaxed);
    UpdatePeak(peak_, now);
    UpdatePeak(largest_, n);
    return p;
  }
  void Deallocate(void* ptr, size_t bytes) override {
    cudaSetDevice(ordinal_);
    cudaFreeAsync(ptr, stream_);  // after every kernel already queued that reads it
    in_use_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  }
  bool OnHost() const override { return false; }
  DeviceContext* device_context() const override { return context_; }
  AllocatorStats GetStats() const override {
    AllocatorStats s;
    s.num_allocs = allocs_.load();
    s.bytes_in_use = in_use_.load();
    s.peak_bytes_in_use = peak_.load();
    s.largest_alloc_size = largest_.load();
    s.bytes_limit = limit_;
    return s;
  }

 private:
  const std::string name_;
  const int ordinal_;
  const cudaStream_t stream_;
  const int64_t limit_;
  DeviceContext* const context_;
  std::atomic<int64_t> in_use_{0}, peak_{0}, allocs_{0}, largest_{0};
};

// Pinned host memory, cached by size class: cudaHostAlloc costs about a
// millisecond. Blocks are given back only when the device goes (a block may
// be released inside a stream callback, where CUDA may not be called).
class PinnedAllocator final : public Allocator {
 public:
  explicit PinnedAllocator(std::string name) : name_(std::move(name)) {}
  ~PinnedAllocator() override {
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) cudaFreeHost(p);
    }
  }
  std::string Name() const override { return name_; }
  void* Allocate(size_t bytes) override {
    const size_t size = SizeClass(bytes);
    {
      absl::MutexLock lock(&mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        return p;
      }
    }
    void* p = nullptr;
    if (cudaHostAlloc(&p, size, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void Deallocate(void* ptr, size_t bytes) override {
    absl::MutexLock lock(&mu_);
    free_[SizeClass(bytes)].push_back(ptr);
  }
  bool OnHost() const override { return true; }

 private:
  static size_t SizeClass(size_t bytes) {
    size_t top = size_t{1} << (63 - __builtin_clzll(std::max<size_t>(bytes, 64)));
    size_t step = std::max<size_t>(top / 8, 64);
    return (bytes + step - 1) / step * step;
  }
  const std::string name_;
  absl::Mutex mu_;
  std::map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
};

absl::Status CheckCopy(const Tensor& src, const Tensor& dst) {
  if (src.dtype() != dst.dtype() || src.TotalBytes() != dst.TotalBytes()) {
    return errors::Internal("copy between tensors of different sizes: ", src.DebugString(0),
                            " and ", dst.DebugString(0));
  }
  return absl::OkStatus();
}

class GpuContext final : public DeviceContext {
 public:
  GpuContext(int ordinal, cudaStream_t stream, const std::string& device)
      : ordinal_(ordinal), stream_(stream), device_(device) {}
  void set_pinned(const Allocator* pinned) { pinned_ = pinned; }

  absl::Status CopyCPUTensorToDevice(const Tensor& src, Tensor* dst) override {
    TG_RETURN_IF_ERROR(CheckCopy(src, *dst));
    if (src.TotalBytes() == 0) return absl::OkStatus();
    cudaSetDevice(ordinal_);
    TG_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(dst->raw_data(), src.raw_data(), src.TotalBytes(),
                                                  cudaMemcpyHostToDevice, stream_),
                                  absl::StrCat("a host-to-device copy to ", device_)));
    // From pageable memory the call returns once the bytes are staged; from
    // pinned memory the DMA reads them later, so `src` stays referenced
    // until the stream reaches this point.
    if (src.allocator() == pinned_) {
      TG_RETURN_IF_ERROR(
          CudaStatus(cudaLaunchHostFunc(
                         stream_, [](void* t) { delete static_cast<Tensor*>(t); }, new Tensor(src)),
                     "keeping a copy's source alive"));
    }
    return absl::OkStatus();
  }
  absl::Status CopyDeviceTensorToCPU(const Tensor& src, Tensor* dst) override {
    TG_RETURN_IF_ERROR(CheckCopy(src, *dst));
    if (src.TotalBytes() == 0) return absl::OkStatus();
    cudaSetDevice(ordinal_);
    TG_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(dst->raw_data(), src.raw_data(), src.TotalBytes(),
                                                  cudaMemcpyDeviceToHost, stream_),
                                  absl::StrCat("a device-to-host copy from ", device_)));
    return Sync();
  }
  absl::Status CopyTensorInSameDevice(const Tensor& src, Tensor* dst) override {
    TG_RETURN_IF_ERROR(CheckCopy(src, *dst));
    if (src.TotalBytes() == 0) return absl::OkStatus();
    cudaSetDevice(ordinal_);
    return CudaStatus(cudaMemcpyAsync(dst->raw_data(), src.raw_data(), src.TotalBytes(),
                                      cudaMemcpyDeviceToDevice, stream_),
                      absl::StrCat("a copy inside ", device_));
  }
  absl::Status Sync() override {
    cudaSetDevice(ordinal_);
    return CudaStatus(cudaStreamSynchronize(stream_), absl::StrCat("work queued on ", device_));
  }

 private:
  const int ordinal_;
  const cudaStream_t stream_;
  const std::string device_;
  const Allocator* pinned_ = nullptr;
};

struct GpuOptions {
  double memory_fraction = 0;
  bool allow_growth = false;
};

class GpuDeviceImpl final : public GpuDevice {
 public:
  static absl::StatusOr<std::unique_ptr<GpuDeviceImpl>> Create(const std::string& name, int ordinal,
                                                               const GpuOptions& options) {
    std::unique_ptr<GpuDeviceImpl> d(new GpuDeviceImpl(name, ordinal));
    TG_RETURN_IF_ERROR(d->Init(options));
    return d;
  }
  ~GpuDeviceImpl() override {
    cudaSetDevice(ordinal_);
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    // Resources (variables) hold device memory: free it while the stream lives.
    resource_manager()->Clear();
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  const Eigen::ThreadPoolDevice& eigen_cpu_device() const override { return eigen_device_; }
  Allocator* GetAllocator(MemoryType type) override {
    return type == DEVICE_MEMORY ? allocator_.get() : nullptr;
  }
  DeviceContext* device_context() override { return context_.get(); }
  absl::Status Sync() override {
    absl::Status s = context_->Sync();
    return s.ok() ? s : WithContext(s, "the step's GPU work");
  }
  DeviceInfo info() const override {
    DeviceInfo i = Device::info();
    i.memory_limit = limit_;
    i.description = description_;
    return i;
  }
  Allocator* pinned_allocator() override { return pinned_.get(); }

 private:
  GpuDeviceImpl(const std::string& name, int ordinal)
      : GpuDevice(name, NewDeviceIncarnation(), ordinal),
        pool_(1),
        eigen_device_(pool_.AsEigenThreadPool(), 1) {}

  absl::Status Init(const GpuOptions& options) {
    const std::string what = absl::StrCat("setting up ", name(), " (CUDA device ", ordinal_, ")");
    TG_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ordinal_), what));
    cudaDeviceProp prop;
    TG_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, ordinal_), what));
    multiprocessors_ = prop.multiProcessorCount;
    description_ = absl::StrCat(prop.name, ", compute capability ", prop.major, ".", prop.minor,
                                ", ", prop.multiProcessorCount, " multiprocessors");
    size_t free_bytes = 0, total_bytes = 0;
    TG_RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), what));
    if (options.memory_fraction > 0) {
      limit_ = static_cast<int64_t>(options.memory_fraction * static_cast<double>(total_bytes));
    } else {
      // All that is free, less a little for CUDA's own use (cuBLAS workspaces, NCCL).
      limit_ = static_cast<int64_t>(free_bytes) -
               std::min<int64_t>(static_cast<int64_t>(free_bytes) / 20, int64_t{512} << 20);
    }
    TG_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), what));
    // Memory freed back to the pool stays there (no allow_growth: up to the
    // limit) or goes back to the driver at each synchronization (allow_growth).
    cudaMemPool_t pool;
    TG_RETURN_IF_ERROR(CudaStatus(cudaDeviceGetDefaultMemPool(&pool, ordinal_), what));
    uint64_t threshold = options.allow_growth ? 0 : static_cast<uint64_t>(limit_);
    TG_RETURN_IF_ERROR(CudaStatus(
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), what));
    TG_RETURN_IF_ERROR(CublasStatus(cublasCreate(&cublas_), what));
    TG_RETURN_IF_ERROR(CublasStatus(cublasSetStream(cublas_, stream_), what));
    TG_RETURN_IF_ERROR(CublasStatus(
        cublasSetMathMode(cublas_,
                          GpuTf32Allowed() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
        what));
    context_ = std::make_unique<GpuContext>(ordinal_, stream_, name());
    allocator_ = std::make_unique<GpuAllocator>(absl::StrCat("GPU_", ordinal_, "_pool"), ordinal_,
                                                stream_, limit_, context_.get());
    pinned_ = std::make_unique<PinnedAllocator>(absl::StrCat("GPU_", ordinal_, "_pinned_host"));
    context_->set_pinned(pinned_.get());
    return absl::OkStatus();
  }

  ThreadPool pool_;
  Eigen::ThreadPoolDevice eigen_device_;
  std::unique_ptr<GpuContext> context_;
  std::unique_ptr<GpuAllocator> allocator_;
  std::unique_ptr<PinnedAllocator> pinned_;
  int64_t limit_ = 0;
  std::string description_;
};

// gpu_options.visible_device_list → CUDA ordinals, checked.
absl::StatusOr<std::vector<int>> VisibleOrdinals(const std::string& list, int count) {
  std::vector<int> ordinals;
  if (list.empty()) {
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
    return ordinals;
  }
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    int v;
    if (!absl::SimpleAtoi(part, &v) || v < 0 || v >= count) {
      return errors::InvalidArgument("gpu_options.visible_device_list '", list, "': '", part,
                                     "' is not a GPU ordinal here (", count, " visible GPU",
                                     count == 1 ? "" : "s", ")");
    }
    if (std::find(ordinals.begin(), ordinals.end(), v) != ordinals.end()) {
      return errors::InvalidArgument("gpu_options.visible_device_list '", list, "' names GPU ", v,
                                     " twice");
    }
    ordinals.push_back(v);
  }
  return ordinals;
}

// The CUDA ordinals of the GPUs `config` gives a task, in device order.
absl::StatusOr<std::vector<int>> GpuOrdinals(const ConfigProto& config) {
  const int count = VisibleGpuCount();
  if (count == 0) return std::vector<int>();
  TG_ASSIGN_OR_RETURN(std::vector<int> ordinals,
                      VisibleOrdinals(config.gpu_options().visible_device_list(), count));
  auto it = config.device_count().find(DEVICE_GPU);
  if (it != config.device_count().end() && it->second >= 0 &&
      it->second < static_cast<int>(ordinals.size())) {
    ordinals.resize(it->second);
  }
  return ordinals;
}

absl::StatusOr<int> CountGpuDevices(const ConfigProto& config) {
  TG_ASSIGN_OR_RETURN(std::vector<int> ordinals, GpuOrdinals(config));
  return static_cast<int>(ordinals.size());
}

absl::Status MakeGpuDevices(const ConfigProto& config, const std::string& task_prefix,
                            std::vector<std::unique_ptr<Device>>* devices) {
  const GPUOptions& gpu = config.gpu_options();
  if (gpu.per_process_gpu_memory_fraction() < 0 || gpu.per_process_gpu_memory_fraction() > 1) {
    return errors::InvalidArgument("gpu_options.per_process_gpu_memory_fraction is ",
                                   gpu.per_process_gpu_memory_fraction(),
                                   "; it must be in [0, 1] (0: all the free memory)");
  }
  TG_ASSIGN_OR_RETURN(std::vector<int> ordinals, GpuOrdinals(config));
  GpuOptions options;
  options.memory_fraction = gpu.per_process_gpu_memory_fraction();
  options.allow_growth = gpu.allow_growth();
  for (size_t k = 0; k < ordinals.size(); ++k) {
    TG_ASSIGN_OR_RETURN(auto d, GpuDeviceImpl::Create(absl::StrCat(task_prefix, "/device:GPU:", k),
                                                      ordinals[k], options));
    devices->push_back(std::move(d));
  }
  return absl::OkStatus();
}

const DeviceFactoryRegistrar registrar(DEVICE_GPU, MakeGpuDevices, CountGpuDevices);

}  // namespace

}  // namespace tensorgrid
