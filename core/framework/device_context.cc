#include "core/framework/device_context.h"

#include "core/platform/status.h"

namespace tensorgrid {

absl::StatusOr<Tensor> EnsureMemory(const Tensor& t, MemoryType type, Allocator* device_allocator) {
  if (!t.IsInitialized() || DataTypeIsObject(t.dtype())) return t;
  if (type == HOST_MEMORY || device_allocator == nullptr) {
    if (t.OnHost()) return t;
    TG_ASSIGN_OR_RETURN(Tensor host, Tensor::Allocate(t.dtype(), t.shape()));
    TG_RETURN_IF_ERROR(t.allocator()->device_context()->CopyDeviceTensorToCPU(t, &host));
    return host;
  }
  if (t.allocator() == device_allocator) return t;
  // Another device's memory goes through the host (one copy each way).
  TG_ASSIGN_OR_RETURN(Tensor host, EnsureMemory(t, HOST_MEMORY, nullptr));
  TG_ASSIGN_OR_RETURN(Tensor dev, Tensor::Allocate(device_allocator, t.dtype(), t.shape()));
  TG_RETURN_IF_ERROR(device_allocator->device_context()->CopyCPUTensorToDevice(host, &dev));
  return dev;
}

}  // namespace tensorgrid
