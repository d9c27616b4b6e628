// Allocator: where a tensor's bytes live when they are not in ordinary host
// memory (a GPU's memory, pinned host memory). A Tensor made without an
// allocator uses the host heap (with its large-block cache); one made with an
// allocator returns its bytes to it. Kernels never allocate directly: they
// ask OpKernelContext, which asks the device for the allocator of the
// output's memory type (MemoryType below). Thread-safe.
#ifndef TENSORGRID_CORE_FRAMEWORK_ALLOCATOR_H_
#define TENSORGRID_CORE_FRAMEWORK_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace tensorgrid {

class DeviceContext;

// Where a kernel wants an argument: in its device's own memory, or in host
// memory (shapes, axes, scalars that steer the kernel; strings; resource
// handles). On a CPU device both are host memory. TensorFlow's names.
enum MemoryType { DEVICE_MEMORY = 0, HOST_MEMORY = 1 };

struct AllocatorStats {
  int64_t num_allocs = 0;     // allocations so far
  int64_t bytes_in_use = 0;   // now
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = 0;    // 0: none
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // "GPU_0_bfc"-style name for messages ("cuda_async_0", "fake_gpu_0").
  virtual std::string Name() const = 0;
  // `bytes` (> 0) aligned to at least 64 bytes, or nullptr when the memory
  // is exhausted (or the limit reached). Never throws, never aborts.
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Deallocate(void* ptr, size_t bytes) = 0;
  // Whether code on the host may read and write this memory directly
  // (pinned host memory: yes; device memory: no).
  virtual bool OnHost() const = 0;
  // For device memory: the context that copies in and out of it.
  virtual DeviceContext* device_context() const { return nullptr; }
  virtual AllocatorStats GetStats() const { return {}; }
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_ALLOCATOR_H_
